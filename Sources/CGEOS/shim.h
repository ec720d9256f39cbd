// The one door to GEOS's C API. Only the re-entrant (_r) functions are visible, and what
// differs between GEOS versions is wrapped here in static inline CGEOS_* helpers.
#ifndef CGEOS_SHIM_H
#define CGEOS_SHIM_H

#define GEOS_USE_ONLY_R_API
#include <geos_c.h>
#include <string.h>

/// Per-context message sink. `GEOSMessageHandler_r` receives the finished message and a user
/// pointer; the last message is copied into this caller-owned buffer, so Swift needs no C callback.
typedef struct {
    char text[512];
    int hasMessage;
} CGEOSMessageBuffer;

static void CGEOS_messageHandler(const char *fmt, void *userdata) {
    CGEOSMessageBuffer *buffer = (CGEOSMessageBuffer *)userdata;
    if (buffer == NULL || fmt == NULL) return;
    strncpy(buffer->text, fmt, sizeof(buffer->text) - 1);
    buffer->text[sizeof(buffer->text) - 1] = 0;
    buffer->hasMessage = 1;
}

/// Installs the message handler for errors and notices on `handle`, writing into `buffer`.
static inline void CGEOS_installHandlers(GEOSContextHandle_t handle, CGEOSMessageBuffer *buffer) {
    GEOSContext_setErrorMessageHandler_r(handle, CGEOS_messageHandler, buffer);
    GEOSContext_setNoticeMessageHandler_r(handle, CGEOS_messageHandler, buffer);
}

/// Prepared covers for one point. GEOS 3.12 added GEOSPreparedContainsXY_r, which skips the
/// point allocation but answers `contains`; `covers` (boundary inside) still needs a point, so
/// both versions build one here and free it before returning. Returns 0, 1 or 2 (exception).
static inline char CGEOS_preparedCoversXY(GEOSContextHandle_t handle, const GEOSPreparedGeometry *pg,
                                          double x, double y) {
    GEOSGeometry *point = GEOSGeom_createPointFromXY_r(handle, x, y);
    if (point == NULL) return 2;
    char result = GEOSPreparedCovers_r(handle, pg, point);
    GEOSGeom_destroy_r(handle, point);
    return result;
}

/// Prepared `intersects` with a point where the GEOS version has it natively (3.12+).
static inline char CGEOS_preparedIntersectsXY(GEOSContextHandle_t handle, const GEOSPreparedGeometry *pg,
                                              double x, double y) {
#if GEOS_VERSION_MAJOR > 3 || (GEOS_VERSION_MAJOR == 3 && GEOS_VERSION_MINOR >= 12)
    return GEOSPreparedIntersectsXY_r(handle, pg, x, y);
#else
    GEOSGeometry *point = GEOSGeom_createPointFromXY_r(handle, x, y);
    if (point == NULL) return 2;
    char result = GEOSPreparedIntersects_r(handle, pg, point);
    GEOSGeom_destroy_r(handle, point);
    return result;
#endif
}

/// Prepared `contains` for one point: native from GEOS 3.12, through a temporary point before.
static inline char CGEOS_preparedContainsXY(GEOSContextHandle_t handle, const GEOSPreparedGeometry *pg,
                                            double x, double y) {
#if GEOS_VERSION_MAJOR > 3 || (GEOS_VERSION_MAJOR == 3 && GEOS_VERSION_MINOR >= 12)
    return GEOSPreparedContainsXY_r(handle, pg, x, y);
#else
    GEOSGeometry *point = GEOSGeom_createPointFromXY_r(handle, x, y);
    if (point == NULL) return 2;
    char result = GEOSPreparedContains_r(handle, pg, point);
    GEOSGeom_destroy_r(handle, point);
    return result;
#endif
}

static inline const char *CGEOS_version(void) { return GEOS_CAPI_VERSION; }

#endif

// The one door to GDAL/OGR's C API, used by FenceIO only (the engine core never sees GDAL).
// Vector access (GDALOpenEx, OGR layers and features), spatial references (OSR/OCT) and the
// CPL error state; nothing else. What Swift cannot call or what differs between GDAL versions
// is wrapped here in static inline CGDAL_* helpers.
#ifndef CGDAL_SHIM_H
#define CGDAL_SHIM_H

#include <gdal_version.h>
// OGR_GeomTransformer_* (antimeridian wrapping while reprojecting) arrived in 3.1, the axis
// mapping strategy of OSR in 3.0. Debian 12 ships 3.6.
#if GDAL_VERSION_NUM < GDAL_COMPUTE_VERSION(3, 1, 0)
#error "FenceIO needs GDAL >= 3.1"
#endif

#include <cpl_conv.h>
#include <cpl_error.h>
#include <cpl_string.h>
#include <gdal.h>
#include <ogr_api.h>
#include <ogr_srs_api.h>
#include <string.h>

/// Warnings and errors GDAL reported on this thread since the last CGDAL_resetMessages, joined
/// with "; " (a driver often explains first and then fails with a summary, e.g. "At line 1,
/// character 1105: Too many nested objects and/or arrays; Failed to read GeoJSON data").
/// Caller-owned; GDAL's own printer stays silent while it is installed.
typedef struct {
    char text[1024];
    int length;
} CGDALMessages;

static void CPL_STDCALL CGDAL_collectMessage(CPLErr level, CPLErrorNum number, const char *message) {
    (void)number;
    CGDALMessages *m = (CGDALMessages *)CPLGetErrorHandlerUserData();
    if (m == NULL || message == NULL || message[0] == 0 || level < CE_Warning) return;
    int room = (int)sizeof(m->text) - 1 - m->length;
    if (m->length > 0 && room > 2) {
        memcpy(m->text + m->length, "; ", 2);
        m->length += 2;
        room -= 2;
    }
    int n = (int)strlen(message);
    if (n > room) n = room;
    if (n > 0) {
        memcpy(m->text + m->length, message, (size_t)n);
        m->length += n;
    }
    m->text[m->length] = 0;
}

/// Installs the collector on this thread's handler stack. Pair with CGDAL_popErrorHandler.
static inline void CGDAL_pushCollector(CGDALMessages *messages) {
    messages->length = 0;
    messages->text[0] = 0;
    CPLPushErrorHandlerEx(CGDAL_collectMessage, messages);
}
static inline void CGDAL_popErrorHandler(void) { CPLPopErrorHandler(); }

/// Forgets what was collected (and GDAL's last-error state).
static inline void CGDAL_resetMessages(void) {
    CPLErrorReset();
    CGDALMessages *m = (CGDALMessages *)CPLGetErrorHandlerUserData();
    if (m != NULL) {
        m->length = 0;
        m->text[0] = 0;
    }
}

/// What was collected since the last reset, or NULL when nothing was.
static inline const char *CGDAL_collectedMessages(void) {
    CGDALMessages *m = (CGDALMessages *)CPLGetErrorHandlerUserData();
    if (m != NULL) return m->length > 0 ? m->text : NULL;
    if (CPLGetLastErrorType() == CE_None) return NULL;
    return CPLGetLastErrorMsg();
}

/// OGR's "no FID" value, a macro Swift does not import.
static inline GIntBig CGDAL_nullFID(void) { return OGRNullFID; }

/// GDALOpenEx for vector data only, read-only, with errors reported. `openOptions` is a CSL list
/// (NULL for none) that GDAL copies; Swift cannot pass a `char **` where C wants CSLConstList.
static inline GDALDatasetH CGDAL_openVector(const char *source, char **openOptions) {
    return GDALOpenEx(source, GDAL_OF_VECTOR | GDAL_OF_READONLY | GDAL_OF_VERBOSE_ERROR, NULL,
                      (CSLConstList)openOptions, NULL);
}

/// A geometry transformer over `transform` that wraps geometries at the antimeridian when the
/// target CRS is geographic (WRAPDATELINE=YES). The option list is read at creation and freed
/// here. Destroy the result with OGR_GeomTransformer_Destroy.
static inline OGRGeomTransformerH CGDAL_geomTransformerWrappingDateline(OGRCoordinateTransformationH transform) {
    char **options = CSLAddString(NULL, "WRAPDATELINE=YES");
    OGRGeomTransformerH transformer = OGR_GeomTransformer_Create(transform, (CSLConstList)options);
    CSLDestroy(options);
    return transformer;
}

/// The inverse of `transform` (target to source), to check that reprojected coordinates map
/// back. OCTGetInverse (GDAL 3.3) inverts the very operation PROJ chose; before 3.3 a new
/// transformation from `target` to `source` is made, which PROJ may pick differently (another
/// datum grid), so a round trip through it can be off by that operation's accuracy.
/// Destroy the result with OCTDestroyCoordinateTransformation; NULL when PROJ cannot invert.
static inline OGRCoordinateTransformationH CGDAL_inverseTransformation(OGRCoordinateTransformationH transform,
                                                                      OGRSpatialReferenceH source,
                                                                      OGRSpatialReferenceH target) {
#if GDAL_VERSION_NUM >= GDAL_COMPUTE_VERSION(3, 3, 0)
    (void)source;
    (void)target;
    return OCTGetInverse(transform);
#else
    (void)transform;
    return OCTNewCoordinateTransformation(target, source);
#endif
}

static inline const char *CGDAL_version(void) { return GDAL_RELEASE_NAME; }

#endif

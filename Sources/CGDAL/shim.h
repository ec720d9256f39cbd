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

/// Silences GDAL's default error printer for this thread; errors are still recorded and read
/// back with CPLGetLastErrorType / CPLGetLastErrorMsg. Pair with CGDAL_popErrorHandler.
static inline void CGDAL_pushQuietErrorHandler(void) { CPLPushErrorHandler(CPLQuietErrorHandler); }
static inline void CGDAL_popErrorHandler(void) { CPLPopErrorHandler(); }

/// The error GDAL recorded on this thread since the last CPLErrorReset, or NULL when none (a
/// warning counts: drivers report skipped or damaged records as CE_Warning).
static inline const char *CGDAL_lastErrorMessage(void) {
    if (CPLGetLastErrorType() == CE_None) return NULL;
    const char *message = CPLGetLastErrorMsg();
    return (message != NULL && message[0] != 0) ? message : NULL;
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

static inline const char *CGDAL_version(void) { return GDAL_RELEASE_NAME; }

#endif

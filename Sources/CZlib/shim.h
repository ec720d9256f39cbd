// The one door to zlib, used by FenceIO only, to read gzip-compressed inputs (positions and
// GeoJSON fences) and write gzip output. zlib's init calls are macros Swift cannot call; they
// are wrapped here.
#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

#include <zlib.h>

/// inflateInit2 for gzip members only (window bits 15 + 16: a zlib or raw deflate stream is
/// not gzip and is refused by inflate's header check).
static inline int CZlib_inflateInitGzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}

/// deflateInit2 writing one gzip member (window bits 15 + 16), at `level` (zlib's 0-9).
static inline int CZlib_deflateInitGzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

#endif

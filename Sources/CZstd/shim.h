// The one door to libzstd, used by FenceIO only, to read Zstandard-compressed inputs
// (positions and GeoJSON fences) and write Zstandard output: the streaming API and its error
// names.
#ifndef CZSTD_SHIM_H
#define CZSTD_SHIM_H

#include <zstd.h>

#endif

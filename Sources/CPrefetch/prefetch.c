// The header's inline function is the whole target; SwiftPM needs one source file.
#include "prefetch.h"

// libFuzzer's entry for programs that have their own main (LLVM 13 and later). SwiftPM links
// an executable's main under the name `<Target>_main` (`--defsym main=<Target>_main`), so each
// fuzz target defines that function and hands control to libFuzzer here.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

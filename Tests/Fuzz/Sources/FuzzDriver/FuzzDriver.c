// The declaration in include/FuzzDriver.h is all; libFuzzer (-sanitize=fuzzer) defines it.

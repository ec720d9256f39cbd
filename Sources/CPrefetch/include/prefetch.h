#ifndef FENCE_PREFETCH_H
#define FENCE_PREFETCH_H

/// A hint that `address` will be read soon: the cache line is fetched without waiting for it.
/// Never faults, even for an address that is not mapped. Swift has no such intrinsic.
static inline void fence_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif

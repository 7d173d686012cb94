#ifndef LCTRACE_FAST_HASH_H
#define LCTRACE_FAST_HASH_H
// SHA-256 blocks on the CPU's SHA extensions (x86-64 SHA-NI), checked at run time: where the
// CPU (or the compiler's target) has none, lct_sha256_hw_available returns 0 and lctrace
// hashes with its portable Swift code instead.
#include <stddef.h>
#include <stdint.h>

/// SHA-256's 64 round constants (FIPS 180-4 §4.2.2).
const uint32_t *lct_sha256_round_constants(void);
/// 1 when lct_sha256_hw_blocks can run on this CPU.
int lct_sha256_hw_available(void);
/// Runs `blocks` 64-byte blocks of `data` through SHA-256's compression function, updating
/// `state` (the eight words H0…H7, in order).
void lct_sha256_hw_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif

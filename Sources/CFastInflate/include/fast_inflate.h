#ifndef LCTRACE_FAST_INFLATE_H
#define LCTRACE_FAST_INFLATE_H
// Gzip inflate through Intel's ISA-L (libisal), loaded at run time: where the library (or,
// at build time, its header) is missing, lct_isal_new returns NULL and lctrace inflates with
// zlib instead. Nothing links against libisal, so a machine without it builds and runs.
#include <stdint.h>

typedef struct lct_isal lct_isal;

/// Status of lct_isal_inflate.
enum {
    LCT_ISAL_MORE = 0,          // needs more input or more room for output
    LCT_ISAL_MEMBER_END = 1,    // a gzip member (header, data, trailer, checksum) is complete
    LCT_ISAL_ERROR = -1         // corrupt data or wrapper; lct_isal_error says what
};

/// A new inflater for one gzip member at a time, or NULL when ISA-L cannot be loaded.
lct_isal *lct_isal_new(void);
void lct_isal_free(lct_isal *inflater);
/// Starts the next gzip member.
void lct_isal_reset(lct_isal *inflater);
/// Inflates from `in` into `out`; sets how much it consumed and produced.
int lct_isal_inflate(lct_isal *inflater, const uint8_t *in, uint32_t in_len, uint32_t *consumed,
                     uint8_t *out, uint32_t out_len, uint32_t *produced);
/// What the last LCT_ISAL_ERROR was, in words.
const char *lct_isal_error(const lct_isal *inflater);
/// The version of the loaded library's API ("2.30" …), or NULL when it is not loaded.
const char *lct_isal_description(void);

#endif

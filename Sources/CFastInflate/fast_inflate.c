#include "fast_inflate.h"
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#  if __has_include(<isa-l/igzip_lib.h>) && __has_include(<dlfcn.h>)
#    define LCT_HAVE_ISAL 1
#  endif
#endif

#ifdef LCT_HAVE_ISAL
#include <dlfcn.h>
#include <pthread.h>
#include <isa-l/igzip_lib.h>

struct lct_isal {
    struct inflate_state state;
    int last_error;
};

static void (*p_init)(struct inflate_state *);
static int (*p_inflate)(struct inflate_state *);
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void) {
    static const char *names[] = {"libisal.so.2", "libisal.so", "libisal.2.dylib", "libisal.dylib", NULL};
    for (int i = 0; names[i]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) continue;
        p_init = (void (*)(struct inflate_state *))dlsym(lib, "isal_inflate_init");
        p_inflate = (int (*)(struct inflate_state *))dlsym(lib, "isal_inflate");
        if (p_init && p_inflate) return;
        p_init = NULL;
        p_inflate = NULL;
        dlclose(lib);
    }
}

lct_isal *lct_isal_new(void) {
    if (getenv("LCTRACE_NO_ISAL")) return NULL;
    pthread_once(&loaded, load);
    if (!p_init) return NULL;
    lct_isal *x = malloc(sizeof *x);
    if (!x) return NULL;
    lct_isal_reset(x);
    return x;
}

void lct_isal_free(lct_isal *x) { free(x); }

void lct_isal_reset(lct_isal *x) {
    p_init(&x->state);
    x->state.crc_flag = ISAL_GZIP;  // parse the gzip header and verify the trailer's CRC and size
    x->last_error = 0;
}

int lct_isal_inflate(lct_isal *x, const uint8_t *in, uint32_t in_len, uint32_t *consumed,
                     uint8_t *out, uint32_t out_len, uint32_t *produced) {
    x->state.next_in = (uint8_t *)in;
    x->state.avail_in = in_len;
    x->state.next_out = out;
    x->state.avail_out = out_len;
    int rc = p_inflate(&x->state);
    *consumed = in_len - x->state.avail_in;
    *produced = out_len - x->state.avail_out;
    if (rc < 0) { x->last_error = rc; return LCT_ISAL_ERROR; }
    if (x->state.block_state == ISAL_BLOCK_FINISH) return LCT_ISAL_MEMBER_END;
    return LCT_ISAL_MORE;
}

const char *lct_isal_error(const lct_isal *x) {
    switch (x->last_error) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid lookback distance";
    case ISAL_INVALID_WRAPPER: return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD: return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    default: return "inflate error";
    }
}

const char *lct_isal_description(void) {
    pthread_once(&loaded, load);
    return p_init ? "ISA-L igzip" : NULL;
}

#else  // no ISA-L header at build time: zlib it is

lct_isal *lct_isal_new(void) { return NULL; }
void lct_isal_free(lct_isal *x) { (void)x; }
void lct_isal_reset(lct_isal *x) { (void)x; }
int lct_isal_inflate(lct_isal *x, const uint8_t *in, uint32_t in_len, uint32_t *consumed,
                     uint8_t *out, uint32_t out_len, uint32_t *produced) {
    (void)x; (void)in; (void)in_len; (void)out; (void)out_len;
    *consumed = 0;
    *produced = 0;
    return LCT_ISAL_ERROR;
}
const char *lct_isal_error(const lct_isal *x) { (void)x; return "ISA-L is not available"; }
const char *lct_isal_description(void) { return NULL; }

#endif

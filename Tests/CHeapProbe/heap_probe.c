#include "heap_probe.h"
#include <stdlib.h>  /* defines __GLIBC__ where glibc is the C library */
#if defined(__APPLE__)
#include <malloc/malloc.h>
size_t lctrace_heap_in_use(void) {
    malloc_statistics_t stats;
    malloc_zone_statistics(NULL, &stats);
    return stats.size_in_use;
}
#elif defined(__GLIBC__)
#include <malloc.h>
size_t lctrace_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
#else
size_t lctrace_heap_in_use(void) { return 0; }
#endif

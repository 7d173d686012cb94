#ifndef LCTRACE_HEAP_PROBE_H
#define LCTRACE_HEAP_PROBE_H
#include <stddef.h>

/// Bytes the C allocator holds for the process right now (glibc: mallinfo2's in-use bytes;
/// Darwin: the default zone's size in use). For tests that bound what a structure keeps on the
/// heap, which process RSS cannot show (freed pages are reused without growing it).
size_t lctrace_heap_in_use(void);

#endif

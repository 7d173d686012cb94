/* Benchmarks/postgres.py --round-trip-us N: a stand-in for a server across a network, loaded
 * into the clients with LD_PRELOAD (Linux). Each poll() that waits to read a single socket (libpq
 * waiting for the server's answer) first sleeps N microseconds (LCTRACE_BENCH_ROUND_TRIP_US), as
 * a round trip over a LAN or within a cloud zone adds about 100-500 us to every answer waited
 * for. It costs no CPU, so the two cores stay the server's and the clients'. A measurement aid,
 * never part of lctrace. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>

int poll(struct pollfd *fds, nfds_t count, int timeout) {
    static int (*next)(struct pollfd *, nfds_t, int);
    static long delay = -1;
    if (!next) next = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
    if (delay < 0) {
        const char *text = getenv("LCTRACE_BENCH_ROUND_TRIP_US");
        delay = text ? atol(text) : 0;
    }
    if (delay > 0 && timeout != 0 && count == 1 && (fds[0].events & POLLIN)) {
        struct timespec pause = { delay / 1000000, (delay % 1000000) * 1000 };
        nanosleep(&pause, NULL);
    }
    return next(fds, count, timeout);
}

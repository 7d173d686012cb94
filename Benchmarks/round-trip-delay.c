/* Benchmarks/postgres.py --round-trip-us N: a stand-in for a server across a network, loaded
 * into the clients with LD_PRELOAD (Linux). An answer cannot come back sooner than N
 * microseconds (LCTRACE_BENCH_ROUND_TRIP_US) after the client last sent on that socket, as a
 * round trip over a LAN or within a cloud zone takes about 100-500 us. So a poll() that waits
 * to read a single socket (libpq waiting for the server) first sleeps until then; a wait whose
 * answer had time to come while the client did other work (waited on another connection, say)
 * is not delayed, as across a real network. It costs no CPU, so the two cores stay the
 * server's and the clients'. It delays the answer by N or by the server's own time, whichever
 * is longer, where a network adds them (a small difference for short statements). A
 * measurement aid, never part of lctrace. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#define SOCKETS 4096

static long delay_ns = -1;
/* When each socket last sent, in ns of CLOCK_MONOTONIC (a socket is used by one thread). */
static long long last_send[SOCKETS];

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long delay(void) {
    if (delay_ns < 0) {
        const char *text = getenv("LCTRACE_BENCH_ROUND_TRIP_US");
        delay_ns = text ? atol(text) * 1000L : 0;
    }
    return delay_ns;
}

static void sent(int fd) {
    if (fd >= 0 && fd < SOCKETS && delay() > 0) last_send[fd] = now_ns();
}

ssize_t send(int fd, const void *buffer, size_t length, int flags) {
    static ssize_t (*next)(int, const void *, size_t, int);
    if (!next) next = (ssize_t (*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
    sent(fd);
    return next(fd, buffer, length, flags);
}

ssize_t sendto(int fd, const void *buffer, size_t length, int flags, const struct sockaddr *to, socklen_t size) {
    static ssize_t (*next)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
    if (!next) next = (ssize_t (*)(int, const void *, size_t, int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "sendto");
    sent(fd);
    return next(fd, buffer, length, flags, to, size);
}

int poll(struct pollfd *fds, nfds_t count, int timeout) {
    static int (*next)(struct pollfd *, nfds_t, int);
    if (!next) next = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
    if (delay() > 0 && timeout != 0 && count == 1 && (fds[0].events & POLLIN) && fds[0].fd >= 0 && fds[0].fd < SOCKETS) {
        long long due = last_send[fds[0].fd] + delay_ns, now = now_ns();
        if (due > now) {
            struct timespec pause = { (due - now) / 1000000000LL, (due - now) % 1000000000LL };
            nanosleep(&pause, NULL);
        }
    }
    return next(fds, count, timeout);
}

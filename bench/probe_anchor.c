/* The minimal prober that bench/probe_cost.sh measures perflab's probes against: the same
 * exchange per probe with nothing else (no records, no statistics), on an absolute schedule.
 *   probe_anchor udp|tcp|http|command HOST PORT COUNT INTERVAL_US
 * udp: a 64-byte datagram to an echo service, wait for the echo; tcp: a non-blocking connect,
 * wait for it, close; http: connect, `GET / HTTP/1.1` with `Connection: close`, read to EOF;
 * command: posix_spawn `true` from PATH, wait for its exit (HOST and PORT unused).
 * Prints `sent N replies M` on exit.
 * With PROBE_ANCHOR_AS_PERFLAB=1 in the environment it makes perflab's system calls where they
 * differ from the minimal loop's, with nothing else of perflab: it sleeps in `ppoll` on an epoll
 * descriptor until the next send instead of `clock_nanosleep`, a tcp probe reads `TCP_INFO`
 * instead of polling for the connect's end, the udp socket asks for kernel receive timestamps and
 * reads them with `recvmsg`, and a second thread sits idle (perflab's probes run beside the
 * thread that started them). bench/probe_cost.sh --anchor-as-perflab measures against it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/net_tstamp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int wait_fd(int fd, short ev) {
    struct pollfd p = {fd, ev, 0};
    return poll(&p, 1, 1000) == 1;
}

extern char **environ;

static void *idle(void *unused) {
    (void)unused;
    for (;;) pause();
    return NULL;
}

/* Sleep until `due` in ppoll on the (empty) epoll descriptor `ep`, as perflab's poller does. */
static void sleep_in_epoll(int ep, const struct timespec *due) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ns = (due->tv_sec - now.tv_sec) * 1000000000L + (due->tv_nsec - now.tv_nsec);
    if (ns <= 0) return;
    struct timespec t = {ns / 1000000000L, ns % 1000000000L};
    struct pollfd p = {ep, POLLIN, 0};
    ppoll(&p, 1, &t, NULL);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: probe_anchor udp|tcp|http|command HOST PORT COUNT INTERVAL_US\n");
        return 2;
    }
    const char *mode = argv[1];
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(atoi(argv[3]));
    if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1) {
        fprintf(stderr, "probe_anchor: bad address %s\n", argv[2]);
        return 2;
    }
    long count = atol(argv[4]), interval_ns = atol(argv[5]) * 1000L, replies = 0;
    char buf[65536], out[64] = "PLPb";
    const char req[] = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    int as_perflab = getenv("PROBE_ANCHOR_AS_PERFLAB") != NULL, ep = -1;
    if (as_perflab) {
        pthread_t t;
        pthread_create(&t, NULL, idle, NULL);
        ep = epoll_create1(EPOLL_CLOEXEC);
    }
    int udp = -1;
    if (!strcmp(mode, "udp")) {
        udp = socket(AF_INET, SOCK_DGRAM, 0);
        if (connect(udp, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); return 1; }
        int one = 1;
        if (as_perflab) setsockopt(udp, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    }
    struct timespec due;
    clock_gettime(CLOCK_MONOTONIC, &due);
    for (long i = 0; i < count; i++) {
        if (as_perflab) sleep_in_epoll(ep, &due);
        else clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
        due.tv_nsec += interval_ns;
        while (due.tv_nsec >= 1000000000L) { due.tv_nsec -= 1000000000L; due.tv_sec++; }
        if (!strcmp(mode, "command")) {
            pid_t pid;
            char *av[] = {"true", NULL};
            int st;
            if (posix_spawnp(&pid, "true", NULL, NULL, av, environ) == 0 && waitpid(pid, &st, 0) == pid && st == 0)
                replies++;
            continue;
        }
        if (udp >= 0) {
            memcpy(out + 4, &i, sizeof i);
            send(udp, out, sizeof out, 0);
            if (!wait_fd(udp, POLLIN)) continue;
            if (as_perflab) {
                char control[256];
                struct iovec io = {buf, sizeof buf};
                struct msghdr m = {0};
                m.msg_iov = &io;
                m.msg_iovlen = 1;
                m.msg_control = control;
                m.msg_controllen = sizeof control;
                if (recvmsg(udp, &m, MSG_DONTWAIT) == sizeof out) replies++;
            } else if (recv(udp, buf, sizeof buf, MSG_DONTWAIT) == sizeof out) {
                replies++;
            }
            continue;
        }
        int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        int r = connect(s, (struct sockaddr *)&a, sizeof a);
        struct tcp_info ti;
        socklen_t til = sizeof ti;
        if (as_perflab && !strcmp(mode, "tcp") && getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &til) == 0
            && ti.tcpi_state == TCP_ESTABLISHED) {
            replies++;
        } else if (r == 0 || wait_fd(s, POLLOUT)) {
            if (!strcmp(mode, "tcp")) {
                replies++;
            } else {
                int one = 1;
                setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                if (send(s, req, sizeof req - 1, 0) == (ssize_t)(sizeof req - 1)) {
                    ssize_t n;
                    while (wait_fd(s, POLLIN) && (n = recv(s, buf, sizeof buf, 0)) > 0) {}
                    replies++;
                }
            }
        }
        close(s);
    }
    printf("sent %ld replies %ld\n", count, replies);
    return 0;
}

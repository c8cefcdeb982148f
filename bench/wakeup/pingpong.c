/*
 * Round trips of 32 bytes over loopback TCP between two processes, each
 * waiting in epoll. What a request pays on this machine for waking a
 * process that sleeps, against one that polls:
 *
 *   pingpong [mode] [round-trips=20000]
 *     mode 0: both sides block in epoll_wait (how the services wait)
 *     mode 1: the client polls (epoll_wait with timeout 0), the echo blocks
 *     mode 2: both poll
 *
 * Prints the mean, p50 and p99 round trip in microseconds. Bounded: a fixed
 * number of round trips, on 127.0.0.1 only; the echo process exits when
 * the client closes.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b) {
    double d = *(const double *)a - *(const double *)b;
    return d < 0 ? -1 : d > 0;
}

/* Waits until fd is readable: blocking, or polling when poll is set. */
static void wait_readable(int epoll_fd, int poll) {
    struct epoll_event event;
    if (poll) {
        while (epoll_wait(epoll_fd, &event, 1, 0) <= 0) {}
    } else {
        while (epoll_wait(epoll_fd, &event, 1, -1) <= 0) {}
    }
}

static int watch(int fd) {
    int epoll_fd = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) { perror("epoll"); exit(1); }
    return epoll_fd;
}

int main(int argc, char **argv) {
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    int count = argc > 2 ? atoi(argv[2]) : 20000;
    if (mode < 0 || mode > 2 || count < 100 || count > 1000000) { fprintf(stderr, "usage: pingpong [0|1|2] [100...1000000]\n"); return 2; }
    int one = 1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 1) != 0
        || getsockname(listener, (struct sockaddr *)&address, &length) != 0) { perror("listen"); return 1; }
    pid_t echo = fork();
    if (echo < 0) { perror("fork"); return 1; }
    if (echo == 0) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); _exit(1); }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int epoll_fd = watch(fd);
        char buffer[64];
        for (;;) {
            wait_readable(epoll_fd, mode == 2);
            ssize_t n = recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0 || send(fd, buffer, (size_t)n, 0) != n) _exit(0);
        }
    }
    int fd = accept(listener, NULL, NULL);
    if (fd < 0) { perror("accept"); return 1; }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int epoll_fd = watch(fd);
    double *samples = malloc(sizeof(double) * (size_t)count);
    if (!samples) return 1;
    char buffer[64] = {0};
    double started = now_us();
    for (int i = 0; i < count; i++) {
        double sent = now_us();
        if (send(fd, buffer, 32, 0) != 32) { perror("send"); return 1; }
        size_t received = 0;
        while (received < 32) {
            wait_readable(epoll_fd, mode >= 1);
            ssize_t n = recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) { perror("recv"); return 1; }
            received += (size_t)n;
        }
        samples[i] = now_us() - sent;
    }
    double total = now_us() - started;
    close(fd);
    waitpid(echo, NULL, 0);
    qsort(samples, (size_t)count, sizeof(double), compare);
    static const char *names[] = {"both block", "client polls", "both poll"};
    printf("%-12s round trip: mean %.1f us, p50 %.1f us, p99 %.1f us (%d round trips)\n", names[mode], total / count,
           samples[count / 2], samples[count * 99 / 100], count);
    free(samples);
    return 0;
}

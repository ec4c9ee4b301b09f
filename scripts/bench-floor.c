/*
 * bench-floor: figure 2's round trip with none of the daemons' logic (docs/PERFORMANCE.md, figure 2).
 *
 * The same processes, threads, sockets and flushes as an edit's round trip, and nothing else:
 * - a client sends "set" to the watch over a Unix socket, reads the reply, then sends "wait" and
 *   reads its reply, a new connection for each (as the bench's admin client does);
 * - the watch's epoll loop, on "set", sends a 2,000-byte message to the phone over loopback TCP
 *   (TCP_NODELAY), then has its write thread rewrite its pending record in place (pwrite of
 *   2,700 bytes, fdatasync) and answers "set" with 2,200 bytes once that has landed;
 * - the phone's loop, on the message, has its write thread rewrite its record (pwrite, fdatasync),
 *   then sends a 2,500-byte context back;
 * - the watch's loop, on the context, has its write thread rewrite the received context (pwrite,
 *   fdatasync) after any write before it, then answers "wait" (at once when nothing is pending).
 * A loop hands a write to its thread through a mutex and condition variable and hears it landed
 * through an eventfd, as Dispatch and the daemons' event loop do. No JSON, no seals, no journal,
 * no logs: what is left is the path's system calls, wake-ups and flushes.
 *
 * WORK_US (optional, default 0): each loop spins that many microseconds at every event it handles
 * (a request, a frame, a landing), standing in for the work a real loop does there (the daemons'
 * loops spend a few hundred microseconds an edit). FLUSHES (optional, default 1): 0 leaves out the
 * fdatasyncs, to tell what the flushes cost from what the work costs (docs/PERFORMANCE.md,
 * "The development machine's disk": on a disk that charges a flush after an idle spell, the work makes the flushes dear).
 *
 * Prints one line: "p50_ms=<p50> p99_ms=<p99> edits=<count>" over COUNT timed edits (after 20).
 * Build: cc -O2 -o .build/bench-floor scripts/bench-floor.c -lpthread
 * Usage: bench-floor DIRECTORY COUNT [WORK_US [FLUSHES]]
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
    perror(what);
    exit(1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Microseconds of busy work per loop event (WORK_US); whether writes are flushed (FLUSHES). */
static double work_us;
static int flushes = 1;

static void work(void) {
    if (work_us <= 0) return;
    double until = now() + work_us / 1e6;
    while (now() < until) {
    }
}

/* A write thread: each job rewrites `file` in place and flushes it; landings count on an eventfd. */
struct writer {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int queued, landed_fd, file;
    char bytes[2700];
};

static void *write_thread(void *argument) {
    struct writer *w = argument;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        while (w->queued == 0) pthread_cond_wait(&w->wake, &w->lock);
        w->queued--;
        pthread_mutex_unlock(&w->lock);
        if (pwrite(w->file, w->bytes, sizeof w->bytes, 0) != (ssize_t)sizeof w->bytes) die("pwrite");
        if (flushes && fdatasync(w->file)) die("fdatasync");
        uint64_t one = 1;
        if (write(w->landed_fd, &one, 8) != 8) die("eventfd");
    }
    return NULL;
}

static struct writer *start_writer(const char *directory, const char *name) {
    struct writer *w = calloc(1, sizeof *w);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    w->landed_fd = eventfd(0, EFD_NONBLOCK);
    w->file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (w->landed_fd < 0 || w->file < 0) die("writer");
    memset(w->bytes, 'r', sizeof w->bytes);
    /* The record exists at its size before the first timed write, as the daemons' records do. */
    if (pwrite(w->file, w->bytes, sizeof w->bytes, 0) != (ssize_t)sizeof w->bytes || fsync(w->file)) die("prepare");
    pthread_t thread;
    if (pthread_create(&thread, NULL, write_thread, w)) die("pthread_create");
    return w;
}

static void send_write(struct writer *w) {
    pthread_mutex_lock(&w->lock);
    w->queued++;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

static uint64_t writes_landed(struct writer *w) {
    uint64_t count = 0;
    return read(w->landed_fd, &count, 8) == 8 ? count : 0;
}

static void watch_for_input(int poll, int fd) {
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(poll, EPOLL_CTL_ADD, fd, &event)) die("epoll_ctl");
}

static void write_all(int fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t written = write(fd, bytes, count);
        if (written <= 0) die("write");
        bytes += written;
        count -= (size_t)written;
    }
}

/* Frames on the TCP link: a 4-byte length, then that many bytes. */
static void send_frame(int fd, uint32_t length) {
    static char frame[4 + 4096];
    memcpy(frame, &length, 4);
    memset(frame + 4, 'f', length);
    write_all(fd, frame, 4 + length);
}

/* Reads what is there and returns how many whole frames it completed (-1: the peer closed). */
struct frames {
    char buffer[65536];
    size_t used;
};

static int read_frames(int fd, struct frames *f) {
    ssize_t got = read(fd, f->buffer + f->used, sizeof f->buffer - f->used);
    if (got <= 0) return -1;
    f->used += (size_t)got;
    int whole = 0;
    for (;;) {
        uint32_t length;
        if (f->used < 4) break;
        memcpy(&length, f->buffer, 4);
        if (f->used < 4 + (size_t)length) break;
        memmove(f->buffer, f->buffer + 4 + length, f->used - 4 - length);
        f->used -= 4 + length;
        whole++;
    }
    return whole;
}

static void phone(int listener, const char *directory) {
    int link = accept(listener, NULL, NULL), one = 1;
    if (link < 0) die("accept");
    setsockopt(link, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct writer *w = start_writer(directory, "phone-record");
    int poll = epoll_create1(0);
    watch_for_input(poll, link);
    watch_for_input(poll, w->landed_fd);
    static struct frames in;
    for (;;) {
        struct epoll_event events[4];
        int count = epoll_wait(poll, events, 4, -1);
        for (int i = 0; i < count; i++) {
            work();
            if (events[i].data.fd == link) {
                int messages = read_frames(link, &in);
                if (messages < 0) exit(0);
                while (messages-- > 0) send_write(w);
            } else {
                for (uint64_t landed = writes_landed(w); landed > 0; landed--) send_frame(link, 2500);
            }
        }
    }
}

static void watch(int port, const char *socket_path, const char *directory) {
    int link = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in phone_address = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(link, (struct sockaddr *)&phone_address, sizeof phone_address)) die("connect to the phone");
    setsockopt(link, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int admin = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path);
    if (bind(admin, (struct sockaddr *)&address, sizeof address) || listen(admin, 16)) die("admin socket");
    /* One write queue, in order: a set's pending record, a context's received copy. */
    struct writer *w = start_writer(directory, "watch-record");
    int poll = epoll_create1(0);
    watch_for_input(poll, link);
    watch_for_input(poll, admin);
    watch_for_input(poll, w->landed_fd);
    char kinds[256];
    unsigned head = 0, tail = 0;
    int set_client = -1, wait_client = -1, edits = 0, contexts = 0;
    static struct frames in;
    static char reply[2200];
    memset(reply, 'a', sizeof reply);
    for (;;) {
        struct epoll_event events[8];
        int count = epoll_wait(poll, events, 8, -1);
        for (int i = 0; i < count; i++) {
            work();
            int fd = events[i].data.fd;
            if (fd == admin) {
                int client = accept(admin, NULL, NULL);
                char request[64];
                if (client < 0 || read(client, request, sizeof request) <= 0) die("admin request");
                if (request[0] == 's') {
                    edits++;
                    send_frame(link, 2000);
                    kinds[tail++ % 256] = 's';
                    send_write(w);
                    set_client = client;
                } else if (contexts >= edits) {
                    write_all(client, "synced", 6);
                    close(client);
                } else {
                    wait_client = client;
                }
            } else if (fd == link) {
                int received = read_frames(link, &in);
                if (received < 0) exit(0);
                while (received-- > 0) {
                    kinds[tail++ % 256] = 'c';
                    send_write(w);
                }
            } else {
                for (uint64_t landed = writes_landed(w); landed > 0; landed--) {
                    if (kinds[head++ % 256] == 's') {
                        write_all(set_client, reply, sizeof reply);
                        close(set_client);
                    } else if (++contexts >= edits && wait_client >= 0) {
                        write_all(wait_client, "synced", 6);
                        close(wait_client);
                        wait_client = -1;
                    }
                }
            }
        }
    }
}

static void request(const char *socket_path, const char *what) {
    int client = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path);
    if (connect(client, (struct sockaddr *)&address, sizeof address)) die("connect to the watch");
    write_all(client, what, strlen(what));
    shutdown(client, SHUT_WR);
    char reply[4096];
    while (read(client, reply, sizeof reply) > 0) {
    }
    close(client);
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 5 || atoi(argv[2]) < 1 || (argc >= 4 && atof(argv[3]) < 0)
        || (argc == 5 && strcmp(argv[4], "0") != 0 && strcmp(argv[4], "1") != 0)) {
        fprintf(stderr, "usage: bench-floor DIRECTORY COUNT [WORK_US [FLUSHES]]\n");
        return 64;
    }
    work_us = argc >= 4 ? atof(argv[3]) : 0;
    flushes = argc == 5 ? atoi(argv[4]) : 1;
    const char *directory = argv[1];
    int count = atoi(argv[2]);
    char socket_path[108];
    if (snprintf(socket_path, sizeof socket_path, "%s/floor.sock", directory) >= (int)sizeof socket_path) {
        fprintf(stderr, "bench-floor: directory path too long for a socket\n");
        return 64;
    }
    unlink(socket_path);
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t size = sizeof any;
    if (bind(listener, (struct sockaddr *)&any, sizeof any) || listen(listener, 1)
        || getsockname(listener, (struct sockaddr *)&any, &size))
        die("listen");
    /* The two children die with this process, whatever ends it. */
    pid_t phone_pid = fork();
    if (phone_pid == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) == 0) phone(listener, directory);
    if (phone_pid < 0) die("fork");
    close(listener);
    pid_t watch_pid = fork();
    if (watch_pid == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) == 0) watch(ntohs(any.sin_port), socket_path, directory);
    if (watch_pid < 0) die("fork");
    while (access(socket_path, F_OK) != 0) {
        if (waitpid(watch_pid, NULL, WNOHANG) != 0 || waitpid(phone_pid, NULL, WNOHANG) != 0) {
            fprintf(stderr, "bench-floor: the watch or the phone did not start\n");
            kill(phone_pid, SIGKILL);
            kill(watch_pid, SIGKILL);
            return 1;
        }
        usleep(1000);
    }
    usleep(10000);
    for (int i = 0; i < 20; i++) {
        request(socket_path, "set");
        request(socket_path, "wait");
    }
    double *latencies = malloc(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; i++) {
        double start = now();
        request(socket_path, "set");
        request(socket_path, "wait");
        latencies[i] = now() - start;
    }
    qsort(latencies, (size_t)count, sizeof(double), ascending);
    printf("p50_ms=%.4f p99_ms=%.4f edits=%d\n", latencies[count / 2] * 1e3, latencies[count * 99 / 100] * 1e3, count);
    kill(phone_pid, SIGKILL);
    kill(watch_pid, SIGKILL);
    waitpid(phone_pid, NULL, 0);
    waitpid(watch_pid, NULL, 0);
    unlink(socket_path);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: code that runs at exit after the library's own last step
 * (a destructor of a library later on the link line: latefini/) still
 * wakes user threads parked on descriptors: it writes an eventfd, sends
 * on a socketpair and connects to a listener, each waited on by a thread
 * parked there since before the exit, and joins the three. Under
 * CAP_NETIO=uring the exit cancels every poll of the ring (so sockets
 * close with the process, io/exit_closes_sockets_at_once): the waits
 * armed then would never see these events, and the join hung; the
 * descriptors the backend no longer watches now wake their waiters,
 * which wait the unwatched way (poll(2) on their worker). Then it reads
 * a file with O_DIRECT, which parks for the device: the disk rings'
 * completions reach their workers through eventfds of the runtime's,
 * which the exit must keep watched. */
#include <sys/eventfd.h>

#include "io/io_util.h"

void late_fini_register(void (*fn)(void));

static int efd, sv[2], listener, port, direct;
static cap_thread_t threads[3];
static atomic_int parked;

static void *eventfd_reader(void *arg)
{
    (void)arg;
    atomic_fetch_add(&parked, 1);
    uint64_t v;
    CHECK_EQ(read(efd, &v, sizeof v), (ssize_t)sizeof v);
    CHECK_EQ(v, 5);
    return NULL;
}

static void *socket_reader(void *arg)
{
    (void)arg;
    atomic_fetch_add(&parked, 1);
    char c;
    CHECK_EQ(recv(sv[0], &c, 1, 0), 1);
    CHECK_EQ(c, 's');
    return NULL;
}

static void *acceptor(void *arg)
{
    (void)arg;
    atomic_fetch_add(&parked, 1);
    int c = accept(listener, NULL, NULL);
    CHECK_GE(c, 0);
    CHECK_EQ(close(c), 0);
    return NULL;
}

/* Run by latefini's destructor. */
static void wake_and_join(void)
{
    uint64_t five = 5;
    CHECK_EQ(write(efd, &five, sizeof five), (ssize_t)sizeof five);
    CHECK_EQ(send(sv[1], "s", 1, 0), 1);
    int c = tcp_connect(port);
    CHECK_GE(c, 0);
    for (int i = 0; i < 3; i++)
        join(threads[i]);
    CHECK_EQ(close(c), 0);
    /* The disk backend still completes: an O_DIRECT read parks for the
     * device (its ring's completions reach the worker through an
     * eventfd of the runtime's, which the exit keeps watched). */
    if (direct >= 0) {
        unsigned char *b = aligned_alloc(4096, 4096);
        CHECK(b != NULL);
        for (int k = 0; k < 8; k++) {
            CHECK_EQ(pread(direct, b, 4096, (off_t)k * 4096), 4096);
            CHECK_EQ(b[100], (unsigned char)k);
        }
        free(b);
    }
    fprintf(stderr, "late destructor: woke and joined the three\n");
}

/* Eight blocks, block k all k, read back with O_DIRECT; -1 where the
 * file system refuses O_DIRECT (that part is then left out). */
static int direct_file(void)
{
    char path[] = "/tmp/capriccio-io-XXXXXX";
    int w = mkstemp(path);
    CHECK_GE(w, 0);
    unsigned char b[4096];
    for (int k = 0; k < 8; k++) {
        memset(b, k, sizeof b);
        CHECK_EQ(write(w, b, sizeof b), (ssize_t)sizeof b);
    }
    CHECK_EQ(fsync(w), 0);
    CHECK_EQ(close(w), 0);
    int fd = open(path, O_RDONLY | O_DIRECT);
    CHECK_EQ(unlink(path), 0);
    return fd;
}

int main(void)
{
    direct = direct_file();
    efd = eventfd(0, 0);
    CHECK_GE(efd, 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    listener = tcp_listener(SOCK_STREAM, 4, &port);
    threads[0] = spawn(eventfd_reader, NULL);
    threads[1] = spawn(socket_reader, NULL);
    threads[2] = spawn(acceptor, NULL);
    while (atomic_load(&parked) < 3)
        cap_yield();
    for (int i = 0; i < 100; i++)
        cap_yield(); /* parked in their calls, most likely (either way must work) */
    late_fini_register(wake_and_join);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: plain data arriving on a TCP socket is not taken for
 * urgent data, so blocking reads keep the drained-socket shortcut (io/fd.h)
 * under every backend. A socket the backend reported urgent data on is
 * marked NODRAIN for its life, and each of its reads that finds nothing
 * then asks the kernel whether it stopped at an urgent mark (an ioctl,
 * SIOCATMARK: io/wait.c). Under CAP_NETIO=uring every arrival used to
 * count as urgent: a multishot poll's completion carries the wake-up's
 * key, and TCP's data-ready wake-up names POLLPRI beside POLLIN. Two user
 * threads exchange ROUNDS short messages over loopback, both parking on
 * each read; a seccomp filter hands every SIOCATMARK ioctl of the
 * process to a supervisor thread that counts it and lets it go on. The
 * count must stay 0. Then real urgent data must still reach the reader
 * (a read that stops at the mark does not leave the next one parked).
 * UDP's data-ready wake-up carries the same POLLPRI, and a datagram
 * socket marked NODRAIN so polled for a shutdown after each read that
 * found nothing (intercept/rw.c, shut_for_reading: poll(_, 1, 0), which
 * the filter counts too): ROUNDS UDP round trips between two user
 * threads must make no such poll. Skipped where seccomp user
 * notification is refused. */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

#include "io/io_util.h"

enum { ROUNDS = 500 };

static atomic_int mark_checks, one_polls;
static int port;

/* Installs, on every kernel thread of the process, a filter that sends
 * ioctl(_, SIOCATMARK, _) and poll(_, 1, 0) to a listener, and returns
 * the listener's descriptor; -1 where the kernel refuses. */
static int watch_mark_checks(void)
{
    struct sock_filter code[] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0), /* x86_64 only */
        /* 2 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 2),
        /* the low half of an argument (little-endian) */
        /* 5 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
        /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIOCATMARK, 6, 5),
        /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_poll, 0, 4),
        /* 8 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
        /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 2),
        /* 10 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        /* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
        /* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 13 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
    };
    struct sock_fprog prog = { .len = sizeof code / sizeof code[0], .filter = code };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                        SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC |
                            SECCOMP_FILTER_FLAG_TSYNC_ESRCH,
                        &prog);
}

/* A plain kernel thread: counts each notified call and lets it run. */
static void *supervise(void *arg)
{
    int nfd = *(int *)arg;
    for (;;) {
        struct seccomp_notif req;
        memset(&req, 0, sizeof req);
        if (syscall(SYS_ioctl, nfd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
            CHECK(errno == EINTR || errno == ENOENT); /* ENOENT: the caller's signal */
            continue;
        }
        atomic_fetch_add(req.data.nr == SYS_ioctl ? &mark_checks : &one_polls, 1);
        struct seccomp_notif_resp resp = { .id = req.id,
                                           .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
        /* ENOENT: the call was interrupted meanwhile; it is counted all the same */
        if (syscall(SYS_ioctl, nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0)
            CHECK_EQ(errno, ENOENT);
    }
    return NULL;
}

static void *client(void *arg)
{
    (void)arg;
    int s = tcp_connect(port);
    CHECK_GE(s, 0);
    int one = 1;
    CHECK_EQ(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
    char buf[64];
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(write(s, "request", 7), 7);
        read_exactly_n(s, buf, sizeof buf, 5); /* one short read, after a park */
        CHECK(memcmp(buf, "reply", 5) == 0);
    }
    CHECK_EQ(atomic_load(&mark_checks), 0);
    /* Urgent data: "b", then "X" out of band, then "c". */
    CHECK_EQ(write(s, "b", 1), 1);
    CHECK_EQ(send(s, "X", 1, MSG_OOB), 1);
    CHECK_EQ(write(s, "c", 1), 1);
    CHECK_EQ(read(s, buf, sizeof buf), 0); /* the server closed */
    close(s);
    return NULL;
}

/* ---- UDP ---------------------------------------------------------------- */

static int udp_b;

static void *udp_peer(void *arg)
{
    (void)arg;
    char buf[64];
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(recv(udp_b, buf, sizeof buf, 0), 4);
        CHECK_EQ(send(udp_b, "pong", 4, 0), 4);
    }
    return NULL;
}

/* ROUNDS round trips between two connected UDP sockets; both threads park
 * on each read. */
static void udp_round_trips(void)
{
    int a = socket(AF_INET, SOCK_DGRAM, 0);
    udp_b = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK_GE(a, 0);
    CHECK_GE(udp_b, 0);
    struct sockaddr_in x = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct sockaddr_in y = x;
    socklen_t len = sizeof x;
    CHECK_EQ(bind(a, (struct sockaddr *)&x, sizeof x), 0);
    CHECK_EQ(bind(udp_b, (struct sockaddr *)&y, sizeof y), 0);
    CHECK_EQ(getsockname(a, (struct sockaddr *)&x, &len), 0);
    len = sizeof y;
    CHECK_EQ(getsockname(udp_b, (struct sockaddr *)&y, &len), 0);
    CHECK_EQ(connect(a, (struct sockaddr *)&y, sizeof y), 0);
    CHECK_EQ(connect(udp_b, (struct sockaddr *)&x, sizeof x), 0);
    cap_thread_t t = spawn(udp_peer, NULL);
    char buf[64];
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(send(a, "ping", 4, 0), 4);
        CHECK_EQ(recv(a, buf, sizeof buf, 0), 4);
    }
    join(t);
    CHECK_EQ(close(a), 0);
    CHECK_EQ(close(udp_b), 0);
}

int main(void)
{
    int nfd = watch_mark_checks();
    if (nfd < 0)
        SKIP("seccomp user notification refused here");
    pthread_t sup;
    CHECK_EQ(pthread_create(&sup, NULL, supervise, &nfd), 0);
    /* The counting works: one check, by hand. */
    int probe = socket(AF_INET, SOCK_STREAM, 0), at_mark;
    CHECK_GE(probe, 0);
    (void)ioctl(probe, SIOCATMARK, &at_mark);
    CHECK_EQ(atomic_load(&mark_checks), 1);
    close(probe);
    atomic_store(&mark_checks, 0);

    int l = tcp_listener(SOCK_STREAM, 8, &port);
    cap_thread_t t = spawn(client, NULL);
    int c = accept(l, NULL, NULL);
    CHECK_GE(c, 0);
    int one = 1;
    CHECK_EQ(setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
    char buf[64];
    for (int i = 0; i < ROUNDS; i++) {
        read_exactly_n(c, buf, sizeof buf, 7);
        CHECK(memcmp(buf, "request", 7) == 0);
        CHECK_EQ(write(c, "reply", 5), 5);
    }
    /* The mark stops a read after "b" (or before "c", once "b" was read
     * alone); the urgent byte is out of band. */
    read_exactly_n(c, buf, sizeof buf, 2);
    CHECK(memcmp(buf, "bc", 2) == 0);
    close(c);
    join(t);
    close(l);

    int before = atomic_load(&one_polls);
    udp_round_trips();
    CHECK_EQ(atomic_load(&one_polls) - before, 0);
    return 0;
}

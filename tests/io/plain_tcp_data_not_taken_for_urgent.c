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
 * Skipped where seccomp user notification is refused. */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

#include "io/io_util.h"

enum { ROUNDS = 500 };

static atomic_int mark_checks;
static int port;

/* Installs, on every kernel thread of the process, a filter that sends
 * ioctl(_, SIOCATMARK, _) to a listener, and returns the listener's
 * descriptor; -1 where the kernel refuses. */
static int watch_mark_checks(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0), /* x86_64 only (README) */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 3),
        /* the low half of the request number (little-endian) */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIOCATMARK, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
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
        atomic_fetch_add(&mark_checks, 1);
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
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a blocking call that first tries without waiting, finds
 * it would wait, waits, and then succeeds leaves errno as the caller had
 * it, as the kernel's blocking call does: not at the EAGAIN, ENOMSG or
 * EOPNOTSUPP of its try. Each call below runs with errno set to 0 and
 * must succeed after a wait for another thread (or, for the file calls,
 * after a refused RWF_NOWAIT try):
 *  - sendfile into a full socket, drained later;
 *  - sigwait, sigwaitinfo and sigtimedwait of a signal sent later;
 *  - write and pwrite to a regular file (buffered writes refuse
 *    RWF_NOWAIT on ext4 and tmpfs) and reads of a file dropped from the
 *    page cache (a RWF_NOWAIT try that says EAGAIN);
 *  - flock of a lock held through another descriptor, released later;
 *  - System V semop and msgrcv, posted and sent later; POSIX mq_receive
 *    (skipped where message queues are unavailable).
 * Before the fix every one of them left its try's errno behind (EAGAIN,
 * EOPNOTSUPP, ENOMSG, ETIMEDOUT) on every backend, one and two workers. */
#include <mqueue.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/sendfile.h>

#include "io/io_util.h"

enum { NAP_NS = 3000000 }; /* time for the caller to try and park */

static int sv[2];
static int lock_fd;
static int semid, msqid;
static mqd_t mq = (mqd_t)-1;
static cap_thread_t caller;

/* Reads everything queued on sv[1] until told to stop. */
static atomic_int drained_stop;
static void *drain(void *arg)
{
    (void)arg;
    cap_sleep_ns(NAP_NS);
    static char buf[1 << 16];
    while (!atomic_load(&drained_stop)) {
        ssize_t r = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT);
        if (r <= 0)
            cap_sleep_ns(100000);
    }
    return NULL;
}

static void fill(int fd)
{
    static char chunk[4096];
    while (send(fd, chunk, sizeof chunk, MSG_DONTWAIT) > 0) {
    }
    while (send(fd, chunk, 1, MSG_DONTWAIT) > 0) {
    }
    CHECK_EQ(errno, EAGAIN);
}

static void check_sendfile(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int in = cached_file(1, 4096);
    fill(sv[0]);
    atomic_store(&drained_stop, 0);
    cap_thread_t t = spawn(drain, NULL);
    off_t off = 0;
    errno = 0;
    CHECK_EQ(sendfile(sv[0], in, &off, 4096), 4096);
    CHECK_EQ(errno, 0);
    atomic_store(&drained_stop, 1);
    join(t);
    CHECK_EQ(close(in), 0);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
}

static void *send_usr1(void *arg)
{
    (void)arg;
    cap_sleep_ns(NAP_NS);
    CHECK_EQ(cap_thread_kill(caller, SIGUSR1), 0);
    return NULL;
}

static void check_signal_waits(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
    for (int form = 0; form < 3; form++) {
        cap_thread_t t = spawn(send_usr1, NULL);
        int sig = 0;
        struct timespec ten = { 10, 0 };
        errno = 0;
        if (form == 0) {
            CHECK_EQ(sigwait(&s, &sig), 0);
            CHECK_EQ(sig, SIGUSR1);
        } else if (form == 1) {
            CHECK_EQ(sigwaitinfo(&s, NULL), SIGUSR1);
        } else {
            CHECK_EQ(sigtimedwait(&s, NULL, &ten), SIGUSR1);
        }
        CHECK_EQ(errno, 0);
        join(t);
    }
    CHECK_EQ(sigprocmask(SIG_UNBLOCK, &s, NULL), 0);
}

static void check_file_calls(void)
{
    int fd = unlinked_temp_file(0);
    static char buf[1 << 18];
    memset(buf, 7, sizeof buf);
    errno = 0;
    CHECK_EQ(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
    CHECK_EQ(errno, 0);
    CHECK_EQ(pwrite(fd, buf, 4096, 4096), 4096);
    CHECK_EQ(errno, 0);
    CHECK_EQ(fsync(fd), 0);
    /* Dropped from the cache (clean, after the fsync): the try says
     * EAGAIN, and the read goes to the backend. */
    CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    CHECK_EQ(pread(fd, buf, sizeof buf, 0), (ssize_t)sizeof buf);
    CHECK_EQ(errno, 0);
    CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    CHECK_EQ(read(fd, buf, sizeof buf), (ssize_t)sizeof buf);
    CHECK_EQ(errno, 0);
    CHECK_EQ(close(fd), 0);
}

static void *unlock_later(void *arg)
{
    (void)arg;
    cap_sleep_ns(NAP_NS);
    CHECK_EQ(flock(lock_fd, LOCK_UN), 0);
    return NULL;
}

static void check_flock(void)
{
    char path[] = "/tmp/capriccio-errno-XXXXXX";
    lock_fd = mkstemp(path);
    CHECK_GE(lock_fd, 0);
    int other = open(path, O_RDWR);
    CHECK_GE(other, 0);
    CHECK_EQ(unlink(path), 0);
    CHECK_EQ(flock(lock_fd, LOCK_EX), 0);
    cap_thread_t t = spawn(unlock_later, NULL);
    errno = 0;
    CHECK_EQ(flock(other, LOCK_EX), 0);
    CHECK_EQ(errno, 0);
    join(t);
    CHECK_EQ(close(other), 0);
    CHECK_EQ(close(lock_fd), 0);
}

struct one_msg {
    long type;
    char text[4];
};

static void *post_later(void *arg)
{
    (void)arg;
    cap_sleep_ns(NAP_NS);
    struct sembuf up = { 0, 1, 0 };
    CHECK_EQ(semop(semid, &up, 1), 0);
    cap_sleep_ns(NAP_NS);
    struct one_msg m = { 1, "hi" };
    CHECK_EQ(msgsnd(msqid, &m, sizeof m.text, 0), 0);
    if (mq != (mqd_t)-1) {
        cap_sleep_ns(NAP_NS);
        CHECK_EQ(mq_send(mq, "hi", 2, 0), 0);
    }
    return NULL;
}

static void check_ipc(void)
{
    semid = semget(IPC_PRIVATE, 1, 0600);
    CHECK_GE(semid, 0);
    msqid = msgget(IPC_PRIVATE, 0600);
    CHECK_GE(msqid, 0);
    char name[64];
    snprintf(name, sizeof name, "/capriccio-errno-%d", (int)getpid());
    struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 8 };
    mq = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
    if (mq != (mqd_t)-1)
        CHECK_EQ(mq_unlink(name), 0);
    else
        fprintf(stderr, "no POSIX message queues here (errno %d): that case skipped\n", errno);
    cap_thread_t t = spawn(post_later, NULL);
    struct sembuf down = { 0, -1, 0 };
    errno = 0;
    CHECK_EQ(semop(semid, &down, 1), 0);
    CHECK_EQ(errno, 0);
    struct one_msg m;
    CHECK_EQ(msgrcv(msqid, &m, sizeof m.text, 0, 0), (ssize_t)sizeof m.text);
    CHECK_EQ(errno, 0);
    if (mq != (mqd_t)-1) {
        char text[8];
        CHECK_EQ(mq_receive(mq, text, sizeof text, NULL), 2);
        CHECK_EQ(errno, 0);
        CHECK_EQ(mq_close(mq), 0);
    }
    join(t);
    CHECK_EQ(semctl(semid, 0, IPC_RMID), 0);
    CHECK_EQ(msgctl(msqid, IPC_RMID, NULL), 0);
}

int main(void)
{
    caller = cap_thread_self();
    check_sendfile();
    check_signal_waits();
    check_file_calls();
    check_flock();
    check_ipc();
    puts("ok");
    return 0;
}

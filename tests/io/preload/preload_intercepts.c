/* SPDX-License-Identifier: MIT */
/* Description: a program built with no knowledge of Capriccio (not linked
 * with it) gets user-level threads and intercepted I/O when the library
 * is preloaded: main runs as a user thread, and its read() of an empty
 * pipe parks it while a thread it created (found with dlsym) sleeps with
 * usleep() and writes; then its fprintf and fflush to a full pipe park it
 * while another such thread drains the pipe, and so do fputws and fclose
 * on a wide stream; then it waits for a glibc pthread mutex that another
 * such thread holds while it parks in a read (the library's wrappers of
 * glibc's mutex); then it spins on sched_yield until another such thread
 * has run, and waits on a futex through syscall() for one. On
 * CAP_WORKERS=1 a call that was not intercepted would block the only
 * worker forever. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

static int p[2], q[2];
static char drained[1 << 17];
static size_t drained_len;

static void *drainer(void *arg)
{
    (void)arg;
    usleep(20000); /* main is parked on the full pipe by now */
    ssize_t r;
    while ((r = read(q[0], drained + drained_len, sizeof drained - drained_len)) > 0)
        drained_len += (size_t)r;
    return r == 0 ? NULL : (void *)1;
}

static void *writer(void *arg)
{
    (void)arg;
    usleep(20000);
    if (write(p[1], "preloaded", 9) != 9)
        return (void *)1;
    return NULL;
}

static pthread_mutex_t gm = PTHREAD_MUTEX_INITIALIZER;
static int r[2];
static atomic_int locked;

static void *locker(void *arg)
{
    (void)arg;
    char c;
    if (pthread_mutex_lock(&gm) != 0)
        return (void *)1;
    atomic_store(&locked, 1);
    if (read(r[0], &c, 1) != 1) /* parks, holding gm */
        return (void *)1;
    return pthread_mutex_unlock(&gm) == 0 ? NULL : (void *)1;
}

static void *late_writer(void *arg)
{
    (void)arg;
    usleep(20000); /* main waits for gm by now */
    return write(r[1], "x", 1) == 1 ? NULL : (void *)1;
}

static atomic_int flag;

static void *flag_setter(void *arg)
{
    (void)arg;
    atomic_store(&flag, 1);
    return NULL;
}

static atomic_uint word;

static void *word_waker(void *arg)
{
    (void)arg;
    usleep(20000); /* main waits on the word by now */
    atomic_store(&word, 1);
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    return NULL;
}

int main(void)
{
    int (*create)(uint64_t *, const void *, void *(*)(void *), void *) =
        (int (*)(uint64_t *, const void *, void *(*)(void *), void *))dlsym(
            RTLD_DEFAULT, "cap_thread_create");
    int (*join)(uint64_t, void **) =
        (int (*)(uint64_t, void **))dlsym(RTLD_DEFAULT, "cap_thread_join");
    if (create == NULL || join == NULL) {
        fprintf(stderr, "libcapriccio is not preloaded\n");
        return 1;
    }
    if (pipe(p) != 0)
        return 1;
    uint64_t t;
    if (create(&t, NULL, writer, NULL) != 0)
        return 1;
    char buf[16] = { 0 };
    if (read(p[0], buf, sizeof buf) != 9 || memcmp(buf, "preloaded", 9) != 0) {
        fprintf(stderr, "read gave the wrong data\n");
        return 1;
    }
    void *ret = (void *)1;
    if (join(t, &ret) != 0 || ret != NULL)
        return 1;

    if (pipe(q) != 0)
        return 1;
    static char zeros[1 << 16];
    int size = fcntl(q[1], F_GETPIPE_SZ);
    if (size <= 0 || size > (int)sizeof zeros || write(q[1], zeros, (size_t)size) != size)
        return 1; /* the pipe is full now */
    FILE *out = fdopen(q[1], "w");
    if (out == NULL || create(&t, NULL, drainer, NULL) != 0)
        return 1;
    if (fprintf(out, "stdio %s\n", "parks") != 12 || fclose(out) != 0)
        return 1;
    ret = (void *)1;
    if (join(t, &ret) != 0 || ret != NULL || drained_len != (size_t)size + 12 ||
        memcmp(drained + size, "stdio parks\n", 12) != 0) {
        fprintf(stderr, "the pipe gave the wrong data\n");
        return 1;
    }

    /* The same on a wide stream. */
    drained_len = 0;
    if (pipe(q) != 0 || write(q[1], zeros, (size_t)size) != size)
        return 1;
    out = fdopen(q[1], "w");
    if (out == NULL || fwide(out, 1) <= 0 || create(&t, NULL, drainer, NULL) != 0)
        return 1;
    if (fputws(L"wide parks\n", out) < 0 || fclose(out) != 0)
        return 1;
    ret = (void *)1;
    if (join(t, &ret) != 0 || ret != NULL || drained_len != (size_t)size + 11 ||
        memcmp(drained + size, "wide parks\n", 11) != 0) {
        fprintf(stderr, "the wide stream's pipe gave the wrong data\n");
        return 1;
    }
    /* A glibc mutex held across a park. */
    uint64_t w;
    if (pipe(r) != 0 || create(&t, NULL, locker, NULL) != 0)
        return 1;
    while (!atomic_load(&locked))
        usleep(1000);
    if (create(&w, NULL, late_writer, NULL) != 0 || pthread_mutex_lock(&gm) != 0 ||
        pthread_mutex_unlock(&gm) != 0)
        return 1;
    void *ret2 = (void *)1;
    ret = (void *)1;
    if (join(t, &ret) != 0 || ret != NULL || join(w, &ret2) != 0 || ret2 != NULL) {
        fprintf(stderr, "the glibc mutex case failed\n");
        return 1;
    }
    /* A spin on sched_yield for another user thread, and a futex wait
     * through syscall() for one: each ran the kernel's on main's worker,
     * where the other thread never ran with one worker. */
    if (create(&t, NULL, flag_setter, NULL) != 0)
        return 1;
    for (long i = 0; !atomic_load(&flag) && i < 1000000; i++)
        sched_yield();
    if (!atomic_load(&flag) || join(t, NULL) != 0) {
        fprintf(stderr, "sched_yield did not let the other thread run\n");
        return 1;
    }
    if (create(&t, NULL, word_waker, NULL) != 0)
        return 1;
    struct timespec ten = { 10, 0 };
    while (atomic_load(&word) == 0)
        if (syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ten, NULL, 0) != 0 &&
            errno != EAGAIN) {
            fprintf(stderr, "the futex wait through syscall() failed: %d\n", errno);
            return 1;
        }
    if (join(t, NULL) != 0)
        return 1;
    puts("preload ok");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * A pthread program with functions of its own named as functions of
 * <fcntl.h>, which <pthread.h> and <semaphore.h> do not declare: GLib's
 * gio/tests/basic-application.c has a static `open` with another
 * signature. Compiled with -Werror after the forced include: the header
 * once brought <fcntl.h> in, and such a program did not compile
 * ("conflicting types for 'open'").
 *
 * With OWN_UNISTD_NAMES (compiled so with _POSIX_C_SOURCE), names of
 * <unistd.h> too, which the header included as well. Under _GNU_SOURCE
 * (the header's default) <signal.h> brings <unistd.h> in itself (glibc's
 * SIGSTKSZ calls sysconf), as it does in a program without the header.
 *
 * And a struct named thread_local, as git's builtin/index-pack.c has:
 * the header once included <threads.h>, which defines thread_local as
 * _Thread_local, and git did not compile ("expected '{' before
 * '_Thread_local'").
 */
#include <pthread.h>
#include <semaphore.h>

static int opened;

static void open(const char *what, int times)
{
    opened += times + (what[0] != '\0');
}

static int fcntl = 1, creat = 1, openat = 1;

struct thread_local {
    int pack_fd;
};

static struct thread_local nothread_data = { 1 };

#ifdef OWN_UNISTD_NAMES
static int written;

static long write(int value)
{
    written += value;
    return written;
}

static int close(void)
{
    return written;
}

static int pipe, access, link, pause, alarm, dup, unlink, getpid;
#endif

static void *run(void *arg)
{
    open((const char *)arg, 2);
#ifdef OWN_UNISTD_NAMES
    write(3);
#endif
    return NULL;
}

int main(void)
{
    pthread_t t;
    sem_t sem;
    int sum;
    if (pthread_create(&t, NULL, run, "x") != 0 || pthread_join(t, NULL) != 0)
        return 1;
    if (sem_init(&sem, 0, 1) != 0 || sem_wait(&sem) != 0 || sem_destroy(&sem) != 0)
        return 1;
    sum = opened + fcntl + creat + openat + nothread_data.pack_fd;
#ifdef OWN_UNISTD_NAMES
    sum += close() + pipe + access + link + pause + alarm + dup + unlink + getpid;
    return sum == 10 ? 0 : 1;
#else
    return sum == 7 ? 0 : 1;
#endif
}

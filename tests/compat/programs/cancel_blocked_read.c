/* SPDX-License-Identifier: MIT */
/* Description: read() is a cancellation point. A thread blocked in read()
 * on an empty pipe is cancelled: its cleanup handlers run innermost
 * first, join reports PTHREAD_CANCELED, and the pipe still works (a later
 * read gets the data). A thread with a cancel already pending acts on
 * entering read() and leaves the data in the pipe. A thread with
 * cancellation disabled finishes its read normally and is cancelled at
 * the next cancellation point after enabling it again. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int fds[2];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int ready;
static char trail[8];
static int n;
static char got;

static void note(void *arg)
{
    trail[n++] = *(char *)arg;
}

static void set_ready(void)
{
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_mutex_unlock(&m);
}

static void wait_ready(void)
{
    for (;;) {
        pthread_mutex_lock(&m);
        int r = ready;
        pthread_mutex_unlock(&m);
        if (r)
            break;
        usleep(100);
    }
    usleep(10000); /* let it block in read(); it is cancelled either way */
}

static void *reader(void *arg)
{
    (void)arg;
    char c;
    pthread_cleanup_push(note, "a");
    pthread_cleanup_push(note, "b");
    set_ready();
    while (read(fds[0], &c, 1) >= 0) /* nothing is written while it waits */
        ;
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *self_cancelling(void *arg)
{
    (void)arg;
    char c = 0;
    pthread_cancel(pthread_self());
    if (read(fds[0], &c, 1) == 1) /* acts on entry */
        got = c;
    return (void *)1;
}

static void *stubborn(void *arg)
{
    (void)arg;
    char c = 0;
    EXPECT_EQ(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL), 0);
    set_ready();
    EXPECT_EQ(read(fds[0], &c, 1), 1);
    got = c;
    EXPECT_EQ(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL), 0);
    if (read(fds[0], &c, 1) == 1) /* a cancellation point: acts on entry */
        got = 'r';
    return (void *)2;
}

int main(void)
{
    EXPECT_EQ(pipe(fds), 0);
    pthread_t t;
    void *ret = NULL;

    EXPECT_EQ(pthread_create(&t, NULL, reader, NULL), 0);
    wait_ready();
    EXPECT_EQ(pthread_cancel(t), 0);
    EXPECT_EQ(pthread_join(t, &ret), 0);
    EXPECT(ret == PTHREAD_CANCELED);
    trail[n] = 0;
    EXPECT_EQ(strcmp(trail, "ba"), 0);
    char c = 0;
    EXPECT_EQ(write(fds[1], "x", 1), 1);
    EXPECT_EQ(read(fds[0], &c, 1), 1);
    EXPECT_EQ(c, 'x');

    EXPECT_EQ(write(fds[1], "y", 1), 1);
    EXPECT_EQ(pthread_create(&t, NULL, self_cancelling, NULL), 0);
    EXPECT_EQ(pthread_join(t, &ret), 0);
    EXPECT(ret == PTHREAD_CANCELED);
    EXPECT_EQ(got, 0);
    EXPECT_EQ(read(fds[0], &c, 1), 1);
    EXPECT_EQ(c, 'y');

    ready = 0;
    EXPECT_EQ(pthread_create(&t, NULL, stubborn, NULL), 0);
    wait_ready();
    EXPECT_EQ(pthread_cancel(t), 0);
    usleep(10000);
    EXPECT_EQ(write(fds[1], "zz", 2), 2);
    EXPECT_EQ(pthread_join(t, &ret), 0);
    EXPECT(ret == PTHREAD_CANCELED);
    EXPECT_EQ(got, 'z');
    EXPECT_EQ(read(fds[0], &c, 1), 1); /* the second byte was left */
    EXPECT_EQ(c, 'z');
    return 0;
}

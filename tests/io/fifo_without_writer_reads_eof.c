/* SPDX-License-Identifier: MIT */
/* Description: a blocking read of a FIFO that never had a writer returns 0
 * at once, as Linux's does, although poll reports nothing there (the
 * FIFO opened non-blocking, then set blocking: io/fifo.h). The check
 * takes nothing from the FIFO: once a writer is open the read parks only
 * its thread and returns the writer's bytes, in order; after the writer
 * closes, 0 again. An alarm turns the old hang into a failure. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/io_util.h"

static int rd;

static void *reader(void *arg)
{
    (void)arg;
    char buf[8];
    ssize_t n = read(rd, buf, sizeof buf);
    CHECK_EQ(n, 3);
    CHECK(memcmp(buf, "abc", 3) == 0);
    return NULL;
}

int main(void)
{
    alarm(20);
    char path[32];
    temp_fifo(path);

    rd = open(path, O_RDONLY | O_NONBLOCK);
    CHECK_GE(rd, 0);
    CHECK_EQ(fcntl(rd, F_SETFL, 0), 0);
    char buf[8];
    for (int i = 0; i < 3; i++)
        CHECK_EQ(read(rd, buf, sizeof buf), 0); /* no writer ever: EOF */

    int wr = open(path, O_WRONLY | O_NONBLOCK);
    CHECK_GE(wr, 0);
    CHECK_EQ(fcntl(wr, F_SETFL, 0), 0);
    for (int round = 0; round < 50; round++) {
        cap_thread_t t = spawn(reader, NULL); /* parks: a writer is open */
        cap_yield();
        CHECK_EQ(write(wr, "abc", 3), 3);
        join(t);
    }
    CHECK_EQ(close(wr), 0);
    CHECK_EQ(read(rd, buf, sizeof buf), 0); /* the writer came and went */
    CHECK_EQ(close(rd), 0);
    CHECK_EQ(unlink(path), 0);
    printf("ok\n");
    return 0;
}

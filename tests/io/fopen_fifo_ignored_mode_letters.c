/* SPDX-License-Identifier: MIT */
/* Description: fopen() of a FIFO with a mode holding a letter glibc
 * ignores ("rt", "wt", as ported code writes them) parks only the
 * calling user thread like any other mode: on one worker the thread
 * that opens the other end runs meanwhile, and the line arrives. The
 * ignored letter changes nothing else: "rt" reads, "wt" writes. */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "io/io_util.h"

static char fifo[32];
static atomic_int reader_in;
static char line[16];

static void *fifo_reader(void *arg)
{
    (void)arg;
    atomic_store(&reader_in, 1);
    FILE *in = fopen(fifo, "rt"); /* waits for a writer */
    CHECK(in != NULL);
    CHECK_EQ(fcntl(fileno(in), F_GETFL) & O_ACCMODE, O_RDONLY);
    CHECK(fgets(line, sizeof line, in) == line);
    CHECK_EQ(fclose(in), 0);
    return NULL;
}

int main(void)
{
    temp_fifo(fifo);
    cap_thread_t t = spawn(fifo_reader, NULL);
    while (!atomic_load(&reader_in))
        cap_yield();
    cap_usleep(5000); /* the reader is in its fopen by now */
    FILE *out = fopen(fifo, "wt");
    CHECK(out != NULL);
    CHECK_EQ(fcntl(fileno(out), F_GETFL) & O_ACCMODE, O_WRONLY);
    CHECK_EQ(fputs("through\n", out), 1);
    CHECK_EQ(fclose(out), 0);
    join(t);
    CHECK_EQ(strcmp(line, "through\n"), 0);
    unlink(fifo);
    return 0;
}

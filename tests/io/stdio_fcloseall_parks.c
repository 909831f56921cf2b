/* SPDX-License-Identifier: MIT */
/* Description: fcloseall on a user thread with a stream's output waiting
 * behind a full pipe parks that thread until the pipe's reader, a user
 * thread of the same worker (CAP_WORKERS=1), drains it. glibc's
 * fcloseall writes every stream with its blocking write, under its list
 * lock, so before the worker blocked and the reader never ran (a hang).
 * The bytes arrive whole and in order and fcloseall returns 0; a stream
 * whose pipe's reader is gone makes it return EOF, as glibc's does. */
#include <stdio.h>
#include <string.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "io/pipe_drain.h"

/* glibc's fcloseall unbuffers a stream without freeing its buffer (so a
 * thread still in a call keeps a valid one): a leak LeakSanitizer
 * reports with glibc alone too. */
static void buffer_may_leak(FILE *f)
{
#if defined(__SANITIZE_ADDRESS__)
    __lsan_ignore_object(f->_IO_buf_base);
#else
    (void)f;
#endif
}

int main(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    rfd = p[0];
    FILE *out = fdopen(p[1], "w");
    CHECK(out != NULL);
    expect_len = 0;
    expect_zeros((size_t)fill_pipe(p[1]));
    static char tail[3000];
    for (size_t i = 0; i < sizeof tail; i++)
        tail[i] = (char)('a' + i % 26);
    CHECK_EQ(fwrite(tail, 1, sizeof tail, out), sizeof tail); /* buffered */
    expect_add(tail, sizeof tail);

    struct drain d = { 0, NULL };
    cap_thread_t t = spawn(drainer, &d);
    buffer_may_leak(out);
    CHECK_EQ(fcloseall(), 0); /* glibc's blocked the worker: the drainer never ran */
    CHECK_EQ(fclose(out), 0);
    join_and_check(t, &d);

    /* A write error still reaches the caller. */
    signal(SIGPIPE, SIG_IGN);
    CHECK_EQ(pipe(p), 0);
    FILE *broken = fdopen(p[1], "w");
    CHECK(broken != NULL);
    CHECK_EQ(fputs("lost", broken), 1);
    CHECK_EQ(close(p[0]), 0);
    buffer_may_leak(broken);
    CHECK_EQ(fcloseall(), EOF);
    CHECK(ferror(broken));
    CHECK_EQ(fclose(broken), 0); /* glibc dropped the bytes it could not write */
    return 0;
}

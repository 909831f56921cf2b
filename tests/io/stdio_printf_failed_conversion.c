/* SPDX-License-Identifier: MIT */
/* Description: a printf whose conversion fails (a wide string that the C
 * locale cannot convert: EILSEQ) returns -1 with that errno, as glibc's
 * does, and the text before the failed conversion still reaches the
 * stream, as glibc puts it there; none after it. Only "abc" was lost. */
#include <wchar.h>

#include "io/io_util.h"

int main(void)
{
    int pfd[2];
    CHECK_EQ(pipe(pfd), 0);
    FILE *f = fdopen(pfd[1], "w");
    CHECK(f != NULL);
    wchar_t bad[] = { 0x100, 0 };
    errno = 0;
    CHECK_EQ(fprintf(f, "abc%lsdef", bad), -1);
    CHECK_EQ(errno, EILSEQ);
    CHECK_EQ(fprintf(f, "|%d|", 42), 4); /* the stream goes on */
    CHECK_EQ(fclose(f), 0);
    char buf[64] = "";
    ssize_t n = read(pfd[0], buf, sizeof buf - 1);
    CHECK_EQ(n, 7);
    CHECK_EQ(memcmp(buf, "abc|42|", 7), 0);
    CHECK_EQ(close(pfd[0]), 0);
    return 0;
}

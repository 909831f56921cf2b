/* SPDX-License-Identifier: MIT */
/* A program with no recursion: the stack bound of `serve` is exact and is
 * the sum of the frames on serve -> parse -> header (about 4 + 8 + 2 KB);
 * `logger` calls an external function and a function pointer, so its
 * bound is only a lower one, and both calls are listed. Compiled with
 * -fcallgraph-info=su by tests/stacktool/test_stackgraph.py; never run. */
#include <stdio.h>

#define FRAME(n) volatile char f[n]; f[0] = (char)x; f[n - 1] = (char)x

__attribute__((noinline)) int header(int x) { FRAME(2000); return f[1]; }
__attribute__((noinline)) int body(int x) { FRAME(1000); return f[1]; }
__attribute__((noinline)) int parse(int x) { FRAME(8000); return header(x) + body(x) + f[1]; }
__attribute__((noinline)) int serve(int x) { FRAME(4000); return parse(x) + f[1]; }

int (*hook)(int);

__attribute__((noinline)) int logger(int x)
{
    FRAME(100);
    printf("%d\n", x);
    return hook(x) + f[1];
}

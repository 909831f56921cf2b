/* SPDX-License-Identifier: MIT */
/* The call graph of the Capriccio paper's Figure 5, as C: frames of about
 * main 0.5 KB, A 0.8, B 1.0, C 0.2, D 0.2, E 0.1 (arrays a little smaller,
 * leaving room for what the compiler adds), C and E mutually recursive.
 * Compiled with -fcallgraph-info=su by tests/stacktool/test_stackgraph.py;
 * never run. */
#define FRAME(n) volatile char f[n]; f[0] = (char)x; f[n - 1] = (char)x

__attribute__((noinline)) int B(int x) { FRAME(960); return f[1]; }
__attribute__((noinline)) int D(int x) { FRAME(160); return f[1]; }
__attribute__((noinline)) int A(int x) { FRAME(740); return B(x) + D(x) + f[1]; }
__attribute__((noinline)) int C(int x);
__attribute__((noinline)) int E(int x) { FRAME(64); return x > 0 ? C(x - 1) : f[1]; }
__attribute__((noinline)) int C(int x) { FRAME(160); return D(x) + E(x) + f[1]; }

int main(int argc, char **argv)
{
    int x = argc;
    FRAME(460);
    (void)argv;
    return A(x) + C(x) + f[1];
}

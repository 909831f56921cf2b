/* SPDX-License-Identifier: MIT */
/* Description: every way a C function takes arguments and returns
 * values survives a call that links a new chunk: integer and vector
 * register arguments, arguments on the stack (copied to the new chunk),
 * varargs (found through the old stack), and returns in rax:rdx, xmm0:xmm1
 * and x87 (long double). Each callee is called from so close to the end of
 * its chunk that it must link one, which the counters confirm. */
#include <stdarg.h>
#include <stdio.h>

#include "linked_util.h"

#define BIG_FRAME volatile char pad[3000]; pad[0] = 1

struct pair { long a, b; };
struct dpair { double x, y; };

static __attribute__((noinline)) long many(long a, long b, long c, long d, long e, long f,
                                           long g, long h, long i, long j)
{
    BIG_FRAME;
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j + pad[0];
}

static __attribute__((noinline)) double floats(double a, float b, double c, double d, double e,
                                               double f, double g, double h, double i, double j)
{
    BIG_FRAME;
    return a + b * 2 + c * 3 + d * 4 + e * 5 + f * 6 + g * 7 + h * 8 + i * 9 + j * 10 + pad[0];
}

static __attribute__((noinline)) long sum_va(int n, ...)
{
    BIG_FRAME;
    va_list ap;
    va_start(ap, n);
    long s = 0;
    for (int k = 0; k < n; k++)
        s += va_arg(ap, long) * (k + 1);
    va_end(ap);
    return s + pad[0];
}

static __attribute__((noinline)) double sum_va_double(int n, ...)
{
    BIG_FRAME;
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int k = 0; k < n; k++)
        s += va_arg(ap, double) * (k + 1);
    va_end(ap);
    return s + pad[0];
}

static __attribute__((noinline)) struct pair two(long a)
{
    BIG_FRAME;
    return (struct pair){ a + pad[0], -a };
}

static __attribute__((noinline)) struct dpair dtwo(double a)
{
    BIG_FRAME;
    return (struct dpair){ a * 2 + pad[0], -a };
}

static __attribute__((noinline)) long double ld(long double a)
{
    BIG_FRAME;
    return a * 3 + pad[0];
}

struct results {
    long many, va;
    double floats, va_double;
    struct pair p;
    struct dpair q;
    long double ld;
};

/* Calls nothing built without -fsplit-stack (no libc, no CHECK), so that
 * lld leaves its prologue alone and each callee has to link its chunk. */
static __attribute__((noinline)) long call_all(struct results *r)
{
    r->many = many(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    r->floats = floats(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    r->va = sum_va(12, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L);
    r->va_double = sum_va_double(10, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0);
    r->p = two(41);
    r->q = dtwo(1.5);
    r->ld = ld(2.5L);
    return 0;
}

/* Goes down until the current chunk has less room than a BIG_FRAME. */
static __attribute__((noinline)) long descend(long n)
{
    volatile char pad[256];
    pad[0] = 1;
    if ((uintptr_t)__builtin_frame_address(0) - stack_limit() > 2900)
        return descend(n) + pad[0] - 1;
    return call_all((struct results *)n);
}

static void *run(void *arg)
{
    struct results r;
    cap_stack_stats_t before = stats();
    descend((long)&r);
    cap_stack_stats_t after = stats();
    CHECK_EQ(r.many, 386);
    CHECK(r.floats == 386.0);
    CHECK_EQ(r.va, 651);
    CHECK(r.va_double == 386.0);
    CHECK_EQ(r.p.a, 42);
    CHECK_EQ(r.p.b, -41);
    CHECK(r.q.x == 4.0 && r.q.y == -1.5);
    CHECK(r.ld == 8.5L);
    CHECK_GE(after.chunks_linked - before.chunks_linked, 7); /* one per callee */
    return arg;
}

int main(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, run, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    return 0;
}

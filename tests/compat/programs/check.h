/* SPDX-License-Identifier: MIT */
/* A tiny assertion for the compatibility programs, which must stay plain
 * POSIX (so not tests/check.h's home). Prints both values, exits 1. */
#ifndef COMPAT_CHECK_H
#define COMPAT_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define EXPECT_EQ(a, b)                                                          \
    do {                                                                         \
        long long expect_a_ = (long long)(a), expect_b_ = (long long)(b);        \
        if (expect_a_ != expect_b_) {                                            \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld vs %lld\n", __FILE__,  \
                    __LINE__, #a, #b, expect_a_, expect_b_);                     \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define EXPECT(cond) EXPECT_EQ(!!(cond), 1)

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Assertions for test programs: each prints the expression, both values
 * and the location, then exits 1. Exit 77 means "skipped" to CTest.
 */
#ifndef CAP_TESTS_CHECK_H
#define CAP_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define CHECK_CMP(a, op, b)                                                      \
    do {                                                                         \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);          \
        if (!(check_a_ op check_b_)) {                                           \
            fprintf(stderr, "%s:%d: CHECK(%s %s %s) failed: %lld vs %lld\n",     \
                    __FILE__, __LINE__, #a, #op, #b, check_a_, check_b_);        \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define CHECK_EQ(a, b) CHECK_CMP(a, ==, b)
#define CHECK_NE(a, b) CHECK_CMP(a, !=, b)
#define CHECK_LT(a, b) CHECK_CMP(a, <, b)
#define CHECK_LE(a, b) CHECK_CMP(a, <=, b)
#define CHECK_GE(a, b) CHECK_CMP(a, >=, b)
#define CHECK_GT(a, b) CHECK_CMP(a, >, b)

#define SKIP(why)                                                                \
    do {                                                                         \
        fprintf(stderr, "skipped: %s\n", why);                                   \
        exit(77);                                                                \
    } while (0)

#endif /* CAP_TESTS_CHECK_H */

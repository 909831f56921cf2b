// SPDX-License-Identifier: MIT
// Helpers for the C++ tests of tests/sync/cxx: user threads started and
// joined through the library's own API, checked.
#ifndef CAP_TESTS_SYNC_CXX_UTIL_H
#define CAP_TESTS_SYNC_CXX_UTIL_H

#include <capriccio.h>

#include "check.h"

static inline cap_thread_t spawn(void *(*fn)(void *), void *arg)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, nullptr, fn, arg), 0);
    return t;
}

static inline void join(cap_thread_t t)
{
    CHECK_EQ(cap_thread_join(t, nullptr), 0);
}

#endif // CAP_TESTS_SYNC_CXX_UTIL_H

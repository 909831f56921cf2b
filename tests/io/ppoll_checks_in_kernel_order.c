/* SPDX-License-Identifier: MIT */
/* Description: ppoll checks its arguments in the kernel's order, so a
 * call with more than one thing wrong fails as on Linux: a malformed
 * timeout is EINVAL even when the array is not there (the runtime looked
 * at the array first and said EFAULT), and so are more descriptors than
 * RLIMIT_NOFILE allows (poll too; under a limit below 1024 the runtime
 * said EFAULT); an unreadable mask comes before the array too. */
#include <sys/mman.h>

#include "io/io_util.h"

int main(void)
{
    void *unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(unmapped != MAP_FAILED);
    struct pollfd *no_array = unmapped;
    struct timespec bad = { -1, 0 }, zero = { 0, 0 };
    sigset_t *no_mask = unmapped;

    errno = 0;
    CHECK_EQ(ppoll(no_array, 1, &bad, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    /* A low limit, so that the array past it fits in the page (ASan's
     * own ppoll looks at the whole array first). */
    struct rlimit r;
    CHECK_EQ(getrlimit(RLIMIT_NOFILE, &r), 0);
    struct rlimit low = { 200, r.rlim_max };
    CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    errno = 0;
    CHECK_EQ(ppoll(no_array, 201, &bad, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(ppoll(no_array, 201, &zero, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(poll(no_array, 201, 0), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(setrlimit(RLIMIT_NOFILE, &r), 0);
    errno = 0;
    CHECK_EQ(ppoll(no_array, 1, &zero, no_mask), -1);
    CHECK_EQ(errno, EFAULT);
    /* One thing wrong at a time still says what it is. */
    errno = 0;
    CHECK_EQ(ppoll(no_array, 1, &zero, NULL), -1);
    CHECK_EQ(errno, EFAULT);
    struct pollfd p = { .fd = -1 };
    errno = 0;
    CHECK_EQ(ppoll(&p, 1, &bad, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ppoll(&p, 1, &zero, NULL), 0);
    return 0;
}

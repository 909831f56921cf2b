/* SPDX-License-Identifier: MIT */
/* Description: ppoll checks its arguments in the kernel's order, so a
 * call with more than one thing wrong fails as on Linux: a malformed
 * timeout is EINVAL even when the array is not there (the runtime looked
 * at the array first and said EFAULT), or when there are more
 * descriptors than RLIMIT_NOFILE allows; an unreadable mask comes
 * before the array too. */
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
    struct rlimit r;
    CHECK_EQ(getrlimit(RLIMIT_NOFILE, &r), 0);
    errno = 0;
    CHECK_EQ(ppoll(no_array, (nfds_t)r.rlim_cur + 1, &bad, NULL), -1);
    CHECK_EQ(errno, EINVAL);
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

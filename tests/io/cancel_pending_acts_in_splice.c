/* SPDX-License-Identifier: MIT */
/* Description: splice, tee and vmsplice are cancellation points, as
 * glibc's are (SYSCALL_CANCEL there; POSIX does not name them): a cancel
 * pending at entry acts before the call moves anything. Each cancelled
 * call would move 4 bytes into the destination pipe, which stays empty.
 * The library made them no points, so a cancelled thread went on moving
 * data and was cancelled only at its next point. */
#include <fcntl.h>
#include <sys/uio.h>

#include "io/io_util.h"

enum kind { SPLICE, TEE, VMSPLICE };

static int src[2], dst[2];
static atomic_int ran; /* calls that returned before the cancel acted */

static long call(enum kind k)
{
    switch (k) {
    case SPLICE: return splice(src[0], NULL, dst[1], NULL, 4, SPLICE_F_NONBLOCK);
    case TEE: return tee(src[0], dst[1], 4, SPLICE_F_NONBLOCK);
    case VMSPLICE: {
        struct iovec v = { .iov_base = "data", .iov_len = 4 };
        return vmsplice(dst[1], &v, 1, SPLICE_F_NONBLOCK);
    }
    }
    return -1;
}

static void *self_cancelling(void *arg)
{
    enum kind k = (enum kind)(long)arg;
    CHECK_EQ(cap_thread_cancel(cap_thread_self()), 0);
    call(k);
    atomic_fetch_add(&ran, 1);
    cap_testcancel();
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(src), 0);
    CHECK_EQ(pipe(dst), 0);
    CHECK_EQ(write(src[1], "data", 4), 4);
    for (long k = SPLICE; k <= VMSPLICE; k++)
        CHECK(join(spawn(self_cancelling, (void *)k)) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&ran), 0);
    /* Nothing reached the destination; the source still holds its bytes. */
    CHECK_EQ(fcntl(dst[0], F_SETFL, O_NONBLOCK), 0);
    char buf[8];
    CHECK_EQ(read(dst[0], buf, sizeof buf), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(read(src[0], buf, sizeof buf), 4);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(close(src[i]), 0);
        CHECK_EQ(close(dst[i]), 0);
    }
    printf("ok\n");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: posting a semaphore already at CAP_SEM_VALUE_MAX fails with
 * EOVERFLOW and leaves the value alone; one wait makes room again. */
#include "util.h"

int main(void)
{
    cap_sem_t s;
    int v = 0;
    CHECK_EQ(cap_sem_init(&s, 0, CAP_SEM_VALUE_MAX - 1), 0);
    CHECK_EQ(cap_sem_post(&s), 0);
    CHECK_EQ(cap_sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, CAP_SEM_VALUE_MAX);
    CHECK_EQ(cap_sem_post(&s), EOVERFLOW);
    CHECK_EQ(cap_sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, CAP_SEM_VALUE_MAX);
    CHECK_EQ(cap_sem_wait(&s), 0);
    CHECK_EQ(cap_sem_post(&s), 0);
    CHECK_EQ(cap_sem_post(&s), EOVERFLOW);
    CHECK_EQ(cap_sem_destroy(&s), 0);
    return 0;
}

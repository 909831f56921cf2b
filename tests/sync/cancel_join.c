/* SPDX-License-Identifier: MIT */
/* Description: a thread blocked in cap_thread_join is cancelled: it exits
 * with CAP_CANCELED, and the thread it was joining stays joinable, so a
 * second join collects it normally. */
#include "util.h"

static cap_sem_t release_target, joining;

static void *target(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_sem_wait(&release_target), 0);
    return (void *)(intptr_t)42;
}

static void *joiner(void *arg)
{
    cap_thread_t t = *(cap_thread_t *)arg;
    CHECK_EQ(cap_sem_post(&joining), 0);
    cap_thread_join(t, NULL); /* cancelled here */
    CHECK(0);                 /* never reached */
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&release_target, 0, 0), 0);
    CHECK_EQ(cap_sem_init(&joining, 0, 0), 0);
    cap_thread_t t = spawn(target, NULL);
    cap_thread_t j = spawn(joiner, &t);
    CHECK_EQ(cap_sem_wait(&joining), 0);
    cap_yield();
    CHECK_EQ(cap_thread_cancel(j), 0);
    CHECK(join(j) == CAP_CANCELED);
    CHECK_EQ(cap_sem_post(&release_target), 0);
    CHECK_EQ((intptr_t)join(t), 42); /* still joinable */
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: <capriccio/pthread.h> really maps the pthread names onto
 * this library (the compat tests cannot tell, since they pass on glibc
 * too): pthread_self is cap_thread_self, the types are ours, errno goes
 * through the non-const accessor, sem_* keep the -1/errno convention, and
 * a header included again afterwards changes nothing. */
#include <capriccio/pthread.h>
#include <pthread.h> /* a no-op now */
#include <semaphore.h>

#include "check.h"

static void *who(void *arg)
{
    (void)arg;
    return (void *)(uintptr_t)(pthread_self() == cap_thread_self() && pthread_self() != 0);
}

int main(void)
{
    _Static_assert(sizeof(pthread_mutex_t) == sizeof(cap_mutex_t), "mutex type");
    _Static_assert(sizeof(pthread_cond_t) == sizeof(cap_cond_t), "cond type");
    _Static_assert(sizeof(sem_t) == sizeof(cap_sem_t), "sem type");
    _Static_assert(sizeof(pthread_t) == sizeof(cap_thread_t), "thread type");

    CHECK(cap_worker_id() >= 0); /* main is a user thread */
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, who, NULL), 0);
    void *ok = NULL;
    CHECK_EQ(pthread_join(t, &ok), 0);
    CHECK(ok == (void *)1);

    CHECK(&errno == cap_errno_location());
    errno = 1234;
    CHECK_EQ(*cap_errno_location(), 1234);

    sem_t s;
    CHECK_EQ(sem_init(&s, 0, 0), 0);
    errno = 0;
    CHECK_EQ(sem_trywait(&s), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(sem_post(&s), 0);
    CHECK_EQ(cap_sem_trywait(&s), 0); /* the same object */
    CHECK_EQ(sem_destroy(&s), 0);

    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(cap_mutex_trylock(&m), EBUSY);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK(PTHREAD_CANCELED == CAP_CANCELED);
    return 0;
}

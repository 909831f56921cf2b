/* SPDX-License-Identifier: MIT */
/* Description: a writer-preferring glibc rwlock held for reading by a
 * thread made with glibc's pthread_create; a second such thread asks to
 * write with a short timeout, which keeps new readers out meanwhile; a
 * user thread then asks to read, and parks. When the writer gives up
 * (inside glibc, which lets readers in again and wakes its own, but no
 * wrapper runs), the user thread must get its read lock while the first
 * reader still holds its own. Before, it stayed parked until an unlock
 * made through a wrapper, here never: the first reader lets go only
 * after the user thread got in (the test hung). Now a parked user thread
 * looks again after each slice of its wait. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util.h"

static pthread_rwlock_t l;
static atomic_int holding, release, writer_in, writer_rc = -1, reader_in;

static void *holder(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_rwlock_rdlock(&l), 0);
    atomic_store(&holding, 1);
    while (!atomic_load(&release))
        usleep(1000);
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    struct timespec abs = ts_after(CLOCK_REALTIME, 100);
    atomic_store(&writer_in, 1);
    atomic_store(&writer_rc, pthread_rwlock_timedwrlock(&l, &abs));
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_rwlock_rdlock(&l), 0);
    atomic_store(&reader_in, 1);
    CHECK_EQ(atomic_load(&release), 0); /* beside the first reader */
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    return NULL;
}

int main(void)
{
    pthread_rwlockattr_t a;
    CHECK_EQ(pthread_rwlockattr_init(&a), 0);
    CHECK_EQ(pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), 0);
    CHECK_EQ(pthread_rwlock_init(&l, &a), 0);
    pthread_t h, w;
    CHECK_EQ(pthread_create(&h, NULL, holder, NULL), 0);
    while (!atomic_load(&holding))
        cap_sleep_ns(1000000);
    CHECK_EQ(pthread_create(&w, NULL, writer, NULL), 0);
    while (!atomic_load(&writer_in))
        cap_sleep_ns(1000000);
    cap_sleep_ns(20000000); /* the writer waits in glibc by now */
    cap_thread_t r = spawn(reader, NULL);
    while (!atomic_load(&reader_in))
        cap_sleep_ns(1000000);
    atomic_store(&release, 1);
    join(r);
    while (pthread_tryjoin_np(w, NULL) != 0)
        cap_sleep_ns(1000000);
    CHECK_EQ(atomic_load(&writer_rc), ETIMEDOUT);
    while (pthread_tryjoin_np(h, NULL) != 0)
        cap_sleep_ns(1000000);
    CHECK_EQ(pthread_rwlock_destroy(&l), 0);
    return 0;
}

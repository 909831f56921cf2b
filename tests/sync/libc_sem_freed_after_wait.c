/* SPDX-License-Identifier: MIT */
/* Description: POSIX lets a semaphore be destroyed and its memory freed
 * as soon as sem_wait has returned in the last thread waiting on it; so
 * sem_post must not touch the semaphore after the wake-up it makes, as
 * glibc's does not. Two threads made with glibc's pthread_create share
 * one CPU; the poster runs at SCHED_IDLE, so the woken waiter runs, and
 * unmaps the semaphore, before the poster's sem_post returns. The first
 * wrapper of sem_post read the semaphore after glibc's post to decide on
 * waking a user thread, and faulted (SIGSEGV) within these rounds. */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

enum { ROUNDS = 2000 };

static sem_t *volatile cur;
static sem_t ready, done;

/* Both threads onto the first CPU this process may use. */
static void pin(void)
{
    cpu_set_t allowed, set;
    CHECK_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int cpu = 0;
    while (!CPU_ISSET(cpu, &allowed))
        cpu++;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    CHECK_EQ(sched_setaffinity(0, sizeof set, &set), 0);
}

static void *waiter(void *arg)
{
    (void)arg;
    pin();
    for (int i = 0; i < ROUNDS; i++) {
        sem_t *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(s != MAP_FAILED);
        CHECK_EQ(sem_init(s, 0, 0), 0);
        cur = s;
        CHECK_EQ(sem_post(&ready), 0);
        while (sem_wait(s) != 0) {
        }
        CHECK_EQ(sem_destroy(s), 0);
        CHECK_EQ(munmap(s, 4096), 0); /* nobody waits on it any more */
        while (sem_wait(&done) != 0) {
        }
    }
    return NULL;
}

static void *poster(void *arg)
{
    (void)arg;
    pin();
    struct sched_param p = { 0 };
    CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_IDLE, &p), 0);
    for (int i = 0; i < ROUNDS; i++) {
        while (sem_wait(&ready) != 0) {
        }
        usleep(200); /* the waiter is asleep in sem_wait by now */
        CHECK_EQ(sem_post(cur), 0);
        CHECK_EQ(sem_post(&done), 0);
    }
    return NULL;
}

int main(void)
{
    CHECK_EQ(sem_init(&ready, 0, 0), 0);
    CHECK_EQ(sem_init(&done, 0, 0), 0);
    pthread_t w, p;
    CHECK_EQ(pthread_create(&w, NULL, waiter, NULL), 0);
    CHECK_EQ(pthread_create(&p, NULL, poster, NULL), 0);
    while (pthread_tryjoin_np(w, NULL) != 0)
        cap_sleep_ns(10000000);
    while (pthread_tryjoin_np(p, NULL) != 0)
        cap_sleep_ns(10000000);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* The threads a fork test leaves running in the parent: one blocked in
 * read() on a pipe, one ticking every millisecond. A child must see
 * neither run (bystanders_ticks does not move there); the parent must
 * find both going on after its children (bystanders_finish). Plain
 * POSIX, like every compatibility program. */
#ifndef COMPAT_BYSTANDERS_H
#define COMPAT_BYSTANDERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"

static int bystanders_wake[2];
static atomic_long bystanders_tick_count;
static atomic_int bystanders_stop;
static pthread_t bystanders_reader_thread, bystanders_ticker_thread;

static void *bystanders_reader(void *arg)
{
    (void)arg;
    char ch;
    EXPECT_EQ(read(bystanders_wake[0], &ch, 1), 1);
    return NULL;
}

static void *bystanders_ticker(void *arg)
{
    (void)arg;
    while (!atomic_load(&bystanders_stop)) {
        atomic_fetch_add(&bystanders_tick_count, 1);
        sleep_ms(1);
    }
    return NULL;
}

static inline long bystanders_ticks(void)
{
    return atomic_load(&bystanders_tick_count);
}

/* Starts both and lets them settle: the reader blocked, the ticker
 * sleeping. */
static inline void bystanders_start(void)
{
    EXPECT_EQ(pipe(bystanders_wake), 0);
    EXPECT_EQ(pthread_create(&bystanders_reader_thread, NULL, bystanders_reader, NULL), 0);
    EXPECT_EQ(pthread_create(&bystanders_ticker_thread, NULL, bystanders_ticker, NULL), 0);
    sleep_ms(20);
}

/* Checks that the ticker still goes on and the reader still waits for
 * its byte, then ends both. */
static inline void bystanders_finish(void)
{
    long t0 = bystanders_ticks();
    sleep_ms(20);
    EXPECT(bystanders_ticks() != t0);
    EXPECT_EQ(write(bystanders_wake[1], "x", 1), 1);
    EXPECT_EQ(pthread_join(bystanders_reader_thread, NULL), 0);
    atomic_store(&bystanders_stop, 1);
    EXPECT_EQ(pthread_join(bystanders_ticker_thread, NULL), 0);
}

#endif

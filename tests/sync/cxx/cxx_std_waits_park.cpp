// SPDX-License-Identifier: MIT
// Description: C++20's waits on user threads. libstdc++ makes
// std::atomic::wait, std::latch and std::counting_semaphore sleep on a
// futex through syscall(2) once a short spin has not seen the change,
// and the library now parks the user thread there (intercept/syscall.c);
// the kernel's futex wait put the worker to sleep, and with one worker
// the thread that was to notify never ran again (a watchdog kernel thread
// fails the test after 20 s instead of letting it hang). Each waiter's
// partner sleeps first (usleep parks it), so the wait outlasts the spin.
#include <capriccio.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <semaphore>
#include <thread>

#include "check.h"
#include "cxx_util.h"

enum { ROUNDS = 20, SLEEP_US = 2000 };

static std::atomic<int> word{ 0 };

static void *atomic_notifier(void *)
{
    usleep(SLEEP_US);
    word.store(1);
    word.notify_one();
    return nullptr;
}

static std::latch *gate;

static void *latch_arriver(void *)
{
    usleep(SLEEP_US);
    gate->count_down();
    return nullptr;
}

static std::counting_semaphore<8> tokens{ 0 };

static void *releaser(void *)
{
    usleep(SLEEP_US);
    tokens.release(2);
    return nullptr;
}

int main()
{
    std::thread watchdog([] {
        sleep(20);
        fprintf(stderr, "a wait did not end in 20 s: it slept its worker\n");
        _exit(1);
    });
    watchdog.detach();

    for (int r = 0; r < ROUNDS; r++) {
        word.store(0);
        cap_thread_t t = spawn(atomic_notifier, nullptr);
        word.wait(0);
        CHECK_EQ(word.load(), 1);
        join(t);

        std::latch l(2);
        gate = &l;
        cap_thread_t a = spawn(latch_arriver, nullptr);
        cap_thread_t b = spawn(latch_arriver, nullptr);
        l.wait();
        join(a);
        join(b);

        t = spawn(releaser, nullptr);
        tokens.acquire();
        tokens.acquire();
        CHECK(!tokens.try_acquire());
        join(t);
    }
    return 0;
}

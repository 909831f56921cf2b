// SPDX-License-Identifier: MIT
// Description: C++20's waits on user threads. libstdc++ makes
// std::atomic::wait, std::latch and std::counting_semaphore sleep on a
// futex through syscall(2) once a short spin has not seen the change,
// and the library now parks the user thread there (intercept/syscall.c);
// the kernel's futex wait put the worker to sleep, and with one worker
// the thread that was to notify never ran again (a watchdog kernel thread
// fails the test after 20 s instead of letting it hang). Each waiter's
// partner sleeps first (usleep parks it), so the wait outlasts the spin.
// Then a crowd of threads waits on one latch: libstdc++'s futex calls are
// shared ones, and on private memory they park the thread too
// (sync/futex_key.c), so the waiters add no kernel threads (each held an
// offload-pool thread before).
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
#include "proc_util.h"

enum { ROUNDS = 20, SLEEP_US = 2000, CROWD = 100 };

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

static std::latch *crowd;
static std::atomic<int> crowd_arrived{ 0 };

static void *crowd_waiter(void *)
{
    crowd_arrived.fetch_add(1);
    crowd->wait();
    return nullptr;
}

static void crowd_waits_without_kernel_threads()
{
    std::latch l(1);
    crowd = &l;
    int before = process_tasks();
    cap_thread_t t[CROWD];
    for (auto &c : t)
        c = spawn(crowd_waiter, nullptr);
    while (crowd_arrived.load() < CROWD)
        usleep(1000);
    usleep(20000); // the waiters go on into their waits meanwhile
    int during = process_tasks();
    if (during >= before + CROWD / 4) {
        print_tasks("while the crowd waits");
        CHECK_LT(during, before + CROWD / 4);
    }
    l.count_down();
    for (auto c : t)
        join(c);
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
    crowd_waits_without_kernel_threads();
    return 0;
}

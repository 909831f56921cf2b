// SPDX-License-Identifier: MIT
// Description: the C++ standard library's locks on user threads. They
// call glibc's pthread names (libstdc++ is built against glibc's
// <pthread.h>), which the library now runs: std::mutex held across a
// park (a read on a pipe) makes another user thread that wants it park
// too, not sleep the worker (with one worker the old code hung there);
// std::condition_variable wait_for times out and notify wakes a waiter;
// std::shared_mutex readers share it; std::call_once whose callable
// throws leaves the flag unset, so the next call runs it again (the
// once control is put back while the exception unwinds through it), also
// while another user thread waits in the same call_once: that one then
// runs its own callable (libstdc++ hands the callable over in __thread
// variables, which the user threads of a worker share: the waiter used to
// call a null pointer).
#include <capriccio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>

#include "check.h"
#include "cxx_util.h"

static std::mutex m;
static int pipefd[2];
static std::atomic<int> got{0}, waiting{0};

static void *holder(void *)
{
    std::lock_guard<std::mutex> g(m);
    char c;
    CHECK_EQ(read(pipefd[0], &c, 1), 1); // parks, holding m
    CHECK_EQ(got.load(), 0);
    return nullptr;
}

static void *waiter(void *)
{
    waiting = 1;
    std::lock_guard<std::mutex> g(m);
    got = 1;
    return nullptr;
}

static void mutex_across_park()
{
    CHECK_EQ(pipe(pipefd), 0);
    cap_thread_t h = spawn(holder, nullptr);
    while (m.try_lock()) { // until the holder has it
        m.unlock();
        cap_yield();
    }
    cap_thread_t w = spawn(waiter, nullptr);
    while (!waiting)
        cap_yield();
    for (int i = 0; i < 20; i++)
        cap_yield();
    CHECK_EQ(got.load(), 0);
    CHECK_EQ(write(pipefd[1], "x", 1), 1);
    join(h);
    join(w);
    CHECK_EQ(got.load(), 1);
}

static std::mutex cm;
static std::condition_variable cv;
static bool ready; // [cm]

static void *notifier(void *)
{
    usleep(20 * 1000);
    {
        std::lock_guard<std::mutex> g(cm);
        ready = true;
    }
    cv.notify_one();
    return nullptr;
}

static void condition_variable()
{
    std::unique_lock<std::mutex> l(cm);
    auto t0 = std::chrono::steady_clock::now();
    CHECK(!cv.wait_for(l, std::chrono::milliseconds(20), [] { return ready; }));
    CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(20));
    cap_thread_t n = spawn(notifier, nullptr);
    cv.wait(l, [] { return ready; });
    l.unlock();
    join(n);
}

static std::shared_mutex sm;
static std::atomic<int> readers_in{0}, max_readers{0};

static void *reader(void *)
{
    std::shared_lock<std::shared_mutex> l(sm);
    int now = ++readers_in;
    int seen = max_readers.load();
    while (now > seen && !max_readers.compare_exchange_weak(seen, now)) {
    }
    while (max_readers.load() < 2) // both readers inside at once
        cap_yield();
    --readers_in;
    return nullptr;
}

static void shared_mutex()
{
    cap_thread_t a, b;
    {
        std::unique_lock<std::shared_mutex> w(sm); // the readers wait for it
        a = spawn(reader, nullptr);
        b = spawn(reader, nullptr);
        for (int i = 0; i < 20; i++)
            cap_yield();
        CHECK_EQ(readers_in.load(), 0);
    }
    join(a);
    join(b);
    CHECK_EQ(max_readers.load(), 2);
}

static std::once_flag once;
static int calls;

static void call_once_retries_after_throw()
{
    bool threw = false;
    try {
        std::call_once(once, [] {
            calls++;
            throw std::runtime_error("first");
        });
    } catch (const std::runtime_error &) {
        threw = true;
    }
    CHECK(threw);
    std::call_once(once, [] { calls++; });
    std::call_once(once, [] { calls++; });
    CHECK_EQ(calls, 2);
}

static std::once_flag contested;
static std::atomic<int> thrower_in{0}, waiter_ran{0};

static void *thrower(void *)
{
    try {
        std::call_once(contested, [] {
            thrower_in = 1;
            usleep(20 * 1000); // parks: the waiter calls call_once meanwhile
            throw std::runtime_error("first");
        });
    } catch (const std::runtime_error &) {
    }
    return nullptr;
}

static void *once_waiter(void *)
{
    while (!thrower_in)
        cap_yield();
    std::call_once(contested, [] { waiter_ran = 1; });
    CHECK_EQ(waiter_ran.load(), 1);
    return nullptr;
}

static void call_once_throw_with_waiter()
{
    cap_thread_t a = spawn(thrower, nullptr);
    cap_thread_t b = spawn(once_waiter, nullptr);
    join(a);
    join(b);
    CHECK_EQ(waiter_ran.load(), 1);
}

int main()
{
    mutex_across_park();
    condition_variable();
    shared_mutex();
    call_once_retries_after_throw();
    call_once_throw_with_waiter();
    return 0;
}

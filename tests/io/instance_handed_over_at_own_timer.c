/* SPDX-License-Identifier: MIT */
/* Description: a worker that holds the descriptor backend's instance
 * while it waits for a timer of its own, and then runs that timer's
 * thread, hands the instance to the worker sleeping on its futex first
 * (io/idle.c, has_local_work), so the other worker's threads get their
 * descriptor events while this one computes. Worker A's thread X sleeps
 * 100 ms and then spins without yielding until worker B's thread Y has
 * read a byte that a child process writes 200 ms in; Y spins for 30 ms
 * first, so A, idle, takes the instance and B, idle later, sleeps on its
 * futex. Before session 67 A's wait ended at its deadline with nothing
 * harvested, A let go as a worker with nothing to run, woke no one, and
 * ran X: nobody held the instance, and X's spin ran out (10 s) with Y
 * still parked. Two workers, threads not moved. */
#include "fork_util.h"
#include "io/io_util.h"
#include "io/worker_roles.h"

enum { ROLE_X = ROLE_NONE + 1, ROLE_Y };

static int p[2];
static atomic_int y_served;
static atomic_int x_saw_y; /* 1: Y was served while X spun; -1: X gave up */

static int write_later(void)
{
    CHECK_EQ(close(p[0]), 0);
    cap_sleep_ns(200000000);
    put_byte(p[1], 'x');
    return 0;
}

static void run_x(void)
{
    cap_sleep_ns(100000000);
    atomic_store(&x_saw_y, roles_compute_until(&y_served, 0, 10000000000ull) ? 1 : -1);
}

static void run_y(void)
{
    roles_compute_until(&y_served, 0, 30000000); /* nobody serves it yet: a 30 ms spin */
    CHECK_EQ(take_byte(p[0]), 'x');
    atomic_store(&y_served, 1);
}

static void play(int role)
{
    if (role == ROLE_X)
        run_x();
    else
        run_y();
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    roles_start(play);
    int x = 0, y = -1;
    for (int i = 1; i < ROLE_CANDIDATES && y < 0; i++)
        if (roles_worker(i) != roles_worker(x))
            y = i;
    if (y < 0)
        SKIP("the candidates did not spread over both workers");
    pid_t writer = fork_child(write_later);
    roles_cast(2, (int[]){ y, x }, (int[]){ ROLE_Y, ROLE_X });
    roles_join();
    CHECK_EQ(child_exit_status(writer), 0);
    int served = atomic_load(&y_served), while_x_spun = atomic_load(&x_saw_y);
    CHECK_EQ(served, 1);
    CHECK_EQ(while_x_spun, 1); /* served while X computed on the other worker */
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: an idle worker that lets go of the descriptor backend's
 * instance with nothing to run, and then takes a thread from another
 * worker without taking the instance again, wakes the worker sleeping on
 * its futex to hold it (io/idle.c, cap__idle_end), so that worker's
 * threads get their descriptor events while this one computes. Three
 * workers: Y on worker B reads bytes from a pipe, one per round; S on
 * worker C computes without yielding and, each round, creates a thread N
 * while A (no thread of the test) and B are idle. The lone new thread's
 * wake-up goes to one of them; when it is A, the holder, A's wait ends
 * with nothing harvested, A lets go as a worker with nothing to run and
 * then steals N. N, on A, asks a child process for a byte to Y and
 * computes until Y has read it (5 s at most). Before session 68 nobody
 * held the instance then (B slept on its futex, C and A computed), and N
 * gave up. N that lands on B ends at once (B must be free to run Y), and
 * S tries again. Threads not moved. */
#include "fork_util.h"
#include "io/io_util.h"
#include "io/worker_roles.h"

enum { ROLE_S = ROLE_NONE + 1, ROLE_Y };
enum { ROUNDS = 24, LANDINGS = 6 };

static int p[2];     /* the child's bytes to Y */
static int go[2];    /* N's requests to the child */
static atomic_int served;      /* bytes Y has read */
static atomic_int worker_a, worker_b; /* ids + 1 */
static atomic_int landings;    /* rounds whose N ran on A */
static atomic_int failures;    /* rounds whose N on A gave up */
static atomic_int n_done;

static int child_echo(void)
{
    CHECK_EQ(close(go[1]), 0);
    CHECK_EQ(close(p[0]), 0);
    char c;
    while (read(go[0], &c, 1) == 1)
        put_byte(p[1], 'x');
    return 0;
}

static void *run_n(void *arg)
{
    (void)arg;
    int here = cap_worker_id() + 1;
    if (here == atomic_load(&worker_a)) {
        int before = atomic_load(&served);
        put_byte(go[1], 'g');
        atomic_fetch_add(&landings, 1);
        if (!roles_compute_until(&served, before, 5000000000ull))
            atomic_fetch_add(&failures, 1);
    }
    atomic_store(&n_done, 1);
    return NULL;
}

static void run_s(void)
{
    for (int round = 0; round < ROUNDS && atomic_load(&landings) < LANDINGS &&
                        atomic_load(&failures) == 0;
         round++) {
        roles_compute_until(NULL, 0, 20000000); /* A and B settle asleep */
        atomic_store(&n_done, 0);
        cap_thread_t n = spawn(run_n, NULL);
        roles_compute_until(&n_done, 0, 10000000000ull);
        join(n);
    }
}

static void run_y(void)
{
    char c;
    while ((c = take_byte(p[0])) != 'q')
        atomic_fetch_add(&served, 1);
}

static void play(int role)
{
    if (role == ROLE_S)
        run_s();
    else
        run_y();
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(pipe(go), 0);
    roles_start(play);
    int s = 0, y = -1, a = -1;
    for (int i = 1; i < ROLE_CANDIDATES; i++)
        if (y < 0 && roles_worker(i) != roles_worker(s))
            y = i;
    for (int w = 1; w <= 3 && y >= 0; w++)
        if (w != roles_worker(s) && w != roles_worker(y))
            a = w;
    if (y < 0 || a < 0)
        SKIP("the candidates did not spread over three workers");
    atomic_store(&worker_a, a);
    atomic_store(&worker_b, roles_worker(y));
    pid_t echo = fork_child(child_echo);
    CHECK_EQ(close(go[0]), 0);
    roles_cast(2, (int[]){ y, s }, (int[]){ ROLE_Y, ROLE_S });
    /* Y, then S: S's rounds end first; then Y is told to stop. */
    join(role_threads[s]);
    CHECK_EQ(close(go[1]), 0);
    CHECK_EQ(child_exit_status(echo), 0);
    put_byte(p[1], 'q');
    for (int i = 0; i < ROLE_CANDIDATES; i++)
        if (i != s)
            join(role_threads[i]);
    int landed = atomic_load(&landings), failed = atomic_load(&failures);
    fprintf(stderr, "N ran on worker A in %d rounds\n", landed);
    CHECK_EQ(failed, 0);
    CHECK_EQ(atomic_load(&served), landed);
    if (landed == 0)
        SKIP("no round's new thread ran on worker A");
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: FUTEX_REQUEUE, FUTEX_CMP_REQUEUE and FUTEX_WAKE_OP made
 * through syscall(2) reach the user threads parked on their words by
 * syscall()'s FUTEX_WAIT (intercept/syscall.c). Before, these went to the
 * kernel alone, which knows nothing of a parked user thread: the waiters
 * stayed parked for good (a watchdog kernel thread gives up after 20 s
 * and the test fails instead of hanging).
 *  - Requeue: waiters on one word are all released by repeated requeues
 *    to a second word (woken where the kernel would move them, or moved
 *    by the kernel where they sleep in it), each counted exactly once in
 *    the results, a call never counting more than its two counts allow;
 *    a compare that fails (EAGAIN) releases no one; requeues made on a
 *    kernel thread (glibc's) release them too.
 *  - Wake-op: the operation's result on the second word for each of the
 *    five operations and the shifted argument; for each of the six
 *    comparisons, on a positive and a negative old value, a false one
 *    wakes none of the second word's waiters and a true one wakes them;
 *    waiters on both words are all released, each counted once.
 *  - Bad calls: unknown operations and comparisons (ENOSYS; the kernel
 *    applies the operation before it looks at the comparison), bad and
 *    misaligned words, read-only memory, a negative requeue count, the
 *    realtime clock flag: the same calls on a user thread and on a
 *    kernel thread (whose answers are the kernel's) agree with what is
 *    expected.
 * With private futexes, with shared ones on private memory (parked), and
 * with shared ones on a MAP_SHARED mapping (waited for in the kernel on
 * the offload pool, so the kernel moves and wakes them). */
#include <capriccio.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "raw_futex.h"

enum { WAITERS = 12, WATCHDOG_S = 20 };

static atomic_int gave_up;

/* Every word the runs wait on: in .bss, then in a MAP_SHARED mapping. */
struct words {
    atomic_uint from, to, first, second, scratch;
};
static struct words private_words;
static struct words *_Atomic words = &private_words;

static long futex6(atomic_uint *word, int op, uint32_t val, unsigned long val2,
                   atomic_uint *word2, uint32_t val3)
{
    return syscall(SYS_futex, word, op | private_flag, val, val2, word2, val3);
}

static long wake(atomic_uint *word, int n)
{
    return futex6(word, FUTEX_WAKE, (uint32_t)n, 0, NULL, 0);
}

static long wake_op(atomic_uint *first, int n1, int n2, atomic_uint *second, uint32_t enc)
{
    return futex6(first, FUTEX_WAKE_OP, (uint32_t)n1, (unsigned)n2, second, enc);
}

/* FUTEX_WAKE_OP's last argument, as <linux/futex.h>'s FUTEX_OP (whose
 * shift of a signed int UBSan refuses for the shifted-argument flag). */
static uint32_t encode(unsigned op, int oparg, unsigned cmp, int cmparg)
{
    return (op & 0xfu) << 28 | (cmp & 0xfu) << 24 | ((unsigned)oparg & 0xfffu) << 12 |
           ((unsigned)cmparg & 0xfffu);
}

/* A kernel thread: after WATCHDOG_S, wakes every sleeper so that a test
 * whose waiters nothing woke fails rather than hangs. */
static void *watchdog(void *arg)
{
    (void)arg;
    sleep(WATCHDOG_S);
    atomic_store(&gave_up, 1);
    struct words *w = words;
    wake(&w->from, INT_MAX);
    wake(&w->to, INT_MAX);
    wake(&w->first, INT_MAX);
    wake(&w->second, INT_MAX);
    return NULL;
}

/* A waiter: one FUTEX_WAIT on its word while it holds `expected`, which
 * no one changes, so only a wake-up ends it. */
struct waiter {
    atomic_uint *word;
    uint32_t expected;
    atomic_int *done;
};

static void *waiter(void *arg)
{
    struct waiter *w = arg;
    CHECK_EQ(futex6(w->word, FUTEX_WAIT, w->expected, 0, NULL, 0), 0);
    atomic_fetch_add(w->done, 1);
    return NULL;
}

static void start(cap_thread_t *t, struct waiter *w)
{
    CHECK_EQ(cap_thread_create(t, NULL, waiter, w), 0);
}

static void let_run(void)
{
    for (int i = 0; i < 4; i++)
        cap_yield();
}

/* ---- requeue ----------------------------------------------------------- */

struct release {
    bool compare;
    atomic_int *done;
    long counted;
};

/* Requeues until every waiter of the first word is done: on the calling
 * user thread, or on a kernel thread (glibc's) while the caller joins. */
static void *release_all(void *arg)
{
    struct release *r = arg;
    while (atomic_load(r->done) < WAITERS) {
        CHECK(!atomic_load(&gave_up));
        /* One to wake, one to move: at most two a call. */
        long n = r->compare ? futex6(&words->from, FUTEX_CMP_REQUEUE, 1, 1, &words->to, 0)
                            : futex6(&words->from, FUTEX_REQUEUE, 1, 1, &words->to, 0);
        CHECK(n >= 0 && n <= 2);
        r->counted += n;
        /* Those the kernel moved (a wait made in the kernel) sleep on the
         * second word now. */
        CHECK_GE(wake(&words->to, INT_MAX), 0);
        sched_yield(); /* the library's on a user thread: its worker's others run */
    }
    return NULL;
}

static void requeue_all(bool compare, bool from_kernel_thread)
{
    atomic_int done = 0;
    struct waiter spec = { &words->from, 0, &done };
    cap_thread_t t[WAITERS];
    for (int i = 0; i < WAITERS; i++)
        start(&t[i], &spec);
    let_run();
    /* A compare that fails moves and wakes no one. */
    if (compare) {
        fails_with(futex6(&words->from, FUTEX_CMP_REQUEUE, 1, INT_MAX, &words->to, 7), EAGAIN);
        let_run();
        CHECK_EQ(atomic_load(&done), 0);
    }
    struct release r = { compare, &done, 0 };
    pthread_t k;
    if (from_kernel_thread)
        CHECK_EQ(pthread_create(&k, NULL, release_all, &r), 0);
    else
        release_all(&r);
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    if (from_kernel_thread)
        CHECK_EQ(pthread_join(k, NULL), 0);
    CHECK_EQ(r.counted, WAITERS);
}

/* ---- wake-op ----------------------------------------------------------- */

static void op_results(void)
{
    atomic_uint *x = &words->scratch, *none = &words->first;
    atomic_store(x, 5);
    CHECK_EQ(wake_op(none, 1, 1, x, encode(FUTEX_OP_SET, 9, FUTEX_OP_CMP_EQ, 5)), 0);
    CHECK_EQ(atomic_load(x), 9u);
    CHECK_EQ(wake_op(none, 1, 1, x, encode(FUTEX_OP_ADD, -3, FUTEX_OP_CMP_EQ, 0)), 0);
    CHECK_EQ(atomic_load(x), 6u);
    CHECK_EQ(wake_op(none, 1, 1, x, encode(FUTEX_OP_OR, 0x30, FUTEX_OP_CMP_EQ, 0)), 0);
    CHECK_EQ(atomic_load(x), 0x36u);
    CHECK_EQ(wake_op(none, 1, 1, x, encode(FUTEX_OP_ANDN, 0x6, FUTEX_OP_CMP_EQ, 0)), 0);
    CHECK_EQ(atomic_load(x), 0x30u);
    CHECK_EQ(wake_op(none, 1, 1, x, encode(FUTEX_OP_XOR, 0xff, FUTEX_OP_CMP_EQ, 0)), 0);
    CHECK_EQ(atomic_load(x), 0xcfu);
    CHECK_EQ(wake_op(none, 1, 1, x,
                     encode(FUTEX_OP_OPARG_SHIFT | FUTEX_OP_SET, 4, FUTEX_OP_CMP_EQ, 0)),
             0);
    CHECK_EQ(atomic_load(x), 16u);
    CHECK_EQ(wake_op(none, 1, 1, x,
                     encode(FUTEX_OP_OPARG_SHIFT | FUTEX_OP_OR, 31, FUTEX_OP_CMP_EQ, 0)),
             0);
    CHECK_EQ(atomic_load(x), 0x80000010u);
}

/* An operation that leaves value alone, so a waiter expecting it parks
 * whenever it gets there: OR 0. */
static uint32_t keep(int cmp, int arg)
{
    return encode(FUTEX_OP_OR, 0, cmp, arg);
}

/* For each comparison of the second word's old value (`value`, signed):
 * one that fails wakes no one there, one that holds wakes its waiter. */
static void comparisons(uint32_t value)
{
    int v = (int)value;
    static const int cmps[] = { FUTEX_OP_CMP_EQ, FUTEX_OP_CMP_NE, FUTEX_OP_CMP_LT,
                                FUTEX_OP_CMP_LE, FUTEX_OP_CMP_GT, FUTEX_OP_CMP_GE };
    /* A cmparg that makes each comparison true, then false. */
    const int holds[] = { v, v - 1, v + 1, v, v - 1, v };
    const int fails[] = { v - 1, v, v, v - 1, v, v + 1 };
    atomic_store(&words->second, value);
    for (int i = 0; i < 6; i++) {
        atomic_int done = 0;
        struct waiter spec = { &words->second, value, &done };
        cap_thread_t t;
        start(&t, &spec);
        let_run();
        CHECK_EQ(wake_op(&words->first, 1, INT_MAX, &words->second, keep(cmps[i], fails[i])), 0);
        let_run();
        CHECK_EQ(atomic_load(&done), 0);
        long counted = 0;
        while (atomic_load(&done) == 0) {
            CHECK(!atomic_load(&gave_up));
            long r = wake_op(&words->first, 1, INT_MAX, &words->second, keep(cmps[i], holds[i]));
            CHECK(r == 0 || r == 1);
            counted += r;
            cap_yield();
        }
        CHECK_EQ(cap_thread_join(t, NULL), 0);
        CHECK_EQ(counted, 1);
        CHECK_EQ(atomic_load(&words->second), value);
    }
}

/* Waiters on both words, released by wake-ops with a true comparison:
 * at most one of each word a call, each counted once. */
static void wake_op_all(void)
{
    atomic_store(&words->second, 0);
    atomic_int done_first = 0, done_second = 0;
    struct waiter on_first = { &words->first, 0, &done_first };
    struct waiter on_second = { &words->second, 0, &done_second };
    cap_thread_t t[2 * WAITERS];
    for (int i = 0; i < WAITERS; i++) {
        start(&t[2 * i], &on_first);
        start(&t[2 * i + 1], &on_second);
    }
    let_run();
    long counted = 0;
    while (atomic_load(&done_first) + atomic_load(&done_second) < 2 * WAITERS) {
        CHECK(!atomic_load(&gave_up));
        long r = wake_op(&words->first, 1, 1, &words->second, keep(FUTEX_OP_CMP_EQ, 0));
        CHECK(r >= 0 && r <= 2);
        counted += r;
        cap_yield();
    }
    for (int i = 0; i < 2 * WAITERS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK_EQ(counted, 2 * WAITERS);
}

/* ---- bad calls ----------------------------------------------------------- */

static atomic_uint *read_only_word;

static void *bad_calls(void *arg)
{
    (void)arg;
    atomic_uint a = 0, b = 0;
    fails_with(wake_op(&a, 1, 1, &b, encode(7, 1, FUTEX_OP_CMP_EQ, 0)), ENOSYS);
    CHECK_EQ(atomic_load(&b), 0u);
    /* The kernel applies the operation, then refuses the comparison. */
    fails_with(wake_op(&a, 1, 1, &b, encode(FUTEX_OP_SET, 3, 9, 0)), ENOSYS);
    CHECK_EQ(atomic_load(&b), 3u);
    fails_with(wake_op(&a, 1, 1, (atomic_uint *)8, encode(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0)),
               EFAULT);
    fails_with(wake_op(&a, 1, 1, read_only_word, encode(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0)),
               EFAULT);
    CHECK_EQ(atomic_load(read_only_word), 0u);
    _Alignas(8) char bytes[8] = { 0 };
    atomic_uint *odd = (atomic_uint *)(void *)(bytes + 1);
    fails_with(wake_op(&a, 1, 1, odd, encode(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0)), EINVAL);
    fails_with(wake_op(odd, 1, 1, &b, encode(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0)), EINVAL);
    CHECK_EQ(atomic_load(&b), 3u);
    /* An unmapped first word: the kernel looks it up only when shared. */
    long r = wake_op((atomic_uint *)8, 1, 1, &b, encode(FUTEX_OP_SET, 4, FUTEX_OP_CMP_EQ, 0));
    if (private_flag != 0) {
        CHECK_EQ(r, 0);
        CHECK_EQ(atomic_load(&b), 4u);
    } else {
        fails_with(r, EFAULT);
        CHECK_EQ(atomic_load(&b), 3u);
    }
    fails_with(futex6(&a, FUTEX_WAKE_OP | FUTEX_CLOCK_REALTIME, 1, 1, &b,
                      encode(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0)),
               ENOSYS);
    fails_with(futex6(&a, FUTEX_CMP_REQUEUE, 1, 1, &b, 1), EAGAIN);
    CHECK_EQ(futex6(&a, FUTEX_CMP_REQUEUE, 1, 1, &b, 0), 0); /* no one waits */
    CHECK_EQ(futex6(&a, FUTEX_REQUEUE, 1, 1, &b, 0), 0);
    fails_with(futex6(&a, FUTEX_CMP_REQUEUE, 1, UINT_MAX, &b, 0), EINVAL); /* count -1 */
    fails_with(futex6(&a, FUTEX_CMP_REQUEUE, 1, 1, odd, 0), EINVAL);
    fails_with(futex6(odd, FUTEX_REQUEUE, 1, 1, &b, 0), EINVAL);
    fails_with(futex6(&a, FUTEX_CMP_REQUEUE | FUTEX_CLOCK_REALTIME, 1, 1, &b, 0), ENOSYS);
    return NULL;
}

static void run(void)
{
    *words = (struct words){ 0 };
    bad_calls(NULL);
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, bad_calls, NULL), 0); /* glibc's: the kernel's answers */
    CHECK_EQ(pthread_join(k, NULL), 0);
    requeue_all(false, false);
    requeue_all(true, false);
    requeue_all(true, true);
    op_results();
    comparisons(5);
    comparisons((uint32_t)-5); /* signed comparisons */
    wake_op_all();
    CHECK(!atomic_load(&gave_up));
}

static void use_mapping(void *shared)
{
    words = shared;
}

int main(void)
{
    read_only_word = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(read_only_word != MAP_FAILED);
    raw_futex_three_runs(watchdog, run, sizeof(struct words), use_mapping);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Scheduling policy contract. A policy owns the order of one worker's
 * local run queue and nothing else: placement of new threads, stealing,
 * inboxes and timers belong to the worker loop (worker.c).
 *
 * Every hook runs on the owning worker's kernel thread, so a policy needs
 * no locks. CAP_SCHED picks the policy at start-up; `fifo` is the only one
 * today, `resource` and `cohort` are reserved for the blocking-graph
 * schedulers (DESIGN.md) and rejected with a message until they exist.
 */
#ifndef CAP_SCHED_POLICY_H
#define CAP_SCHED_POLICY_H

#include "sched/park.h"

struct cap__worker;
struct cap__thread;

typedef struct cap__policy {
    const char *name;
    /* Prepares w's per-worker policy state. 0 or -errno. */
    int (*init)(struct cap__worker *w);
    /* t became runnable on w (woken, yielded, or first scheduled). */
    void (*enqueue)(struct cap__worker *w, struct cap__thread *t);
    /* Next thread to run on w, removed from its queue; NULL if none. */
    struct cap__thread *(*pick_next)(struct cap__worker *w);
    /* Observers for policies that learn from transitions (may be NULL). */
    void (*on_park)(struct cap__worker *w, struct cap__thread *t,
                    enum cap__park_reason reason);
    void (*on_wake)(struct cap__worker *w, struct cap__thread *t);
} cap__policy;

extern __attribute__((visibility("hidden"))) const cap__policy cap__policy_fifo;

/* The policy CAP_SCHED named. */
extern __attribute__((visibility("hidden"))) const cap__policy *cap__policy_active;

#endif /* CAP_SCHED_POLICY_H */

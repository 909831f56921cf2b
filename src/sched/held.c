/* SPDX-License-Identifier: MIT */
/*
 * A user thread's kernel-thread-owned locks, let go across its switches
 * (sched/held.h).
 */
#include "sched/held.h"

#include "sched/worker.h"
#include "thread/thread.h"

void cap__held_push(cap__held_lock *l)
{
    cap__thread *self = cap__current();
    l->next = self->held_locks;
    self->held_locks = l;
}

void cap__held_remove(cap__held_lock *l)
{
    cap__thread *self = cap__current();
    for (cap__held_lock **pp = &self->held_locks; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == l) {
            *pp = l->next;
            l->next = NULL;
            return;
        }
    }
}

void cap__held_forget_all(void)
{
    cap__thread *self = cap__current();
    if (self != NULL)
        self->held_locks = NULL;
}

/* The next one read first: a callback may remove its own lock. */
void cap__held_release_all(cap__thread *t)
{
    for (cap__held_lock *l = t->held_locks, *next; l != NULL; l = next) {
        next = l->next;
        l->release(l);
    }
}

void cap__held_retake_all(cap__thread *t)
{
    for (cap__held_lock *l = t->held_locks, *next; l != NULL; l = next) {
        next = l->next;
        l->retake(l);
    }
}

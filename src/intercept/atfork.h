/* SPDX-License-Identifier: MIT */
/* Fork handlers registered with cap_atfork (atfork.c), for the fork
 * wrapper (handover.c). */
#ifndef CAP_INTERCEPT_ATFORK_H
#define CAP_INTERCEPT_ATFORK_H

#include <stdbool.h>

#include <capriccio.h>

/* The entries one fork runs: the oldest and newest registered when it
 * began (both NULL: none). */
typedef struct cap__atfork_snap {
    struct cap__atfork_entry *first, *last;
} cap__atfork_snap;

/* Takes the snapshot and runs its prepare handlers, newest first. */
void cap__atfork_prepare(cap__atfork_snap *snap);
/* After the fork, in the parent (also when the fork failed): the parent
 * handlers, oldest first. */
void cap__atfork_parent(const cap__atfork_snap *snap);
/* In the child, after the runtime's reset: the child handlers, oldest
 * first. */
void cap__atfork_child(const cap__atfork_snap *snap);

#endif /* CAP_INTERCEPT_ATFORK_H */

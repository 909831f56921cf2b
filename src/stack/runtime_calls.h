/* SPDX-License-Identifier: MIT */
/*
 * The stack the runtime's own blocking and sync calls need, for linked
 * stacks (runtime_calls.S): room above the stack limit that a call such
 * as cap_cond_wait, from its entry to its deepest frame (the park, the
 * switch, and whatever finish_switch does on the stack of the thread it
 * resumes), never exceeds. The reserve below the limit stays free for
 * __morestack. Checked against the real depth, measured by painting, by
 * tests/stacklinked/progs/runtime_calls_within_bound.c: a change that
 * makes that path deeper must raise this too.
 *
 * Small enough that a thread parks on its 2 KiB first chunk: 2048 bytes
 * less the chunk header (32), the reserve (1024) and the frames of the
 * thread's start leaves about 900 bytes, of which the bound leaves the
 * thread's own frames about 130 (a bound of 896 would leave a thread
 * function with more than a few locals parking on a linked chunk: 6.5 KiB
 * per idle thread instead of 2.5). The deepest calls measured are a
 * contended semaphore wait (744 bytes, RelWithDebInfo and Release with
 * gcc 12: its records for signal delivery, sync/sem.c, which took 872
 * before session 43 inlined its wait loop), a condition wait woken (744)
 * and a process-shared robust mutex's lock (728). Until session 58 a
 * process-shared mutex's timed lock took 776 (784 on two workers; 800 an
 * error-checking one), unmeasured: the caller's frame, which held the
 * timeout or recorded the owner after the wait, stayed below the wait's.
 * The wait's function now makes the timeout and records the owner itself
 * and is reached by a tail call (sync/mutex.c, acquire_slow): 720.
 */
#ifndef CAP_STACK_RUNTIME_CALLS_H
#define CAP_STACK_RUNTIME_CALLS_H

#define CAP__LINKED_RUNTIME_BYTES 768

#endif

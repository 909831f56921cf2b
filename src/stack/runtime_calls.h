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
 * thread's start leaves about 900 bytes. The deepest call measured is a
 * contended semaphore wait (824 bytes, RelWithDebInfo with gcc 12: its
 * records for signal delivery, sync/sem.c); until session 43 the bound
 * was 768 and that wait, which the test did not measure, took 872.
 */
#ifndef CAP_STACK_RUNTIME_CALLS_H
#define CAP_STACK_RUNTIME_CALLS_H

#define CAP__LINKED_RUNTIME_BYTES 832

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Private open file descriptions of terminals, for blocking writes that
 * must not hold a worker (intercept/ttyio.c); and of FIFOs the runtime
 * does not own, for blocking reads and writes (intercept/rw.c).
 *
 * A terminal the application writes to is not ours to make non-blocking:
 * its open file description is shared with the shell and the other
 * processes of the session. So the library opens the same terminal a
 * second time, for itself, non-blocking (through /proc/self/fd), and
 * writes there: the bytes go to the same terminal, a full or stopped one
 * says EAGAIN instead of blocking, and the writer parks on the
 * application's descriptor until there is room. A write costs its system
 * call, not a round trip through the offload pool.
 *
 * Only pseudo-terminal slaves (UNIX98 majors 136-143) that the program's
 * descriptor may write get one: reopening a master (/dev/ptmx), /dev/tty
 * or /dev/console would open another terminal, opening a real device may
 * act on the line, and a description of our own would write where the
 * program's read-only one says EBADF. The private
 * description:
 *  - belongs to one life of one descriptor number (fd, gen: io/fd.h) and
 *    is closed when that life ends (cap__ttyfile_forget, from fd.c), so
 *    it never keeps a terminal open after the program closed it (a
 *    program driving a pseudo-terminal waits for the EIO its master reads
 *    once the slave is closed);
 *  - lives at a high number and is one of the runtime's own (io/ownfd.h):
 *    the program's closefrom() or dup2() cannot take it away;
 *  - is close-on-exec, and shared with a forked child like any other;
 *  - is held (refs) while a write uses it, so a close on another worker
 *    closes it only after that write's system call.
 * At most TTYFILE_MAX (ttyfile.c) at once; a terminal beyond them, or one
 * the kernel will not open again (permissions, hung up, no /proc), keeps
 * the offload pool (CAP__FDF_TTY_POOL on its record).
 *
 * A FIFO the runtime does not own (io/fifo.h: inherited, opened
 * non-blocking and made blocking after, opened by a thread it does not
 * run, given back at a fork or a spawn) refuses RWF_NOWAIT, and its mode
 * is the application's. After readiness its plain call could still
 * wait in the kernel, holding the worker: readiness promised one free
 * page or some bytes, and another writer or reader (a thread of another
 * worker, another process) may take them first; with the thread that
 * would make room on that worker, for good. Its private description is
 * opened with the access of the program's (a write-only one only while
 * the FIFO has a reader: else ENXIO, and the plain path meets the
 * missing reader as the kernel's call would), so a transfer that would
 * wait says EAGAIN and the thread parks on the program's descriptor
 * instead. The same rules as a terminal's: one life, closed with it
 * (a writer of ours never keeps the reader from its end of file), a
 * high number of the runtime's own, close-on-exec. rdev is 0 for it:
 * the terminal's write lock (trylock) is not taken for a FIFO.
 *
 * Locking: one spin lock over the small table, never held across a
 * system call; a fork holds it (cap__ttyfile_fork_hold), and knows its
 * holder's kernel thread (util/ownspin.h).
 */
#ifndef CAP_IO_TTYFILE_H
#define CAP_IO_TTYFILE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cap__ttyfile cap__ttyfile;

/* The private description of fd's life gen, opened on first use, held
 * until cap__ttyfile_release; NULL if fd gets none (see above). fd must
 * name a terminal (CAP__FDF_TTY) the caller is writing to. */
cap__ttyfile *cap__ttyfile_hold(int fd, uint32_t gen);
/* Its descriptor. */
int cap__ttyfile_fd(const cap__ttyfile *t);
void cap__ttyfile_release(cap__ttyfile *t);
/* The terminal for one whole write, as the kernel's per-terminal write
 * lock is held across a blocking write: a part written, then a wait for
 * room, then the rest, with no other write of the process in between
 * (other processes' writes may come in at the waits). False if another
 * write of the process holds it: wait on the descriptor for an event,
 * which cap__ttyfile_unlock posts on each of the terminal's. */
bool cap__ttyfile_trylock(cap__ttyfile *t);
void cap__ttyfile_unlock(cap__ttyfile *t);
/* The life of fd that may have one ended (fd.c): close it once unused. */
void cap__ttyfile_forget(int fd);
/* Around a fork: the table's lock held across it; in the child no write
 * holds a description any more. hold is false, and release does nothing,
 * when the code a signal handler that forks interrupted holds the lock
 * (util/ownspin.h). */
bool cap__ttyfile_fork_hold(void);
void cap__ttyfile_fork_release(bool child, bool held);

#endif /* CAP_IO_TTYFILE_H */

/* SPDX-License-Identifier: MIT */
/*
 * Signalfds and a user thread's own pending signals.
 *
 * A signal sent to a user thread (raise, pthread_kill) waits in the
 * thread's own pending set (io/sigdirect.h), which the kernel's signalfd
 * cannot see: it reads the process's and its kernel thread's. So the
 * runtime answers for that set on the signalfds our signalfd() made
 * (CAP__FDF_SIGNALFD, io/fd.h): a read takes those of the mask
 * (intercept/sigwait.c), and poll, ppoll, select and pselect report
 * such a signalfd readable while one is pending. A parked read or poll
 * of one is woken by a send to its thread of any signal the thread
 * blocks (cap__intr.wakes, io/sigintr.h), looks again and parks again if
 * nothing is due: it parks only if no send was counted
 * (cap__thread.sig_sends) since its look. The mask is the kernel's, read
 * from /proc/self/fdinfo at each look that finds signals of the thread's
 * own pending, so signalfd(fd, mask) changes, even while a thread waits,
 * and dups count; a signalfd made before the runtime started or inherited
 * across exec sees the process's signals only.
 *
 * epoll: the intercepted epoll_ctl marks a set that such a signalfd is
 * added to (CAP__FDF_SIGEPOLL, on every number of the set). A wait on a
 * marked set whose thread has signals of its own pending reads the
 * set's registrations from its fdinfo (the kernel keeps the caller's
 * epoll_data and flags: nothing to remember, and EPOLL_CTL_DEL, MOD and
 * closes count) and adds an EPOLLIN event with the registration's data
 * for each signalfd of ours whose mask holds one, with the kernel's
 * events, up to maxevents, not for one the kernel reported itself (same
 * data); after them, unless the thread's last look had no room for one
 * of ours (then before them, so neither kind starves the other). Level-triggered, it is reported at every wait while pending;
 * EPOLLONESHOT disarms it as the kernel would (EPOLL_CTL_MOD to no
 * events, until the program re-arms it); EPOLLET reports each send once,
 * approximated per thread: once for all the thread's edge-triggered
 * registrations of that signal (cap__thread.sig_edge_told), where Linux
 * reports it once on each. A signalfd in a set inside the waited set
 * (nested epoll) is not seen. A parked wait on a marked set is woken by
 * any signal sent to its thread that it blocks (cap__intr.wakes all
 * ones), looks again and parks again if nothing is due; it parks only
 * if no send was counted (cap__thread.sig_sends) since its look.
 */
#ifndef CAP_IO_SIGFD_H
#define CAP_IO_SIGFD_H

#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "thread/thread.h"

/* The signal mask of signalfd fd (bit sig - 1) from the kernel; 0 if it
 * cannot be read (no /proc). */
uint64_t cap__sigfd_mask(int fd);

/* After a poll of fds by self found revents, self having signals of its
 * own pending: adds POLLIN to each entry that is a signalfd of ours, asks
 * for POLLIN and has one of them in its mask. Returns how many entries it
 * made ready that had no revents (to add to poll's count). */
int cap__sigfd_poll(struct pollfd *fds, nfds_t n, cap__thread *self);

/* One look of self at epfd (a marked set), for at most max events into
 * ev: the kernel's events and those of the set's signalfds of ours for
 * self's own pending signals, as above. When both kinds are due and do
 * not all fit, they take turns from one look of the thread to the next
 * (cap__thread.sig_epoll_ours_first), as Linux's ready list rotates.
 * Returns the count, or -errno (-EFAULT if one was due and ev could not
 * take it). */
int cap__sigfd_epoll(int epfd, struct epoll_event *ev, int max, cap__thread *self);

#endif /* CAP_IO_SIGFD_H */

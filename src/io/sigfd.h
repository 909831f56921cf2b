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
 * such a signalfd readable while one is pending and are woken by a send
 * of one (cap__intr.wakes, io/sigintr.h). The mask is the kernel's, read
 * from /proc/self/fdinfo when needed, so signalfd(fd, mask) changes and
 * dups count; a signalfd made before the runtime started, inherited
 * across exec, or watched through epoll sees the process's signals only.
 */
#ifndef CAP_IO_SIGFD_H
#define CAP_IO_SIGFD_H

#include <poll.h>
#include <stdint.h>

#include "thread/thread.h"

/* The signal mask of signalfd fd (bit sig - 1) from the kernel; 0 if it
 * cannot be read (no /proc). */
uint64_t cap__sigfd_mask(int fd);

/* After a poll of fds by self found revents, self having signals of its
 * own pending: adds POLLIN to each entry that is a signalfd of ours, asks
 * for POLLIN and has one of them in its mask. Returns how many entries it
 * made ready that had no revents (to add to poll's count). */
int cap__sigfd_poll(struct pollfd *fds, nfds_t n, cap__thread *self);

/* The masks of the entries of fds that are signalfds of ours and ask
 * for POLLIN: the signals whose send to the thread wakes a poll of them
 * (cap__intr.wakes). */
uint64_t cap__sigfd_wakes(const struct pollfd *fds, nfds_t n);

#endif /* CAP_IO_SIGFD_H */

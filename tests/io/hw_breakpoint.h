/* SPDX-License-Identifier: MIT */
/* A hardware breakpoint on an instruction of the calling kernel thread,
 * which sends it SIGTRAP (si_code TRAP_PERF) as it gets there: for the
 * tests that stop the runtime at one exact instruction. */
#ifndef CAP_TESTS_IO_HW_BREAKPOINT_H
#define CAP_TESTS_IO_HW_BREAKPOINT_H

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef TRAP_PERF
#define TRAP_PERF 6
#endif

/* The perf event's descriptor (PERF_EVENT_IOC_DISABLE stops it, close
 * removes it), or -1 with errno where the kernel refuses. */
static inline int hw_breakpoint_at(uintptr_t addr)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_BREAKPOINT;
    a.size = sizeof a;
    a.bp_type = HW_BREAKPOINT_X;
    a.bp_addr = addr;
    a.bp_len = sizeof(long);
    a.sample_period = 1;
    a.sigtrap = 1;
    a.remove_on_exec = 1; /* sigtrap requires it */
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

#endif /* CAP_TESTS_IO_HW_BREAKPOINT_H */

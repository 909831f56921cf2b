/* SPDX-License-Identifier: MIT */
/*
 * What /proc says about the test's own process.
 */
#ifndef CAP_TESTS_PROC_UTIL_H
#define CAP_TESTS_PROC_UTIL_H

#include <dirent.h>

#include "check.h"

/* The kernel threads of this process (/proc/self/task). */
static inline int process_tasks(void)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.')
            n++;
    CHECK_EQ(closedir(d), 0);
    return n;
}

#endif /* CAP_TESTS_PROC_UTIL_H */

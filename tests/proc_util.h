/* SPDX-License-Identifier: MIT */
/*
 * What /proc says about the test's own process.
 */
#ifndef CAP_TESTS_PROC_UTIL_H
#define CAP_TESTS_PROC_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

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

/* The scheduling state /proc shows for kernel thread tid of this process:
 * 'R' running or runnable, 'S' asleep in a wait, 'D', 't', ... */
static inline char task_state(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[512];
    CHECK(fgets(line, sizeof line, f) != NULL);
    CHECK_EQ(fclose(f), 0);
    char *paren = strrchr(line, ')'); /* the name in parentheses may hold anything */
    CHECK(paren != NULL && paren[1] == ' ');
    return paren[2];
}

#endif /* CAP_TESTS_PROC_UTIL_H */

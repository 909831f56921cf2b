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

/* Prints each kernel thread of this process to stderr: its id, name and
 * the system call it is in (/proc's syscall line, first field), so a test
 * whose count of kernel threads is off can say which one is new. */
static inline void print_tasks(const char *when)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    fprintf(stderr, "kernel threads %s:\n", when);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[32] = "?", call[64] = "?";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            if (fgets(comm, sizeof comm, f) != NULL)
                comm[strcspn(comm, "\n")] = 0;
            fclose(f);
        }
        snprintf(path, sizeof path, "/proc/self/task/%s/syscall", e->d_name);
        f = fopen(path, "r");
        if (f != NULL) {
            if (fscanf(f, "%63s", call) != 1)
                strcpy(call, "?");
            fclose(f);
        }
        fprintf(stderr, "  %s %s syscall %s\n", e->d_name, comm, call);
    }
    CHECK_EQ(closedir(d), 0);
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

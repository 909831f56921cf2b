/* SPDX-License-Identifier: MIT */
/*
 * The premise of the tests that resolve "localhost": that glibc finds it in
 * /etc/hosts as 127.0.0.1. An installed Debian system has that line (the
 * installer writes it, container runtimes mount one); a bare chroot made by
 * debootstrap has no /etc/hosts at all, and then "localhost" goes to DNS
 * and fails the same way with or without this library. Such tests call
 * localhost_in_hosts_file() first and exit 77 (skipped) when it is false,
 * rather than fail for the machine. Plain C: the compat programs use it.
 */
#ifndef CAP_TESTS_HOSTS_FILE_H
#define CAP_TESTS_HOSTS_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a line of /etc/hosts gives "localhost" the address 127.0.0.1. */
static inline bool localhost_in_hosts_file(void)
{
    FILE *f = fopen("/etc/hosts", "re");
    if (f == NULL)
        return false;
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "#\n")] = '\0';
        char *save = NULL;
        char *addr = strtok_r(line, " \t", &save);
        if (addr == NULL || strcmp(addr, "127.0.0.1") != 0)
            continue;
        for (char *name = strtok_r(NULL, " \t", &save); name != NULL;
             name = strtok_r(NULL, " \t", &save))
            if (strcmp(name, "localhost") == 0)
                found = true;
    }
    fclose(f);
    return found;
}

/* Exits 77 with the reason unless localhost_in_hosts_file(). */
static inline void skip_unless_localhost_in_hosts_file(void)
{
    if (!localhost_in_hosts_file()) {
        fprintf(stderr, "skipped: /etc/hosts does not give localhost the address 127.0.0.1 "
                        "(a bare chroot?), so glibc itself cannot resolve it here\n");
        exit(77);
    }
}

#endif

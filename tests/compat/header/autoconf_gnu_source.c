/* SPDX-License-Identifier: MIT */
/*
 * The start of every file of an autoconf program: its config.h (and the
 * confdefs.h of each configure check) defines _GNU_SOURCE as 1. Compiled
 * with -Werror after the forced include, as configure compiles its checks
 * when a package asks for -Werror (xz's constructor-attribute check):
 * a redefinition warning here turned those checks into a silent "no".
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <string.h>

int main(void)
{
    char buf[64];
    /* the GNU strerror_r (returns the message) must still be the one
     * declared, as without the forced include */
    const char *s = strerror_r(2, buf, sizeof buf);
    return s == NULL;
}

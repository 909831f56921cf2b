/* SPDX-License-Identifier: MIT */
/* Description: a library constructor that waits (a pipe read) parks only
 * its own thread, inside dlopen, and no other user thread enters the
 * loader before that dlopen ends, as under NPTL (glibc's loader lock):
 *  - the other threads of the worker run meanwhile (main reads the
 *    constructor's byte);
 *  - a second thread's dlopen of the same library returns only once the
 *    constructor has finished, and sees the library set up (before: on
 *    one worker it entered the loader as the same kernel thread, returned
 *    at once and read plugin_value 0);
 *  - the library is found by its name through the program's own RUNPATH:
 *    glibc takes the caller from dlopen's return address, which the
 *    library's dlopen leaves as the program made it;
 *  - the last dlclose runs the destructor (a sleep) and unloads the
 *    library; a later dlopen runs the constructor again. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/io_util.h"

/* By name, found through RUNPATH. Under AddressSanitizer by its path: the
 * sanitizer's own dlopen interceptor calls the real one from its library,
 * so glibc takes that library for the caller and never reads the
 * program's RUNPATH (with glibc's threads as much as with ours). */
#if defined(__SANITIZE_ADDRESS__)
static char plugin[4096];
static void plugin_path(void)
{
    ssize_t n = readlink("/proc/self/exe", plugin, sizeof plugin - 64);
    CHECK(n > 0);
    plugin[n] = '\0';
    char *slash = strrchr(plugin, '/');
    CHECK(slash != NULL);
    strcpy(slash, "/dl/libcaptest_dlplugin.so");
}
#else
static const char *const plugin = "libcaptest_dlplugin.so";
static void plugin_path(void)
{
}
#endif
static atomic_int second_returned, second_saw = -1;

static void *first(void *arg)
{
    (void)arg;
    void *h = dlopen(plugin, RTLD_NOW);
    CHECK(h != NULL);
    return h;
}

static void *second(void *arg)
{
    (void)arg;
    void *h = dlopen(plugin, RTLD_NOW);
    CHECK(h != NULL);
    int *value = dlsym(h, "plugin_value");
    CHECK(value != NULL);
    atomic_store(&second_saw, *value);
    atomic_store(&second_returned, 1);
    return h;
}

static void set_fd(const char *name, int fd)
{
    char s[16];
    snprintf(s, sizeof s, "%d", fd);
    CHECK_EQ(setenv(name, s, 1), 0);
}

int main(void)
{
    plugin_path();
    int started[2], go[2];
    CHECK_EQ(pipe(started), 0);
    CHECK_EQ(pipe(go), 0);
    set_fd("CAPTEST_DL_STARTED", started[1]);
    set_fd("CAPTEST_DL_GO", go[0]);

    cap_thread_t a = spawn(first, NULL);
    char c;
    CHECK_EQ(read(started[0], &c, 1), 1); /* a waits in the constructor */
    cap_thread_t b = spawn(second, NULL);
    struct timespec pause = { 0, 50 * 1000 * 1000 };
    nanosleep(&pause, NULL); /* b runs, and must wait for a's dlopen */
    CHECK_EQ(atomic_load(&second_returned), 0);
    CHECK_EQ(write(go[1], "g", 1), 1);
    void *ha = join(a), *hb = join(b);
    CHECK_EQ(atomic_load(&second_saw), 1);
    CHECK(ha == hb);
    int *inits = dlsym(ha, "plugin_inits");
    CHECK(inits != NULL);
    CHECK_EQ(*inits, 1);

    CHECK_EQ(dlclose(ha), 0);
    CHECK_EQ(dlclose(hb), 0); /* the destructor sleeps */
    CHECK(dlopen(plugin, RTLD_NOW | RTLD_NOLOAD) == NULL);
    CHECK_EQ(write(go[1], "g", 1), 1); /* the next constructor goes on at once */
    void *h = dlopen(plugin, RTLD_NOW);
    CHECK(h != NULL);
    CHECK_EQ(read(started[0], &c, 1), 1);
    int *value = dlsym(h, "plugin_value");
    CHECK(value != NULL);
    CHECK_EQ(*value, 1);
    CHECK_EQ(dlclose(h), 0);
    return 0;
}

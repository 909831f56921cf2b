/* SPDX-License-Identifier: MIT */
/* A library whose constructor and destructor wait, for
 * io/dlopen_constructor_waits: the constructor writes a byte to the
 * descriptor in CAPTEST_DL_STARTED and reads one from CAPTEST_DL_GO
 * before it sets plugin_value; the destructor sleeps 20 ms. Plain C: it
 * knows nothing of the library (its reads and sleeps are the wrapped
 * calls of whatever program loads it). */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int plugin_value;
int plugin_inits;

static int fd_from(const char *name)
{
    const char *v = getenv(name);
    return v != NULL ? atoi(v) : -1;
}

__attribute__((constructor)) static void plugin_init(void)
{
    plugin_inits++;
    int started = fd_from("CAPTEST_DL_STARTED"), go = fd_from("CAPTEST_DL_GO");
    char c = 's';
    if (started >= 0 && write(started, &c, 1) != 1)
        abort();
    if (go >= 0 && read(go, &c, 1) != 1)
        abort();
    plugin_value = 1;
}

__attribute__((destructor)) static void plugin_fini(void)
{
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    plugin_value = 0;
}

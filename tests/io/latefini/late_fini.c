/* SPDX-License-Identifier: MIT */
/* For io/exit_late_destructor_wakes: a library that does not link
 * libcapriccio, after it on the program's link line, so that its
 * destructor runs after the library's (glibc runs destructors in the
 * reverse of the initialization order, which puts each object's
 * dependencies first and otherwise follows the load order). It calls
 * back into the program. */
static void (*late_fn)(void);

void late_fini_register(void (*fn)(void))
{
    late_fn = fn;
}

__attribute__((destructor)) static void late_fini(void)
{
    if (late_fn != 0)
        late_fn();
}

/* SPDX-License-Identifier: MIT */
/* Description: a program not linked with Capriccio that dlopen()s it (the
 * path in argv[1]), RTLD_GLOBAL: loaded after libc, its wrappers are never
 * what the program's calls reach, and its constructor refuses to start
 * the runtime (io/library_dlopened_refused: exit status 2 and the
 * message). Exits 1 if dlopen returns. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 1;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    fprintf(stderr, "dlopen returned %p: not refused\n", lib);
    return 1;
}

/* SPDX-License-Identifier: MIT */
/* Description: a program not linked with Capriccio that dlopen()s it (the
 * path in argv[1]), RTLD_GLOBAL: loaded after libc, its wrappers are never
 * what the program's calls reach, and its constructor refuses to start
 * the runtime (io/library_dlopened_refused: exit status 2 and the
 * message). Exits 1 if dlopen returns. With a second argument "native"
 * (run with CAP_AFTER_LIBC=native) dlopen returns, the runtime standing
 * aside, and a call of the library's own interface (cap_worker_count),
 * which needs the runtime, is refused the same way
 * (io/library_dlopened_native_call_refused). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 1;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (argc > 2 && strcmp(argv[2], "native") == 0 && lib != NULL) {
        int (*count)(void) = (int (*)(void))dlsym(lib, "cap_worker_count");
        if (count == NULL)
            return 1;
        fprintf(stderr, "cap_worker_count returned %d: not refused\n", count());
        return 1;
    }
    fprintf(stderr, "dlopen returned %p: not refused\n", lib);
    return 1;
}

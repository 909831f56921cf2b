/* SPDX-License-Identifier: MIT */
/* The address of a symbol the library keeps hidden, read from the
 * library's own symbol table (its .symtab: a build that is not
 * stripped), for the tests that put a hardware breakpoint on the
 * runtime's code. 0 when the file has no such table or symbol. */
#ifndef CAP_TESTS_IO_LIB_SYMBOL_H
#define CAP_TESTS_IO_LIB_SYMBOL_H

#include <capriccio.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static inline uintptr_t hidden_symbol(const char *name)
{
    Dl_info info;
    CHECK(dladdr((void *)cap_thread_create, &info) != 0);
    int fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    struct stat st;
    CHECK_EQ(fstat(fd, &st), 0);
    const unsigned char *file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(file != MAP_FAILED);
    close(fd);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)file;
    CHECK(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(file + eh->e_shoff);
    uintptr_t found = 0;
    for (int i = 0; i < eh->e_shnum && found == 0; i++) {
        if (sh[i].sh_type != SHT_SYMTAB)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(file + sh[i].sh_offset);
        const char *names = (const char *)(file + sh[sh[i].sh_link].sh_offset);
        size_t n = sh[i].sh_size / sizeof *sym;
        for (size_t k = 0; k < n; k++)
            if (strcmp(names + sym[k].st_name, name) == 0) {
                found = (uintptr_t)info.dli_fbase + sym[k].st_value;
                break;
            }
    }
    munmap((void *)file, (size_t)st.st_size);
    return found;
}

#endif /* CAP_TESTS_IO_LIB_SYMBOL_H */

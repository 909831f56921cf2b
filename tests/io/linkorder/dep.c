/* SPDX-License-Identifier: MIT */
/* Description: the library between the program and Capriccio in
 * io/library_after_libc_refused: linked with Capriccio, which the program
 * is not, so the program reaches Capriccio only through this library,
 * after libc in the global search order. */
#include <unistd.h>

ssize_t linkorder_dep_read(int fd, void *buf, size_t len)
{
    return read(fd, buf, len);
}

/* SPDX-License-Identifier: MIT */
/*
 * Attributes whose spelling differs between the compilers the library
 * builds with (GCC, the one supported; clang, which builds it too).
 *
 * CAP__OPAQUE_CALL: a function its callers must really call, and whose
 * body they may not assume anything of: errno's and h_errno's accessors,
 * whose locations glibc declares const, so that a location computed
 * before a park (another worker's, once the thread resumes elsewhere) is
 * not reused after it. GCC's noipa; clang has no noipa and ignores it
 * with a warning, and its noinline is enough there (it does not move a
 * callee's own computation into the caller without inlining it).
 */
#ifndef CAP_UTIL_COMPILER_H
#define CAP_UTIL_COMPILER_H

#if defined(__clang__)
#define CAP__OPAQUE_CALL __attribute__((noinline))
#else
#define CAP__OPAQUE_CALL __attribute__((noipa))
#endif

#endif /* CAP_UTIL_COMPILER_H */

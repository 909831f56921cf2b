/* SPDX-License-Identifier: MIT */
/*
 * Whether this translation unit is built with AddressSanitizer
 * (CAP__ASAN), and the one hook every non-returning exit from runtime
 * frames needs under it. A jump that leaves frames of the runtime's own
 * (a longjmp made by the library's interposer, a handler's escape) must
 * unpoison the stack it abandons: ASan's interceptor of longjmp does so
 * before it calls ours, but our frames above that point (their locals'
 * redzones) stay poisoned, and the program's next frames there report a
 * stack-buffer-underflow. Called last, just before the jump.
 */
#ifndef CAP_UTIL_ASAN_H
#define CAP_UTIL_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define CAP__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CAP__ASAN 1
#endif
#endif

#ifdef CAP__ASAN
void __asan_handle_no_return(void);
#endif

/* Unpoisons the stack this thread is about to leave by a jump. */
static inline void cap__asan_leaving_frames(void)
{
#ifdef CAP__ASAN
    __asan_handle_no_return();
#endif
}

#endif /* CAP_UTIL_ASAN_H */

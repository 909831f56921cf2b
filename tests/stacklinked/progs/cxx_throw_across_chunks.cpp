// SPDX-License-Identifier: MIT
// Description: a C++ exception thrown 100 frames (several linked chunks)
// deep and caught at the top unwinds through every __morestack frame; each
// one's cleanup unlinks its chunk, so after 50 throws no chunk is linked,
// the limit is the first chunk's again and no chunk leaked.
#include <capriccio.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>

static uintptr_t stack_limit()
{
    uintptr_t v;
    asm volatile("movq %%fs:0x70, %0" : "=r"(v));
    return v;
}

__attribute__((noinline)) long dive(long n)
{
    volatile char frame[1000];
    frame[0] = (char)n;
    if (n == 0)
        throw std::runtime_error("bottom");
    return dive(n - 1) + frame[0];
}

static void *run(void *)
{
    uintptr_t limit0 = stack_limit();
    long caught = 0;
    for (int i = 0; i < 50; i++) {
        try {
            dive(100);
        } catch (const std::runtime_error &) {
            caught++;
        }
        if (stack_limit() != limit0)
            return (void *)1;
    }
    return (void *)(caught == 50 ? 0L : 2L);
}

int main()
{
    cap_thread_t t;
    void *ret;
    if (cap_thread_create(&t, nullptr, run, nullptr) != 0 || cap_thread_join(t, &ret) != 0)
        return 3;
    cap_stack_stats_t st;
    cap_stack_stats(&st);
    std::fprintf(stderr, "ret %ld, %llu links, %llu unlinks, %llu chunks mapped\n", (long)ret,
                 (unsigned long long)st.chunks_linked, (unsigned long long)st.chunks_unlinked,
                 (unsigned long long)st.chunks_mapped);
    if (ret != nullptr || st.chunks_linked < 50 * 5 || st.chunks_linked != st.chunks_unlinked ||
        st.chunks_mapped > 100)
        return 1;
    return 0;
}

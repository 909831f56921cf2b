# SPDX-License-Identifier: MIT
# tests/stack: default (pooled) stacks, overflow reports, linked stacks.
set(CAPTEST_guard_budget_then_canary_ENV "CAP_STACK_GUARD=mprotect;CAP_STACK_GUARD_VMAS=20")
set(CAPTEST_trim_gives_back_deep_pages_ENV "CAP_STACK_TRIM=64K")
set(CAPTEST_canary_stack_attr_recreates_ENV "CAP_STACK_GUARD=canary")

# Memory per idle thread: 100,000 threads on every run; 1,000,000 as a long
# test (label "long"), registered only when configured with
# -DCAP_LONG_TESTS=ON (or CAP_LONG_TESTS=1 in the environment at configure
# time); run it with `ctest -L long`.
set(CAPTEST_idle_threads_memory_MANUAL TRUE)
foreach(n 1 2)
  add_test(NAME stack/idle_threads_memory/w${n}
           COMMAND ${CMAKE_CURRENT_BINARY_DIR}/stack/idle_threads_memory)
  set_tests_properties(stack/idle_threads_memory/w${n} PROPERTIES
    ENVIRONMENT "CAP_WORKERS=${n};CAPTEST_THREADS=100000" TIMEOUT 120
    SKIP_RETURN_CODE 77)
endforeach()
if(CAP_LONG_TESTS OR "$ENV{CAP_LONG_TESTS}" STREQUAL "1")
  add_test(NAME stack/idle_threads_memory_1m
           COMMAND ${CMAKE_CURRENT_BINARY_DIR}/stack/idle_threads_memory)
  set_tests_properties(stack/idle_threads_memory_1m PROPERTIES
    ENVIRONMENT "CAP_WORKERS=2;CAPTEST_THREADS=1000000" TIMEOUT 600
    LABELS long SKIP_RETURN_CODE 77)
endif()
# One stack in rotation (see the test): one worker.
set(CAPTEST_trim_gives_back_deep_pages_WORKERS 1)
set(CAPTEST_sigaction_from_handler_TIMEOUT 60)

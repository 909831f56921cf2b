# SPDX-License-Identifier: MIT
# tests/stacklinked: linked stacks. Each program under progs/ is built with
# -fsplit-stack and linked with lld and the capriccio-linked script
# (cap_linked_executable, cmake/linked.cmake), then run with 1 and 2
# workers. Without lld, under AddressSanitizer (which does not support
# split stacks) or with another compiler than GCC the tests are
# registered as skipped, with the reason.
file(GLOB cap_linked_progs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/stacklinked/progs/*.c)
# C++ programs (exceptions across chunks) when a C++ compiler is there.
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  file(GLOB cap_linked_cxx_progs CONFIGURE_DEPENDS
       ${CMAKE_CURRENT_SOURCE_DIR}/stacklinked/progs/*.cpp)
  list(APPEND cap_linked_progs ${cap_linked_cxx_progs})
endif()
set(CAPLINKED_ENV_deep_recursion_10mb "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_hot_split_loop "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_exit_from_deep_chunk "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_signals_during_splits "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_cxx_exception_across_chunks "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_arguments_cross_a_split "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_cxx_throw_across_chunks "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_vla_beyond_the_chunk "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_runtime_calls_within_bound "CAP_LINKED_FIRST=64K")
set(CAPLINKED_ENV_signal_jump_out_of_deep_calls "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_signal_jump_during_links "CAP_LINKED_FIRST=4K")
set(CAPLINKED_ENV_longjmp_inside_handler "CAP_LINKED_FIRST=4K")
set(cap_linked_skip "")
if(NOT CAP_LLD)
  set(cap_linked_skip "lld (ld.lld) not found: apt-get install lld")
elseif(CAP_SANITIZE)
  set(cap_linked_skip "AddressSanitizer does not support -fsplit-stack")
elseif(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
  # clang 14's -fsplit-stack stops at any variadic function ("Segmented
  # stacks do not support vararg functions"): docs/stacks.md.
  set(cap_linked_skip "linked stacks need the -fsplit-stack of GCC: ${CMAKE_C_COMPILER_ID} has none for variadic functions")
endif()
foreach(src ${cap_linked_progs})
  get_filename_component(name ${src} NAME_WE)
  if(cap_linked_skip AND name STREQUAL "gdb_fixture")
    continue()
  endif()
  if(cap_linked_skip)
    add_test(NAME stacklinked/${name} COMMAND sh -c "echo 'skipped: ${cap_linked_skip}'; exit 77")
    set_tests_properties(stacklinked/${name} PROPERTIES SKIP_RETURN_CODE 77)
    continue()
  endif()
  set(target test_stacklinked_${name})
  add_executable(${target} ${src})
  if(src MATCHES "\\.cpp$") # the project's C-only warning flags are not C++'s
    get_target_property(opts ${target} COMPILE_OPTIONS)
    list(REMOVE_ITEM opts -Werror=implicit-function-declaration)
    set_target_properties(${target} PROPERTIES COMPILE_OPTIONS "${opts}")
  endif()
  cap_linked_executable(${target})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                             ${CMAKE_CURRENT_SOURCE_DIR}/stacklinked/progs
                             ${PROJECT_SOURCE_DIR}/src) # stack/runtime_calls.h
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${name}
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/stacklinked)
  if(name STREQUAL "gdb_fixture")
    continue() # driven by gdb_backtrace.py below
  endif()
  foreach(n 1 2)
    add_test(NAME stacklinked/${name}/w${n} COMMAND ${target})
    set_tests_properties(stacklinked/${name}/w${n} PROPERTIES
      ENVIRONMENT "CAP_WORKERS=${n};${CAPLINKED_ENV_${name}}" TIMEOUT 120 SKIP_RETURN_CODE 77)
  endforeach()
endforeach()

# gdb's backtrace through __morestack frames (and _Unwind_Backtrace, inside
# the fixture).
if(NOT cap_linked_skip)
  find_program(CAP_GDB gdb)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(NOT CAP_GDB)
    set(CAP_GDB gdb) # the driver reports it missing and skips
  endif()
  if(Python3_Interpreter_FOUND)
    add_test(NAME stacklinked/gdb_backtrace
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/stacklinked/gdb_backtrace.py
                     ${CAP_GDB} $<TARGET_FILE:test_stacklinked_gdb_fixture>)
    set_tests_properties(stacklinked/gdb_backtrace PROPERTIES TIMEOUT 90 SKIP_RETURN_CODE 77)
  endif()
endif()

# ld.bfd must refuse the link (capriccio-linked.ld), lld must accept it.
if(NOT cap_linked_skip AND Python3_Interpreter_FOUND)
  add_test(NAME stacklinked/bfd_link_fails
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/stacklinked/bfd_link_fails.py
                   ${CMAKE_C_COMPILER} ${CAP_LINKED_LD_SCRIPT} $<TARGET_FILE_DIR:capriccio>
                   ${PROJECT_SOURCE_DIR}/include)
  set_tests_properties(stacklinked/bfd_link_fails PROPERTIES TIMEOUT 90 SKIP_RETURN_CODE 77)
endif()

# Memory per idle thread (docs/stacks.md, "Memory and tuning"): the same
# program as tests/stack/idle_threads_memory.c, built for linked stacks,
# must stay within 2.5 KiB per thread with the default settings (threads
# park in cap_cond_wait on their 2 KiB first chunk, src/stack/runtime_calls.S),
# and with the smallest room for non-split code as well.
if(NOT cap_linked_skip)
  add_executable(test_stacklinked_idle_threads_memory
                 ${CMAKE_CURRENT_SOURCE_DIR}/stack/idle_threads_memory.c)
  cap_linked_executable(test_stacklinked_idle_threads_memory)
  target_include_directories(test_stacklinked_idle_threads_memory PRIVATE
                             ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(test_stacklinked_idle_threads_memory PROPERTIES
    OUTPUT_NAME idle_threads_memory RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/stacklinked)
  foreach(n 1 2)
    add_test(NAME stacklinked/idle_threads_memory/w${n}
             COMMAND test_stacklinked_idle_threads_memory)
    set_tests_properties(stacklinked/idle_threads_memory/w${n} PROPERTIES
      ENVIRONMENT "CAP_WORKERS=${n};CAPTEST_THREADS=100000;CAPTEST_MAX_BYTES=2560"
      TIMEOUT 120 SKIP_RETURN_CODE 77)
    add_test(NAME stacklinked/idle_threads_memory_small/w${n}
             COMMAND test_stacklinked_idle_threads_memory)
    set_tests_properties(stacklinked/idle_threads_memory_small/w${n} PROPERTIES
      ENVIRONMENT "CAP_WORKERS=${n};CAPTEST_THREADS=100000;CAPTEST_MAX_BYTES=2560;CAP_LINKED_EXTERNAL=768"
      TIMEOUT 120 SKIP_RETURN_CODE 77)
  endforeach()
endif()

# Built with the stack protector on every function (the default flags of
# Debian and Ubuntu turn on -fstack-protector-strong).
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/stacklinked/progs/stack_protector_keeps_splits.c
                            PROPERTIES COMPILE_OPTIONS -fstack-protector-all)

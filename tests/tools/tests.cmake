# SPDX-License-Identifier: MIT
# tests/tools: the debugging tools, driven from the outside.
#
# gdb_fixture is not a test by itself: gdb_lists_threads.py runs it under
# gdb with tools/gdb/capriccio.py and checks `cap threads` and `cap bt`;
# proc_core_lists_threads.py has tools/proc_core.py write a core of it
# while gdb holds it and checks that the core lists the same.
# The driver exits 77 (skipped) when gdb, its Python or ptrace is missing.
set(CAPTEST_gdb_fixture_MANUAL TRUE)

find_program(CAP_GDB gdb)
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT CAP_GDB)
  set(CAP_GDB gdb) # the driver reports it missing and skips
endif()
if(Python3_Interpreter_FOUND)
  add_test(NAME tools/gdb_lists_threads
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/gdb_lists_threads.py
                   ${CAP_GDB} ${PROJECT_SOURCE_DIR}/tools/gdb/capriccio.py
                   $<TARGET_FILE:test_tools_gdb_fixture>)
  add_test(NAME tools/proc_core_lists_threads
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/proc_core_lists_threads.py
                   ${CAP_GDB} ${PROJECT_SOURCE_DIR}/tools/gdb/capriccio.py
                   $<TARGET_FILE:test_tools_gdb_fixture> ${PROJECT_SOURCE_DIR}/tools/proc_core.py)
else()
  add_test(NAME tools/gdb_lists_threads
           COMMAND sh -c "echo 'skipped: python3 not found'; exit 77")
  add_test(NAME tools/proc_core_lists_threads
           COMMAND sh -c "echo 'skipped: python3 not found'; exit 77")
endif()
set_tests_properties(tools/gdb_lists_threads tools/proc_core_lists_threads
                     PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)

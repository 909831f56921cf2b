# SPDX-License-Identifier: MIT
# tests/stacktool: tools/stackgraph on graphs with known answers (the
# paper's Figure 5 as a .ci fixture and as C, a bounded program). One
# Python test program; the C files under programs/ are its inputs, compiled
# by it with -fcallgraph-info=su, never run (and not auto-registered: they
# live in a subdirectory).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME stacktool/stackgraph
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/stacktool/test_stackgraph.py
                   ${PROJECT_SOURCE_DIR}/tools/stackgraph ${CMAKE_C_COMPILER})
else()
  add_test(NAME stacktool/stackgraph COMMAND sh -c "echo 'skipped: python3 not found'; exit 77")
endif()
set_tests_properties(stacktool/stackgraph PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)

# The same analysis from clang's -fstack-size-section objects; skipped
# (77) without clang (scripts/deps/stack.txt lists it).
find_program(CAP_CLANG NAMES clang)
if(NOT CAP_CLANG)
  set(CAP_CLANG clang) # the test reports it missing and skips
endif()
if(Python3_Interpreter_FOUND)
  add_test(NAME stacktool/stackgraph_clang
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/stacktool/test_stacksizes.py
                   ${PROJECT_SOURCE_DIR}/tools/stackgraph ${CAP_CLANG})
else()
  add_test(NAME stacktool/stackgraph_clang COMMAND sh -c "echo 'skipped: python3 not found'; exit 77")
endif()
set_tests_properties(stacktool/stackgraph_clang PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)

# SPDX-License-Identifier: MIT
# Knot's behaviour suite (knot_suite.py: real clients against a real server),
# one CTest test per group, against each build of Knot:
#   knot/pthreads/<group>        build/apps/knot/knot-pthreads
#   knot/capriccio-w<N>/<group>  build/apps/knot/knot with CAP_WORKERS=N
#   knot/capriccio-w2-uring/<group>  the same under CAP_NETIO=uring (its
#                                polls hold sockets: the killed-server
#                                and exit paths differ from epoll's)
# tests/ is configured before apps/knot, so whether those targets exist is
# only known at the end of the top-level directory: registration is
# deferred to there.

find_program(KNOT_PYTHON3 python3) # a cache variable: visible at the deferred call

function(knot_register_tests)
  set(KNOT_SUITE ${PROJECT_SOURCE_DIR}/tests/knot/knot_suite.py)
  if(NOT KNOT_PYTHON3)
    message(STATUS "knot: python3 not found; Knot's tests are not registered")
    return()
  endif()
  # A group added to the suite registers at the next build, not only at
  # the next fresh configure.
  set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${KNOT_SUITE})
  execute_process(COMMAND ${KNOT_PYTHON3} ${KNOT_SUITE} --list
                  OUTPUT_VARIABLE groups RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "knot: '${KNOT_SUITE} --list' failed")
  endif()
  string(REPLACE "\n" ";" groups "${groups}")

  set(variants)
  if(TARGET knot-pthreads)
    list(APPEND variants "pthreads|knot-pthreads|")
  endif()
  if(TARGET knot)
    list(APPEND variants "capriccio-w1|knot|CAP_WORKERS=1" "capriccio-w2|knot|CAP_WORKERS=2"
         "capriccio-w2-uring|knot|CAP_WORKERS=2+CAP_NETIO=uring")
  endif()
  foreach(v ${variants})
    string(REPLACE "|" ";" v "${v}")
    list(GET v 0 label)
    list(GET v 1 target)
    list(GET v 2 env)
    string(REPLACE "+" ";" env "${env}") # "A=1+B=2": two variables
    foreach(g ${groups})
      set(name knot/${label}/${g})
      add_test(NAME ${name} COMMAND ${KNOT_PYTHON3} ${KNOT_SUITE} $<TARGET_FILE:${target}> ${g})
      set(timeout 120)
      if(g STREQUAL "concurrency")
        set(timeout 300)
      endif()
      # The 10,000-connection group needs most of the descriptors and ports
      # to itself: never two at once.
      set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} SKIP_RETURN_CODE 77
                           ENVIRONMENT "${env}" RESOURCE_LOCK knot_${g})
    endforeach()
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL knot_register_tests)

# The parser fuzzer (fuzz/knot_fuzz.c): Knot's pure parsing sources linked
# into a mutation fuzzer, always with ASan and UBSan so that a read past an
# input is an error. ctest runs a fixed seed and count, a few seconds; run it
# longer by hand with --seconds (see the file's header comment).
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=address,undefined)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=address,undefined)
check_c_source_compiles("int main(void) { return 0; }" KNOT_FUZZ_HAVE_SANITIZERS)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
set(KNOT_DIR ${PROJECT_SOURCE_DIR}/apps/knot)
add_executable(knot_fuzz ${CMAKE_CURRENT_LIST_DIR}/fuzz/knot_fuzz.c ${KNOT_DIR}/http_parse.c
               ${KNOT_DIR}/path.c ${KNOT_DIR}/httpdate.c)
target_include_directories(knot_fuzz PRIVATE ${KNOT_DIR})
set_target_properties(knot_fuzz PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/knot)
if(KNOT_FUZZ_HAVE_SANITIZERS AND NOT CAP_SANITIZE)
  target_compile_options(knot_fuzz PRIVATE -fsanitize=address,undefined -fno-sanitize-recover=undefined)
  target_link_options(knot_fuzz PRIVATE -fsanitize=address,undefined)
endif()
add_test(NAME knot/fuzz COMMAND knot_fuzz --seed 1 --iters 150000)
set_tests_properties(knot/fuzz PROPERTIES TIMEOUT 120
                     ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1")

# SPDX-License-Identifier: MIT
# Knot's behaviour suite (knot_suite.py: real clients against a real server),
# one CTest test per group, against each build of Knot:
#   knot/pthreads/<group>        build/apps/knot/knot-pthreads
#   knot/capriccio-w<N>/<group>  build/apps/knot/knot with CAP_WORKERS=N
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
    list(APPEND variants "capriccio-w1|knot|CAP_WORKERS=1" "capriccio-w2|knot|CAP_WORKERS=2")
  endif()
  foreach(v ${variants})
    string(REPLACE "|" ";" v "${v}")
    list(GET v 0 label)
    list(GET v 1 target)
    list(GET v 2 env)
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

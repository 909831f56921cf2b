# SPDX-License-Identifier: MIT
set(CAPTEST_create_join_100k_TIMEOUT 120)
# Needs a second worker for the thread it joins before each fork.
set(CAPTEST_fork_child_reuses_finished_tcbs_WORKERS 2)
set(CAPTEST_main_exit_waits_for_others_MANUAL TRUE)
foreach(n 1 2)
  add_test(NAME thread/main_exit_waits_for_others/w${n}
           COMMAND ${CMAKE_CURRENT_BINARY_DIR}/thread/main_exit_waits_for_others)
  set_tests_properties(thread/main_exit_waits_for_others/w${n} PROPERTIES
    ENVIRONMENT "CAP_WORKERS=${n}" TIMEOUT 30
    PASS_REGULAR_EXPRESSION "all 50 threads finished after main exited")
endforeach()

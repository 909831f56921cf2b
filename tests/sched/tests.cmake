# SPDX-License-Identifier: MIT
set(CAPTEST_spread_across_workers_WORKERS 2)
set(CAPTEST_started_threads_stay_WORKERS 2)
set(CAPTEST_migrate_mode_correct_ENV "CAP_MIGRATE=1")
set(CAPTEST_invalid_settings_WORKERS 1)
set(CAPTEST_default_workers_follow_affinity_WORKERS 1)

# The deadlock report must exit with status 2 and name every thread.
set(CAPTEST_deadlock_report_MANUAL TRUE)
foreach(n 1 2)
  add_test(NAME sched/deadlock_report/w${n}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sched/deadlock_report.sh
                   ${CMAKE_CURRENT_BINARY_DIR}/sched/deadlock_report)
  set_tests_properties(sched/deadlock_report/w${n} PROPERTIES
    ENVIRONMENT "CAP_WORKERS=${n}" TIMEOUT 30)
endforeach()
# One worker: the pair and the stopper must share it.
set(CAPTEST_woken_threads_cannot_starve_WORKERS 1)
set(CAPTEST_woken_threads_cannot_starve_TIMEOUT 30)
set(CAPTEST_lone_thread_not_held_back_WORKERS "2;8")
set(CAPTEST_burst_spread_when_creator_busy_WORKERS 2)
# The waker and the woken thread on different workers: needs two.
set(CAPTEST_cross_worker_wake_runs_next_WORKERS 2)
set(CAPTEST_creation_neighbours_share_worker_WORKERS 2)
set(CAPTEST_yielders_leave_room_TIMEOUT 30)
foreach(n 1 2)
  add_test(NAME sched/yielders_leave_room/w${n}-migrate
           COMMAND ${CAP_HANG_DUMP} 20 ${CMAKE_CURRENT_BINARY_DIR}/sched/yielders_leave_room)
  set_tests_properties(sched/yielders_leave_room/w${n}-migrate PROPERTIES
    ENVIRONMENT "CAP_WORKERS=${n};CAP_MIGRATE=1" TIMEOUT 30)
endforeach()
# The most workers allowed, on however few CPUs.
set(CAPTEST_most_workers_start_and_join_WORKERS 1024)
# Under CAP_MIGRATE=1 only: with migration off a woken sleeper waits for
# its own worker, which the spinner holds (README, Limits). Each poller
# times the idle worker's sleep its own way.
set(CAPTEST_timer_fires_beside_spinner_MANUAL TRUE)
foreach(net epoll poll uring)
  set(tname sched/timer_fires_beside_spinner/${net}/w2-migrate)
  add_test(NAME ${tname} COMMAND ${CMAKE_CURRENT_BINARY_DIR}/sched/timer_fires_beside_spinner)
  set_tests_properties(${tname} PROPERTIES
    ENVIRONMENT "CAP_WORKERS=2;CAP_MIGRATE=1;CAP_NETIO=${net}"
    TIMEOUT 60 SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "is not available here")
endforeach()
# Idle workers firing the busy ones' timers, on few and on more workers.
set(CAPTEST_parking_timer_not_lost_WORKERS "2;4")
set(CAPTEST_parking_timer_not_lost_ENV "CAP_MIGRATE=1")
set(CAPTEST_parking_timer_not_lost_TIMEOUT 60)

# They change the rounding mode between computations: without
# -frounding-math a compiler may move a division across fesetround (clang
# does, and their "results in different modes differ" check then fails).
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/sched/fp_control_at_start_and_exit.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/sched/fp_control_per_thread.c
                            PROPERTIES COMPILE_OPTIONS -frounding-math)

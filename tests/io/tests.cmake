# SPDX-License-Identifier: MIT
# The I/O suite runs under every backend combination: each program is
# registered as io/<name>/<netio>-<diskio>/w<N>. Programs that touch
# regular files also run with the other disk backends. A backend that
# cannot start on this kernel (io_uring disabled, say) makes the runtime
# exit at start-up with "... is not available here": that counts as
# skipped, not failed.
set(CAPIO_NETIO epoll poll uring)
set(CAPIO_DISK_PROGRAMS regular_file_io read_blocks_only_its_thread
    cached_reads_let_others_run cached_readers_all_progress odirect_read_parks odirect_burst_readers
    hot_file_reads_keep_semantics hot_file_goes_cold_on_eviction
    runtime_fds_out_of_the_way disk_wait_sees_every_wakeup disk_completions_after_idle_spin
    odirect_file_position file_position_shared_by_writers zero_length_transfers_as_kernel
    hipri_on_buffered_files buffered_file_writes buffered_write_first_decision_race
    device_waits_as_kernel
    write_short_at_fsize_limit write_past_fsize_limit_signals_caller
    file_copy_past_fsize_limit_signals_caller hot_pread_negative_offset_einval
    file_short_read_not_continued cancel_pending_acts_in_file_copies
    read_at_position_not_torn count_beyond_buffer_as_kernel cold_file_transfers_park
    errno_kept_across_waits)
set(CAPIO_TIMEOUT_tcp_loopback_10k 300)
set(CAPIO_TIMEOUT_accept_storm 120)
# 20,000 wake-ups across kernel threads, each waiting for a CPU when the
# suite's other tests take them: 0.1-0.8 s alone, 4-26 s seen beside the
# sanitizer half at 4-6 tests at once.
set(CAPIO_TIMEOUT_pipe_ping_pong_across_workers 120)
# A loop that never yields hangs: the timeout is the failure.
set(CAPIO_TIMEOUT_ready_waits_take_turns 30)
set(CAPIO_TIMEOUT_kept_signal_reaches_computing_thread 30)
# Where buffered file writes are made is checked under CAP_FILE_WRITES=
# worker on every combination; auto and backend are added below.
set(CAPIO_ENV_buffered_file_writes "CAP_FILE_WRITES=worker")
set(CAPIO_ENV_buffered_write_first_decision_race "CAP_FILE_WRITES=worker")
# Buffered writes through the backend, where the signal was lost.
set(CAPIO_ENV_write_past_fsize_limit_signals_caller "CAP_FILE_WRITES=backend")
# The pool's bound at the old bound for work, so 64 blocked calls fill it.
set(CAPIO_ENV_pool_queued_timed_call_times_out "CAP_POOL_THREADS=64")
# One pool thread, which a blocked semop holds: timed calls queue.
set(CAPIO_ENV_pool_queued_timed_call_tries_first "CAP_POOL_THREADS=1")
# One pool thread, kept busy: a close waits in the queue (the window).
set(CAPIO_ENV_wait_during_close_does_not_keep_file "CAP_POOL_THREADS=1")
set(CAPIO_ENV_pool_short_of_threads_said "CAP_POOL_THREADS=1")
# Needs one worker for a known order of parks (see the program).
set(CAPIO_WORKERS_signal_prefers_main_thread 1)
# One worker: with two, the handler may run on the other worker while the
# poll has the fdinfo file open (README, Limits).
set(CAPIO_WORKERS_signalfd_look_keeps_lowest_fd 1)
# One worker: a thread of another could still move the position between
# a read's two steps (see the program).
set(CAPIO_WORKERS_read_at_position_not_torn 1)
# One worker: the ticker that must move during the call shares main's
# worker, so it runs while main is parked; on a second worker it may get
# no CPU during so short a call on a loaded host (seen in CI, sanitized).
set(CAPIO_WORKERS_posix_fallocate_parks 1)
# Written for one or two workers: it checks where the ring's threads were
# dealt (sched/worker.c), which differs with more.
set(CAPIO_WORKERS_pipe_ring_tokens 1 2)
# Needs a second worker: one thread holds its worker in a raw read(2).
set(CAPIO_WORKERS_kick_restarts_unseen_call 2)
set(CAPIO_WORKERS_program_urg_not_lost_to_kick 2)
# Needs a second worker: the giver runs while the caller's is stopped.
set(CAPIO_WORKERS_owned_call_kicked_by_give_back_elsewhere 2)
# Two workers: the second has no threads of its own (see the program).
set(CAPIO_WORKERS_threadless_worker_stays_asleep 2)
set(CAPIO_WORKERS_instance_handed_over_at_own_timer 2)
# Three workers: one computes and creates, one reads, one steals (not
# run migrated: that variant is for two workers).
set(CAPIO_WORKERS_instance_held_when_idle_worker_steals 3)
# Needs a second worker: a tracer holds the one a child's SIGCHLD went to.
set(CAPIO_WORKERS_sigchld_late_skips_later_wait 2)
# Needs a second worker: the spinner holds one without parking.
set(CAPIO_WORKERS_unblocked_signal_reaches_spinner_elsewhere 2)
# Needs a second worker: the target computes on one without yielding.
set(CAPIO_WORKERS_thread_kill_into_handler_returns 2)
# One worker: the tracer stops the kernel thread main and the acceptor
# share, and main runs again only once the acceptor parked. It asks
# liburing itself whether the kernel can make the accept the test is about.
set(CAPIO_WORKERS_accept_race_lost_on_unowned_listener_parks 1)
set(CAPTEST_accept_race_lost_on_unowned_listener_parks_LIBS PkgConfig::LIBURING)
# One worker: the breakpoint is on the acceptor's kernel thread. liburing:
# its probe, and the address of io_uring_submit.
set(CAPIO_WORKERS_accept_interrupted_by_forking_handler 1)
set(CAPTEST_accept_interrupted_by_forking_handler_LIBS PkgConfig::LIBURING)
# One worker: main runs only once the reader parked (a jump into a thread
# running on another worker is refused: README, Limits).
set(CAPIO_WORKERS_signal_jump_handed_to_cancelled_thread 1)

# Each program runs again with CAP_MIGRATE=1 (io/<name>/<net>-uring/
# w2-migrate), where a thread may resume on another worker than it parked
# on: waits that end on another worker, registries and rings of one worker
# left from another. (The programs read errno through a non-const
# accessor, io_util.h, as migration requires.) Not the programs that check
# that a started thread stays on its worker, the default placement. (Until
# session 46 not, on uring, the FIFO opens either, whose reader's close
# released the FIFO only when the kernel thread that armed its poll next
# entered the kernel; a close now waits for that: netio_uring.c.)
set(CAPIO_NOT_MIGRATED pipe_ping_pong_across_workers pipe_ring_tokens
    # under CAP_MIGRATE every worker may run any thread, so takes part in I/O
    threadless_worker_stays_asleep
    # the caller and the ticker must stay on the worker the tracer stops
    owned_call_kicked_by_give_back_elsewhere
    # the spinner and the reader must stay on their two workers
    instance_handed_over_at_own_timer
    # the reader's worker is the kernel thread the tracer stops
    program_urg_not_lost_to_kick
    # its reader, woken, may resume on main's worker and hold it in a
    # spinning handler while main's timer waits there
    thread_kill_into_handler_returns
    # the forker must stay on the worker the tracer holds
    sigchld_late_skips_later_wait
    # the timer's signal goes to the kernel thread main runs on
    signal_jump_out_of_runtime_calls signal_jump_out_of_fork_not_in_child
    signal_jump_out_of_aio_suspend_open_2
    # it signals once the kernel thread main made its call on sleeps, which
    # under migration does not mean main has parked: main may go on into
    # the call on the other worker (1 to 2 runs in 30 returned data, on
    # session 33's starting library too)
    signal_interrupt_precedes_handler_effects)
# A name-service module whose lookups wait for an answer on a pipe, as
# sssd's or systemd's wait for their daemon. The program links it, so
# glibc's dlopen of libnss_captest.so.2 finds it loaded, by its soname.
add_library(test_nss_captest SHARED ${CMAKE_CURRENT_SOURCE_DIR}/io/nss/captest_module.c)
set_target_properties(test_nss_captest PROPERTIES OUTPUT_NAME nss_captest SOVERSION 2
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/io/nss)
set(CAPTEST_user_lookups_take_turns_LIBS test_nss_captest)
# A library whose constructor waits on a pipe, which the program dlopens
# by name through its RUNPATH.
add_library(test_dl_plugin SHARED ${CMAKE_CURRENT_SOURCE_DIR}/io/dl/plugin.c)
set_target_properties(test_dl_plugin PROPERTIES OUTPUT_NAME captest_dlplugin
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/io/dl)
set(CAPTEST_dlopen_constructor_waits_PLUGINS test_dl_plugin)
file(GLOB capio_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/io/*.c)
foreach(src ${capio_srcs})
  get_filename_component(name ${src} NAME_WE)
  set(CAPTEST_${name}_MANUAL TRUE)
  set(timeout 60)
  if(DEFINED CAPIO_TIMEOUT_${name})
    set(timeout ${CAPIO_TIMEOUT_${name}})
  endif()
  cap_dump_after(${timeout} dump_after)
  set(combos)
  foreach(net ${CAPIO_NETIO})
    list(APPEND combos "${net};uring")
  endforeach()
  if(name IN_LIST CAPIO_DISK_PROGRAMS)
    list(APPEND combos "epoll;threads" "epoll;blocking")
  endif()
  set(extra_env)
  if(DEFINED CAPIO_ENV_${name})
    set(extra_env ";${CAPIO_ENV_${name}}")
  endif()
  set(workers 1 2 ${CAP_TEST_MORE_WORKERS})
  if(DEFINED CAPIO_WORKERS_${name})
    set(workers ${CAPIO_WORKERS_${name}})
  endif()
  set(i 0)
  list(LENGTH combos ncombos)
  while(i LESS ncombos)
    list(GET combos ${i} net)
    math(EXPR j "${i} + 1")
    list(GET combos ${j} disk)
    math(EXPR i "${i} + 2")
    foreach(n ${workers})
      set(tname io/${name}/${net}-${disk}/w${n})
      add_test(NAME ${tname}
               COMMAND ${CAP_HANG_DUMP} ${dump_after} ${CMAKE_CURRENT_BINARY_DIR}/io/${name})
      set_tests_properties(${tname} PROPERTIES
        ENVIRONMENT "CAP_WORKERS=${n};CAP_NETIO=${net};CAP_DISKIO=${disk}${extra_env}"
        TIMEOUT ${timeout} SKIP_RETURN_CODE 77
        SKIP_REGULAR_EXPRESSION "is not available here")
    endforeach()
  endwhile()
  if(name IN_LIST CAPIO_NOT_MIGRATED OR NOT "2" IN_LIST workers)
    continue()
  endif()
  set(migrated 2)
  if(NOT DEFINED CAPIO_WORKERS_${name})
    list(APPEND migrated ${CAP_TEST_MORE_WORKERS})
  endif()
  foreach(net ${CAPIO_NETIO})
    if(name IN_LIST CAPIO_NOT_MIGRATED_${net})
      continue()
    endif()
    foreach(n ${migrated})
      set(tname io/${name}/${net}-uring/w${n}-migrate)
      add_test(NAME ${tname}
               COMMAND ${CAP_HANG_DUMP} ${dump_after} ${CMAKE_CURRENT_BINARY_DIR}/io/${name})
      set_tests_properties(${tname} PROPERTIES
        ENVIRONMENT "CAP_WORKERS=${n};CAP_MIGRATE=1;CAP_NETIO=${net};CAP_DISKIO=uring${extra_env}"
        TIMEOUT ${timeout} SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "is not available here")
    endforeach()
  endforeach()
endforeach()

# Buffered file writes under the other CAP_FILE_WRITES settings.
foreach(mode auto backend)
  foreach(disk uring threads)
    foreach(n 1 2)
      set(tname io/buffered_file_writes/epoll-${disk}/w${n}-${mode})
      add_test(NAME ${tname} COMMAND ${CMAKE_CURRENT_BINARY_DIR}/io/buffered_file_writes)
      set_tests_properties(${tname} PROPERTIES
        ENVIRONMENT "CAP_WORKERS=${n};CAP_DISKIO=${disk};CAP_FILE_WRITES=${mode}"
        TIMEOUT 60 SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "is not available here")
    endforeach()
  endforeach()
endforeach()

# Preloading: a program that is not linked with the library.
add_executable(test_io_preload_intercepts io/preload/preload_intercepts.c)
target_link_libraries(test_io_preload_intercepts PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(test_io_preload_intercepts PROPERTIES OUTPUT_NAME preload_intercepts
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/io)
if(NOT CAP_SANITIZE) # ASan's runtime must come first; a preload cannot do that
  foreach(net ${CAPIO_NETIO})
    foreach(n 1 2)
      add_test(NAME io/preload_intercepts/${net}/w${n}
               COMMAND ${CMAKE_CURRENT_BINARY_DIR}/io/preload_intercepts)
      set_tests_properties(io/preload_intercepts/${net}/w${n} PROPERTIES
        ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:capriccio>;CAP_WORKERS=${n};CAP_NETIO=${net}"
        TIMEOUT 30 PASS_REGULAR_EXPRESSION "preload ok"
        SKIP_REGULAR_EXPRESSION "is not available here")
    endforeach()
  endforeach()
endif()

# The library after libc in the search order (reached only through
# another library, or dlopen()ed): refused at start-up (exit 2, how to
# link), unless CAP_AFTER_LIBC=native. Preloaded, or linked into the
# program (libcapriccio.a), it runs.
add_library(test_io_linkorder_dep SHARED io/linkorder/dep.c)
target_link_libraries(test_io_linkorder_dep PRIVATE capriccio)
add_executable(test_io_linkorder io/linkorder/main.c)
target_link_libraries(test_io_linkorder PRIVATE test_io_linkorder_dep)
add_executable(test_io_linkorder_static io/linkorder/main.c io/linkorder/dep.c)
target_link_libraries(test_io_linkorder_static PRIVATE capriccio_static)
add_executable(test_io_linkorder_dlopen io/linkorder/dlopen.c)
target_link_libraries(test_io_linkorder_dlopen PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(test_io_linkorder PROPERTIES OUTPUT_NAME library_after_libc
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/io)
set_target_properties(test_io_linkorder_static PROPERTIES OUTPUT_NAME library_linked_static
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/io)
set_target_properties(test_io_linkorder_dlopen PROPERTIES OUTPUT_NAME library_dlopened
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/io)
set(CAPIO_EXPECT_REFUSED ${CMAKE_CURRENT_SOURCE_DIR}/io/linkorder/expect_refused.sh)
add_test(NAME io/library_linked_static_runs
         COMMAND ${CMAKE_CURRENT_BINARY_DIR}/io/library_linked_static)
set_tests_properties(io/library_linked_static_runs PROPERTIES TIMEOUT 30
  PASS_REGULAR_EXPRESSION "program ran")
if(NOT CAP_SANITIZE) # ASan's runtime comes first and forwards: nothing to refuse
  add_test(NAME io/library_after_libc_refused
           COMMAND ${CAPIO_EXPECT_REFUSED} ${CMAKE_CURRENT_BINARY_DIR}/io/library_after_libc)
  add_test(NAME io/library_dlopened_refused
           COMMAND ${CAPIO_EXPECT_REFUSED} ${CMAKE_CURRENT_BINARY_DIR}/io/library_dlopened
                   $<TARGET_FILE:capriccio>)
  set_tests_properties(io/library_after_libc_refused io/library_dlopened_refused
                       PROPERTIES TIMEOUT 30)
  add_test(NAME io/library_after_libc_preloaded
           COMMAND ${CMAKE_CURRENT_BINARY_DIR}/io/library_after_libc)
  set_tests_properties(io/library_after_libc_preloaded PROPERTIES
    ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:capriccio>;CAP_WORKERS=2" TIMEOUT 30
    PASS_REGULAR_EXPRESSION "program ran")
  # CAP_AFTER_LIBC=native: no runtime, the program on libc's threads; a
  # call of the library's own interface is refused; a bad value stops it.
  add_test(NAME io/library_after_libc_native
           COMMAND ${CMAKE_CURRENT_BINARY_DIR}/io/library_after_libc native)
  set_tests_properties(io/library_after_libc_native PROPERTIES
    ENVIRONMENT "CAP_AFTER_LIBC=native;CAP_WORKERS=2" TIMEOUT 30
    PASS_REGULAR_EXPRESSION "program ran")
  add_test(NAME io/library_dlopened_native_call_refused
           COMMAND ${CAPIO_EXPECT_REFUSED} ${CMAKE_CURRENT_BINARY_DIR}/io/library_dlopened
                   $<TARGET_FILE:capriccio> native)
  set_tests_properties(io/library_dlopened_native_call_refused PROPERTIES
    ENVIRONMENT "CAP_AFTER_LIBC=native" TIMEOUT 30)
  add_test(NAME io/library_after_libc_bad_setting
           COMMAND ${CMAKE_CURRENT_BINARY_DIR}/io/library_after_libc)
  set_tests_properties(io/library_after_libc_bad_setting PROPERTIES
    ENVIRONMENT "CAP_AFTER_LIBC=maybe" TIMEOUT 30
    PASS_REGULAR_EXPRESSION "CAP_AFTER_LIBC.*refuse.*native")
endif()

# A third-party client library against a real server (Debian's libhiredis
# and redis-server, scripts/deps/io.txt); skipped when they are missing.
find_library(CAPIO_HIREDIS hiredis)
find_path(CAPIO_HIREDIS_INCLUDE hiredis/hiredis.h)
if(CAPIO_HIREDIS AND CAPIO_HIREDIS_INCLUDE)
  add_executable(test_io_hiredis_blpop io/hiredis/hiredis_blpop.c)
  target_link_libraries(test_io_hiredis_blpop PRIVATE capriccio ${CAPIO_HIREDIS})
  target_include_directories(test_io_hiredis_blpop PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                             ${CAPIO_HIREDIS_INCLUDE})
  set_target_properties(test_io_hiredis_blpop PROPERTIES OUTPUT_NAME hiredis_blpop
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/io)
  foreach(net ${CAPIO_NETIO})
    add_test(NAME io/hiredis_blpop/${net}/w1 COMMAND ${CMAKE_CURRENT_BINARY_DIR}/io/hiredis_blpop)
    set_tests_properties(io/hiredis_blpop/${net}/w1 PROPERTIES
      ENVIRONMENT "CAP_WORKERS=1;CAP_NETIO=${net}" TIMEOUT 120 SKIP_RETURN_CODE 77
      SKIP_REGULAR_EXPRESSION "is not available here" RUN_SERIAL TRUE)
  endforeach()
endif()

# Another third-party library, with no server to start: Debian's OpenSSL
# (libssl-dev, scripts/deps/io.txt), whose per-thread error queues live in
# glibc's thread-specific keys; not built when it is missing.
find_package(OpenSSL 3 QUIET)
if(OPENSSL_FOUND)
  add_executable(test_io_openssl_tls_threads io/openssl/openssl_tls_threads.c)
  target_link_libraries(test_io_openssl_tls_threads PRIVATE capriccio OpenSSL::SSL OpenSSL::Crypto)
  target_include_directories(test_io_openssl_tls_threads PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(test_io_openssl_tls_threads PROPERTIES OUTPUT_NAME openssl_tls_threads
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/io)
  foreach(net ${CAPIO_NETIO})
    foreach(n 1 2)
      add_test(NAME io/openssl_tls_threads/${net}/w${n}
               COMMAND ${CMAKE_CURRENT_BINARY_DIR}/io/openssl_tls_threads)
      set_tests_properties(io/openssl_tls_threads/${net}/w${n} PROPERTIES
        ENVIRONMENT "CAP_WORKERS=${n};CAP_NETIO=${net}" TIMEOUT 120)
    endforeach()
  endforeach()
else()
  message(STATUS "tests/io: OpenSSL 3 not found (apt-get install libssl-dev): "
                 "io/openssl_tls_threads not built")
endif()

# Calls with a count beyond their buffer on purpose: _FORTIFY_SOURCE (in
# distributions' default flags) would stop the program at the first one.
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/io/count_beyond_buffer_as_kernel.c
                            PROPERTIES COMPILE_OPTIONS -U_FORTIFY_SOURCE)

# io/exit_late_destructor_wakes: its latefini library comes after
# libcapriccio on the link line (its destructor then runs after the
# library's); the program's target exists only once this directory's
# loop made it.
add_library(test_io_latefini SHARED io/latefini/late_fini.c)
cmake_language(DEFER CALL target_link_libraries test_io_exit_late_destructor_wakes
               PRIVATE test_io_latefini)

# SPDX-License-Identifier: MIT
#
# Compatibility: ordinary pthread programs in compat/programs/ (plain
# POSIX, never mentioning capriccio, never edited for it), each built twice
# and required to pass both ways:
#   compat/<name>/glibc     against glibc's pthreads;
#   compat/<name>/cap/w<N>  with -include capriccio/pthread.h, linked with
#                           the library, at each worker count;
#   compat/<name>/cap/w2-migrate  the same with CAP_MIGRATE=1, where threads
#                           move between workers: a cached errno address
#                           (glibc's const __errno_location) would fail
#                           errno_per_thread here.
#   compat/<name>/cap/<netio>/w<N>  for the programs in COMPAT_NETIO_PROGRAMS,
#                           which touch sockets: under the other network
#                           backends too (epoll is the default).
#   compat/<name>/cap/disk-<diskio>/w<N>  for the programs in
#                           COMPAT_DISKIO_PROGRAMS, which do file I/O: under
#                           the other disk backends too (uring is the default).
# They live in a subfolder so the per-area glob does not build them a
# third time as ordinary capriccio tests.
find_package(Threads REQUIRED)
set(COMPAT_NETIO_PROGRAMS tcp_recv_of_nothing io_results_as_glibc stdio_as_glibc epoll_as_glibc
    cancel_points_as_glibc aio_as_glibc terminal_as_glibc splice_as_glibc event_fds_as_glibc
    fifo_writes_as_glibc unix_sockets_as_glibc poll_kinds_as_glibc pidfd_waits_as_glibc
    underscore_fork_child forkpty_child syslog_as_glibc handler_fork_exec_as_glibc
    fork_beside_pipe_transfers)
set(COMPAT_DISKIO_PROGRAMS file_io_as_glibc)
# The library's runs go through hang_dump.sh (tests/CMakeLists.txt), so a
# hang leaves a trace of the program and its children in the log. At
# 25 s, before the alarm(30) of several programs ends the parent and
# leaves a hung child, which holds the output pipe, to the ctest timeout
# with no trace (the longest program takes ~4 s sanitized).
set(compat_dump_after 25)
file(GLOB compat_programs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/compat/programs/*.c)
foreach(src ${compat_programs})
  get_filename_component(name ${src} NAME_WE)

  add_executable(compat_glibc_${name} ${src})
  target_link_libraries(compat_glibc_${name} PRIVATE Threads::Threads)
  set_target_properties(compat_glibc_${name} PROPERTIES OUTPUT_NAME ${name}
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/compat/glibc)
  add_test(NAME compat/${name}/glibc COMMAND compat_glibc_${name})
  set_tests_properties(compat/${name}/glibc PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)

  add_executable(compat_cap_${name} ${src})
  target_compile_options(compat_cap_${name} PRIVATE "SHELL:-include capriccio/pthread.h")
  target_link_libraries(compat_cap_${name} PRIVATE capriccio)
  set_target_properties(compat_cap_${name} PROPERTIES OUTPUT_NAME ${name}
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/compat/cap)
  foreach(n ${CAP_TEST_WORKERS})
    add_test(NAME compat/${name}/cap/w${n}
             COMMAND ${CAP_HANG_DUMP} ${compat_dump_after} $<TARGET_FILE:compat_cap_${name}>)
    set_tests_properties(compat/${name}/cap/w${n} PROPERTIES
      ENVIRONMENT "CAP_WORKERS=${n}" TIMEOUT 60 SKIP_RETURN_CODE 77)
  endforeach()
  if(name IN_LIST COMPAT_NETIO_PROGRAMS)
    foreach(net poll uring)
      foreach(n ${CAP_TEST_WORKERS})
        add_test(NAME compat/${name}/cap/${net}/w${n}
                 COMMAND ${CAP_HANG_DUMP} ${compat_dump_after} $<TARGET_FILE:compat_cap_${name}>)
        set_tests_properties(compat/${name}/cap/${net}/w${n} PROPERTIES
          ENVIRONMENT "CAP_WORKERS=${n};CAP_NETIO=${net}" TIMEOUT 60 SKIP_RETURN_CODE 77
          SKIP_REGULAR_EXPRESSION "is not available here")
      endforeach()
    endforeach()
  endif()
  if(name IN_LIST COMPAT_DISKIO_PROGRAMS)
    foreach(disk threads blocking)
      foreach(n ${CAP_TEST_WORKERS})
        add_test(NAME compat/${name}/cap/disk-${disk}/w${n}
                 COMMAND ${CAP_HANG_DUMP} ${compat_dump_after} $<TARGET_FILE:compat_cap_${name}>)
        set_tests_properties(compat/${name}/cap/disk-${disk}/w${n} PROPERTIES
          ENVIRONMENT "CAP_WORKERS=${n};CAP_DISKIO=${disk}" TIMEOUT 60 SKIP_RETURN_CODE 77)
      endforeach()
    endforeach()
  endif()
  add_test(NAME compat/${name}/cap/w2-migrate
           COMMAND ${CAP_HANG_DUMP} ${compat_dump_after} $<TARGET_FILE:compat_cap_${name}>)
  set_tests_properties(compat/${name}/cap/w2-migrate PROPERTIES
    ENVIRONMENT "CAP_WORKERS=2;CAP_MIGRATE=1" TIMEOUT 60 SKIP_RETURN_CODE 77)
endforeach()

# Programs that also run with their peer process on the other thread
# package: the program's child runs by exec the build COMPAT_PEER names
# (semaphores_across_processes: named semaphores shared by a process on
# Capriccio and one on NPTL, each way round).
set(COMPAT_PEER_PROGRAMS semaphores_across_processes)
foreach(name ${COMPAT_PEER_PROGRAMS})
  foreach(n ${CAP_TEST_WORKERS})
    add_test(NAME compat/${name}/cap-glibc-peer/w${n}
             COMMAND ${CAP_HANG_DUMP} ${compat_dump_after} $<TARGET_FILE:compat_cap_${name}>)
    set_tests_properties(compat/${name}/cap-glibc-peer/w${n} PROPERTIES
      ENVIRONMENT "CAP_WORKERS=${n};COMPAT_PEER=$<TARGET_FILE:compat_glibc_${name}>"
      TIMEOUT 60 SKIP_RETURN_CODE 77)
  endforeach()
  add_test(NAME compat/${name}/glibc-cap-peer COMMAND compat_glibc_${name})
  set_tests_properties(compat/${name}/glibc-cap-peer PROPERTIES
    ENVIRONMENT "CAP_WORKERS=1;COMPAT_PEER=$<TARGET_FILE:compat_cap_${name}>"
    TIMEOUT 60 SKIP_RETURN_CODE 77)
endforeach()

# The forced include on files that are not plain C programs, compiled (not
# run) as a test: a failure here is a build that breaks, as it did for
# real programs, not a wrong result.
#   compat/header/assembly   a .S file preprocessed with the forced include
#                            (makefiles pass CFLAGS when they assemble).
set(compat_header_dir ${CMAKE_CURRENT_SOURCE_DIR}/compat/header)
set(compat_header_flags -include capriccio/pthread.h -I${PROJECT_SOURCE_DIR}/include)
add_test(NAME compat/header/assembly
         COMMAND ${CMAKE_C_COMPILER} ${compat_header_flags} -c ${compat_header_dir}/assembly.S
                 -o ${CMAKE_CURRENT_BINARY_DIR}/compat_header_assembly.o)
set_tests_properties(compat/header/assembly PROPERTIES TIMEOUT 60)
#   compat/header/autoconf_gnu_source   "#define _GNU_SOURCE 1" (autoconf's
#                            config.h) after the forced include, -Werror.
add_test(NAME compat/header/autoconf_gnu_source
         COMMAND ${CMAKE_C_COMPILER} ${compat_header_flags} -Werror -c
                 ${compat_header_dir}/autoconf_gnu_source.c
                 -o ${CMAKE_CURRENT_BINARY_DIR}/compat_header_autoconf_gnu_source.o)
set_tests_properties(compat/header/autoconf_gnu_source PROPERTIES TIMEOUT 60)
#   compat/header/own_names[/posix]   a program with its own functions and
#                            variables named open, fcntl, creat (<fcntl.h>,
#                            which <pthread.h> does not bring in), -Werror;
#                            under _POSIX_C_SOURCE also read, close, pipe ...
#                            (<unistd.h>, which <signal.h> brings in only
#                            under _GNU_SOURCE).
add_test(NAME compat/header/own_names
         COMMAND ${CMAKE_C_COMPILER} ${compat_header_flags} -Wall -Wextra -Werror -fsyntax-only
                 ${compat_header_dir}/own_names.c)
add_test(NAME compat/header/own_names/posix
         COMMAND ${CMAKE_C_COMPILER} -D_POSIX_C_SOURCE=200809L -DOWN_UNISTD_NAMES
                 ${compat_header_flags} -Wall -Wextra -Werror -fsyntax-only
                 ${compat_header_dir}/own_names.c)
set_tests_properties(compat/header/own_names compat/header/own_names/posix PROPERTIES TIMEOUT 60)
#   compat/header/pedantic/<mode>   a pthread (and C11 threads) program
#                            under -pedantic-errors -Wall -Wextra -Werror in
#                            each language mode the header supports (C89 on;
#                            C++98 on with a C++ compiler, when there is one).
set(compat_pedantic_flags -pedantic-errors -Wall -Wextra -Werror -fsyntax-only)
foreach(std c89 c99 c11 c17 c2x)
  add_test(NAME compat/header/pedantic/${std}
           COMMAND ${CMAKE_C_COMPILER} -std=${std} ${compat_pedantic_flags} ${compat_header_flags}
                   ${compat_header_dir}/pedantic.c)
  set_tests_properties(compat/header/pedantic/${std} PROPERTIES TIMEOUT 60)
endforeach()
find_program(CAP_TEST_CXX NAMES g++ c++ clang++)
if(CAP_TEST_CXX)
  foreach(std c++98 c++11 c++17 c++20)
    add_test(NAME compat/header/pedantic/${std}
             COMMAND ${CAP_TEST_CXX} -x c++ -std=${std} ${compat_pedantic_flags}
                     ${compat_header_flags} ${compat_header_dir}/pedantic.c)
    set_tests_properties(compat/header/pedantic/${std} PROPERTIES TIMEOUT 60)
  endforeach()
endif()

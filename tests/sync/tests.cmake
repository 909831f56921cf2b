# SPDX-License-Identifier: MIT
# tests/sync: every *.c is registered by tests/CMakeLists.txt. The C++
# programs under cxx/ (the C++ standard library's locks, which call
# glibc's pthread names) are added here when a C++ compiler is there.
# libc_sem_foreign_poster_exits makes a kernel-thread hand-off per round
# (glibc's pthread_create, the post, the worker's wake-up, the join): with
# the CPUs oversubscribed each costs a time slice, ~110 rounds a second
# beside six busy loops on two CPUs (under ASan) against ~4,400 alone
# (2,000 rounds; its posters spin rather than sched_yield, which made it
# ~14 rounds a second there), so it gets more than the default 60 s
# before its timeout calls it a hang.
set(CAPTEST_libc_sem_foreign_poster_exits_TIMEOUT 180)

include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  file(GLOB cap_sync_cxx CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/sync/cxx/*.cpp)
  foreach(src ${cap_sync_cxx})
    cap_add_test_program(sync ${src})
    get_filename_component(name ${src} NAME_WE)
    get_target_property(opts test_sync_${name} COMPILE_OPTIONS)
    list(REMOVE_ITEM opts -Werror=implicit-function-declaration) # C only
    set_target_properties(test_sync_${name} PROPERTIES COMPILE_OPTIONS "${opts}"
                          CXX_STANDARD 20) # <latch>, <semaphore>
  endforeach()
else()
  message(STATUS "tests/sync: no C++ compiler, the C++ lock tests are not built")
endif()

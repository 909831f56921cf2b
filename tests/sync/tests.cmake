# SPDX-License-Identifier: MIT
# tests/sync: every *.c is registered by tests/CMakeLists.txt. The C++
# programs under cxx/ (the C++ standard library's locks, which call
# glibc's pthread names) are added here when a C++ compiler is there.
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

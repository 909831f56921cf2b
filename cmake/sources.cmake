# SPDX-License-Identifier: MIT
# The library's sources: every .c and .S under src/, one concept per file.
file(GLOB_RECURSE CAP_SOURCES CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_SOURCE_DIR}/src/*.c
     ${CMAKE_CURRENT_SOURCE_DIR}/src/*.S)

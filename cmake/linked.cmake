# SPDX-License-Identifier: MIT
# Linked stacks, the build side (docs/stacks.md, src/stack/linked.h):
#  - capriccio-linked.pc: compile with -fsplit-stack, link with lld and the
#    linker script src/stack/capriccio-linked.ld, which marks the program
#    for linked stacks and makes ld.bfd stop with an error, and with -z now:
#    lazy binding would run the dynamic linker (KiBs of stack for the xsave
#    area) wherever a function first calls into a shared library, which on
#    a small chunk may be well past its end;
#  - --wrap for the runtime calls of src/stack/runtime_calls.S, which
#    then run on the thread's current chunk;
#  - cap_linked_executable(target): the same flags for targets of this
#    build (tests, benchmarks). CAP_LLD is empty when lld is missing.
find_program(CAP_LLD NAMES ld.lld)
set(CAP_LINKED_LD_SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/src/stack/capriccio-linked.ld)

# linked.c runs between a caller's arguments and its callee without saving
# the vector registers (see its header comment), and calls region.c there.
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/stack/linked.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/src/stack/region.c
                            PROPERTIES COMPILE_OPTIONS -mgeneral-regs-only)

# The library binds its own imports (libc, liburing) at load time too: a
# thread on a linked chunk runs the library's code there, and the first
# call through one of its lazy PLT slots would run the dynamic linker
# (3 KiB of stack, measured by tests/stacklinked runtime_calls_within_bound)
# wherever that thread's chunk happens to end. -z now in the program binds
# only the program's own slots.
target_link_options(capriccio PRIVATE -Wl,-z,now)

# The executable's own __morestack and __morestack_non_split (see
# src/stack/morestack.S for why they cannot live in the shared library),
# and its __stack_chk_fail (src/stack/stack_chk.S: the stack protector's
# calls would otherwise make every function with a canary a caller of
# non-split code).
add_library(capriccio_linked STATIC ${CMAKE_CURRENT_SOURCE_DIR}/src/stack/morestack.S
            ${CMAKE_CURRENT_SOURCE_DIR}/src/stack/runtime_calls.S
            ${CMAKE_CURRENT_SOURCE_DIR}/src/stack/stack_chk.S)
target_compile_definitions(capriccio_linked PRIVATE CAP_MORESTACK_IN_EXE)
target_include_directories(capriccio_linked PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)

# The runtime calls with a known stack bound (src/stack/runtime_calls.S):
# a program's calls to each go to its split-stack entry point there, by
# --wrap, so a thread can block in them without linking a chunk for
# non-split code.
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/src/stack/runtime_calls.S cap_runtime_call_lines
     REGEX "^RUNTIME_CALL [a-z_0-9]+$")
set(CAP_LINKED_WRAP "")
foreach(line ${cap_runtime_call_lines})
  string(REGEX REPLACE "^RUNTIME_CALL " "" name "${line}")
  list(APPEND CAP_LINKED_WRAP "--wrap=${name}")
endforeach()
list(JOIN CAP_LINKED_WRAP "," CAP_LINKED_WRAP)
set(CAP_LINKED_WRAP "-Wl,${CAP_LINKED_WRAP}")
set_target_properties(capriccio_linked PROPERTIES OUTPUT_NAME capriccio-linked
                      POSITION_INDEPENDENT_CODE ON)
install(TARGETS capriccio_linked ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

configure_file(${CMAKE_CURRENT_SOURCE_DIR}/src/stack/capriccio-linked.pc.in
               capriccio-linked.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/capriccio-linked.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${CAP_LINKED_LD_SCRIPT} DESTINATION ${CMAKE_INSTALL_LIBDIR}/capriccio)

function(cap_linked_executable target)
  target_compile_options(${target} PRIVATE -fsplit-stack)
  target_link_options(${target} PRIVATE -fuse-ld=lld -Wl,-z,now ${CAP_LINKED_WRAP}
                      ${CAP_LINKED_LD_SCRIPT})
  target_link_libraries(${target} PRIVATE capriccio_linked capriccio)
endfunction()

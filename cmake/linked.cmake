# SPDX-License-Identifier: MIT
# Linked stacks, the build side (docs/stacks.md, src/stack/linked.h):
#  - capriccio-linked.pc: compile with -fsplit-stack, link with lld and the
#    linker script src/stack/capriccio-linked.ld, which marks the program
#    for linked stacks and makes ld.bfd stop with an error, and with -z now:
#    lazy binding would run the dynamic linker (KiBs of stack for the xsave
#    area) wherever a function first calls into a shared library, which on
#    a small chunk may be well past its end;
#  - cap_linked_executable(target): the same flags for targets of this
#    build (tests, benchmarks). CAP_LLD is empty when lld is missing.
find_program(CAP_LLD NAMES ld.lld)
set(CAP_LINKED_LD_SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/src/stack/capriccio-linked.ld)

# linked.c runs between a caller's arguments and its callee without saving
# the vector registers (see its header comment).
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/stack/linked.c
                            PROPERTIES COMPILE_OPTIONS -mgeneral-regs-only)

# The executable's own __morestack and __morestack_non_split (see
# src/stack/morestack.S for why they cannot live in the shared library).
add_library(capriccio_linked STATIC ${CMAKE_CURRENT_SOURCE_DIR}/src/stack/morestack.S)
target_compile_definitions(capriccio_linked PRIVATE CAP_MORESTACK_IN_EXE)
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
  target_link_options(${target} PRIVATE -fuse-ld=lld -Wl,-z,now ${CAP_LINKED_LD_SCRIPT})
  target_link_libraries(${target} PRIVATE capriccio_linked capriccio)
endfunction()

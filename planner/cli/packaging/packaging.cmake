# Installation and packaging (included by the top-level CMakeLists.txt after
# every executable is defined):
#   cmake --install build --prefix P   bin/llmplan, bin/llmplan-profile (when
#                                      built), lib/llmplan/llmplan_mpi.so (when
#                                      MPI is built in), bash completions, man
#                                      pages
#   cd build && cpack -G DEB           llmplan_<version>_<arch>.deb, and
#                                      llmplan-profile_<version>_<arch>.deb
#                                      when the profiler is built
include(GNUInstallDirs)
set(_llmplan_packaging_dir ${CMAKE_CURRENT_LIST_DIR})
set(_llmplan_completions_dir ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

install(TARGETS llmplan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT llmplan)
if(TARGET llmplan_mpi)
  # The MPI module (planner/study/mpi.cmake) that llmplan loads under mpirun/srun,
  # found relative to bin/llmplan; dpkg-shlibdeps adds MPI's library to the
  # package's Depends.
  install(TARGETS llmplan_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/llmplan
          COMPONENT llmplan)
endif()
# bash-completion loads completions/NAME on the first completion of NAME.
install(FILES ${_llmplan_packaging_dir}/llmplan.bash DESTINATION ${_llmplan_completions_dir}
        RENAME llmplan COMPONENT llmplan)
if(TARGET llmplan-profile)
  # The CUDA libraries are not in the system's library path everywhere: the
  # installed binary keeps the CUDA library directory it was linked against
  # as its RUNPATH (LD_LIBRARY_PATH still comes first).
  set_target_properties(llmplan-profile PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS llmplan-profile RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          COMPONENT profiler)
  install(FILES ${_llmplan_packaging_dir}/llmplan.bash DESTINATION ${_llmplan_completions_dir}
          RENAME llmplan-profile COMPONENT profiler)
endif()

# Man pages, generated at build time from each program's --help and
# --version (help2man, Debian package help2man), so they match the binary.
find_program(LLMPLAN_HELP2MAN help2man)
# llmplan_man_page(TARGET COMPONENT DESCRIPTION) makes build/man/TARGET.1
# (target TARGET_man, part of `all`; the test binary depends on it too) and
# installs it.
function(llmplan_man_page target component description)
  set(script ${_llmplan_packaging_dir}/make_man_page.sh)
  set(page ${LLMPLAN_MAN_DIR}/${target}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND bash ${script} ${LLMPLAN_HELP2MAN} $<TARGET_FILE:${target}> ${page} ${description}
    DEPENDS ${target} ${script}
    COMMENT "Generating man page ${target}.1 from ${target} --help"
    VERBATIM)
  add_custom_target(${target}_man ALL DEPENDS ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
endfunction()
if(LLMPLAN_HELP2MAN)
  set(LLMPLAN_MAN_DIR ${CMAKE_BINARY_DIR}/man)
  file(MAKE_DIRECTORY ${LLMPLAN_MAN_DIR})
  llmplan_man_page(llmplan llmplan
                   "plan LLM training runs: simulate, size with scaling laws, search plans")
  if(TARGET llmplan-profile)
    llmplan_man_page(llmplan-profile profiler
                     "measure GPU kernels and NCCL collectives into a profile for llmplan")
  endif()
else()
  message(STATUS "man pages: not built (help2man not found; Debian package help2man)")
endif()

# Debian packages (cpack -G DEB), one per component. dpkg-shlibdeps (Debian
# package dpkg-dev) computes the Depends of both from the binaries. The CUDA
# runtime, cuBLAS, CUPTI and NCCL that llmplan-profile needs are NVIDIA's
# installs, not Debian packages: dpkg-shlibdeps cannot name them, so the
# llmplan-profile package's description says what it needs instead.
set(LLMPLAN_PACKAGE_MAINTAINER "llmplan maintainers <llmplan@invalid>"
    CACHE STRING "Maintainer field of the Debian packages")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME llmplan)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${LLMPLAN_PACKAGE_MAINTAINER}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL llmplan)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Descriptions: the first line is the synopsis, then the long description.
set(CPACK_DEBIAN_LLMPLAN_PACKAGE_NAME llmplan)
set(CPACK_DEBIAN_LLMPLAN_DESCRIPTION "planner for large-language-model training runs
llmplan answers: with G GPUs and D days, what is the best model one can
train, and how should it be laid out? It simulates training iterations
(time, communication, memory, MFU), fits and applies scaling laws, searches
model shapes and parallel plans, checks its predictions against measured
runs, and simulates shared clusters running many jobs.")
if(TARGET llmplan-profile)
  string(REGEX MATCH "^[0-9]+" _llmplan_cuda_major "${LLMPLAN_PROFILER_CUDA_VERSION}")
  list(APPEND CPACK_COMPONENTS_ALL profiler)
  set(CPACK_DEBIAN_PROFILER_PACKAGE_NAME llmplan-profile)
  set(CPACK_DEBIAN_PROFILER_PACKAGE_RECOMMENDS llmplan)
  set(CPACK_DEBIAN_PROFILER_DESCRIPTION "GPU kernel and collective profiler for llmplan
llmplan-profile measures the kernels of transformer layers (cuBLAS GEMMs and
memory-bound kernels, timed with CUPTI) and NCCL collectives on this
machine's GPUs, and writes a profile that llmplan simulates with. It needs
NVIDIA's CUDA ${_llmplan_cuda_major} runtime, cuBLAS, CUPTI and NCCL, found in
${LLMPLAN_PROFILER_CUDA_LIBRARY_DIR} (the binary's RUNPATH) or the system library
path. They are not Debian packages, so Depends does not list them.")
endif()
include(CPack)

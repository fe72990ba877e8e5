# CTest wiring of the install and packaging tests (planner/cli/packaging/):
# --version of both executables, the build-time git commit, the bash
# completion, the generated man pages and `cmake --install`.
set(_pkg_tests ${CMAKE_CURRENT_SOURCE_DIR}/planner/packaging)
set(_pkg_sources ${CMAKE_SOURCE_DIR}/planner/cli/packaging)

set(_pkg_mpi OFF)
if(TARGET llmplan_mpi)
  set(_pkg_mpi ON)
endif()
add_test(NAME packaging.version_llmplan
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:llmplan> -DNAME=llmplan -DMPI=${_pkg_mpi}
          -DVERSION=${PROJECT_VERSION} -P ${_pkg_tests}/version_test.cmake)
if(TARGET llmplan-profile)
  add_test(NAME packaging.version_llmplan_profile
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:llmplan-profile> -DNAME=llmplan-profile
            -DVERSION=${PROJECT_VERSION} -P ${_pkg_tests}/version_test.cmake)
endif()
find_package(Git QUIET)
add_test(NAME packaging.git_commit
  COMMAND ${CMAKE_COMMAND} -DSCRIPT=${CMAKE_SOURCE_DIR}/base/git_commit.cmake
          -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DGIT_EXECUTABLE=${GIT_EXECUTABLE}
          -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/git_commit_test
          -P ${_pkg_tests}/git_commit_test.cmake)
set(_pkg_programs $<TARGET_FILE:llmplan>)
if(TARGET llmplan-profile)
  list(APPEND _pkg_programs $<TARGET_FILE:llmplan-profile>)
endif()
add_test(NAME packaging.bash_completion
  COMMAND bash ${_pkg_tests}/completion_test.sh ${_pkg_sources}/llmplan.bash ${_pkg_programs})

set(_pkg_with_man OFF)
set(_pkg_with_profiler OFF)
if(TARGET llmplan-profile)
  set(_pkg_with_profiler ON)
endif()
if(LLMPLAN_MAN_DIR)
  set(_pkg_with_man ON)
  set(_pkg_profile_man "")
  # A build of only the tests (and llmplan), as in CI's sanitizer step, makes
  # the pages too.
  cmake_language(DEFER CALL add_dependencies llmplan_tests llmplan_man)
  if(TARGET llmplan-profile)
    set(_pkg_profile_man ${LLMPLAN_MAN_DIR}/llmplan-profile.1)
    cmake_language(DEFER CALL add_dependencies llmplan_tests llmplan-profile_man)
  endif()
  add_test(NAME packaging.man_page
    COMMAND ${CMAKE_COMMAND} -DLLMPLAN=$<TARGET_FILE:llmplan> -DVERSION=${PROJECT_VERSION}
            -DMAN_PAGE=${LLMPLAN_MAN_DIR}/llmplan.1 -DPROFILE_MAN_PAGE=${_pkg_profile_man}
            -P ${_pkg_tests}/man_page_test.cmake)
endif()
set(_pkg_mpi_module "")
if(TARGET llmplan_mpi)
  include(GNUInstallDirs)
  set(_pkg_mpi_module ${CMAKE_INSTALL_LIBDIR}/llmplan/llmplan_mpi.so)
endif()
add_test(NAME packaging.install
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DMPI_MODULE=${_pkg_mpi_module}
          -DPREFIX=${CMAKE_CURRENT_BINARY_DIR}/install_test -DWITH_MAN=${_pkg_with_man}
          -DWITH_PROFILER=${_pkg_with_profiler} -P ${_pkg_tests}/install_test.cmake)

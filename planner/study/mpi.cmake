# MPI for `mpirun -n N llmplan frontier ...` (planner/study/distributed.h).
# LLMPLAN_MPI: AUTO builds it in when CMake finds an MPI library, ON requires
# one, OFF leaves it out. Built in, it is the module llmplan_mpi.so
# (distributed_mpi.cc, the only code linked to MPI), which llmplan loads with
# dlopen() only when an MPI launcher started it: no other run pays for
# loading MPI's libraries. Sets LLMPLAN_WITH_MPI (ON/OFF) for the caller.
set(LLMPLAN_WITH_MPI OFF)
set(_llmplan_mpi_mode "${LLMPLAN_MPI}")
string(TOUPPER "${_llmplan_mpi_mode}" _llmplan_mpi_mode)
if(NOT _llmplan_mpi_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "LLMPLAN_MPI must be AUTO, ON or OFF, not '${LLMPLAN_MPI}'")
endif()
if(_llmplan_mpi_mode STREQUAL "OFF")
  message(STATUS "llmplan MPI: not built in (LLMPLAN_MPI=OFF)")
  return()
endif()
set(MPI_CXX_SKIP_MPICXX ON)  # only MPI's C API is used, not the removed C++ bindings
set(MPI_DETERMINE_LIBRARY_VERSION ON)  # "Open MPI v4.1.4" for `llmplan --version`
find_package(MPI COMPONENTS CXX)
if(NOT MPI_CXX_FOUND)
  if(_llmplan_mpi_mode STREQUAL "ON")
    message(FATAL_ERROR "llmplan MPI: LLMPLAN_MPI=ON but no MPI library was found "
                        "(Debian: apt-get install libopenmpi-dev openmpi-bin)")
  endif()
  message(STATUS "llmplan MPI: not built in (no MPI library found; set LLMPLAN_MPI=ON to "
                 "require it)")
  return()
endif()
# "Open MPI v4.1.4, package: ..., ident: ..." -> "Open MPI v4.1.4".
string(REGEX REPLACE ",.*" "" _llmplan_mpi_version "${MPI_CXX_LIBRARY_VERSION_STRING}")
string(STRIP "${_llmplan_mpi_version}" _llmplan_mpi_version)
if(_llmplan_mpi_version STREQUAL "")
  set(_llmplan_mpi_version "MPI ${MPI_CXX_VERSION}")
endif()
message(STATUS "llmplan MPI: built in (${_llmplan_mpi_version}, module llmplan_mpi.so)")
set(LLMPLAN_WITH_MPI ON)
set(LLMPLAN_MPI_LIBRARY_VERSION "${_llmplan_mpi_version}")
set(LLMPLAN_MPIEXEC "${MPIEXEC_EXECUTABLE}")

# The module sits next to the executables in the build tree and in
# <libdir>/llmplan when installed; distributed.cc looks in both places,
# relative to the running executable.
include(GNUInstallDirs)
add_library(llmplan_mpi MODULE distributed_mpi.cc)
set_target_properties(llmplan_mpi PROPERTIES PREFIX "" CXX_VISIBILITY_PRESET hidden
                      LIBRARY_OUTPUT_DIRECTORY ${LLMPLAN_PLANNER_BINARY_DIR})
target_include_directories(llmplan_mpi PRIVATE ${LLMPLAN_INCLUDE_ROOT})
target_link_libraries(llmplan_mpi PRIVATE MPI::MPI_CXX)
# MPI::MPI_CXX lists Open MPI's C++ bindings library too; only libmpi is used.
target_link_options(llmplan_mpi PRIVATE LINKER:--as-needed)
file(RELATIVE_PATH LLMPLAN_MPI_MODULE_RELDIR /p/${CMAKE_INSTALL_BINDIR}
     /p/${CMAKE_INSTALL_LIBDIR}/llmplan)
set(LLMPLAN_MPI_MODULE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/llmplan)

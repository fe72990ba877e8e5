# Startup cost: llmplan links Ceres statically (Debian ships libceres.a), but
# Ceres' config links its dependencies as shared libraries: glog, gflags,
# SuiteSparse (CHOLMOD, SPQR, AMD, ...), CXSparse, LAPACK, BLAS and ATLAS,
# and through them gfortran and quadmath: 16 of the 28 libraries that every
# run of llmplan loaded (`ldd build/planner/llmplan`), even `--version`,
# about a quarter of its start-up time. llmplan's fits use Ceres' Eigen
# dense QR, so none of them runs; only the linker needs them.
#
# LLMPLAN_STATIC_SOLVER_DEPS (AUTO, the default: when every static archive
# is there and the compiler is GCC; ON requires that; OFF keeps the shared
# ones) links those archives into the executables instead, so that nothing
# is loaded for them. The code linked is the same, so results are too.
# Included by the top-level CMakeLists.txt right after find_package(Ceres).
set(LLMPLAN_STATIC_SOLVER_DEPS "AUTO" CACHE STRING
    "Link Ceres' dependencies (glog, SuiteSparse, LAPACK, ...) statically: AUTO, ON, OFF")
set(_solver_mode "${LLMPLAN_STATIC_SOLVER_DEPS}")
string(TOUPPER "${_solver_mode}" _solver_mode)
if(NOT _solver_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "LLMPLAN_STATIC_SOLVER_DEPS must be AUTO, ON or OFF, not "
                      "'${LLMPLAN_STATIC_SOLVER_DEPS}'")
endif()

macro(_llmplan_solver_shared why)
  if(_solver_mode STREQUAL "ON")
    message(FATAL_ERROR "Ceres' dependencies: LLMPLAN_STATIC_SOLVER_DEPS=ON but ${why}")
  endif()
  message(STATUS "Ceres' dependencies: shared (${why})")
  return()
endmacro()

if(_solver_mode STREQUAL "OFF")
  message(STATUS "Ceres' dependencies: shared (LLMPLAN_STATIC_SOLVER_DEPS=OFF)")
  return()
endif()
get_target_property(_ceres_location Ceres::ceres LOCATION)
if(NOT _ceres_location MATCHES "\\.a$")
  _llmplan_solver_shared("Ceres itself is a shared library")
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  _llmplan_solver_shared("the Fortran runtime of static LAPACK comes with GCC")
endif()

# Each archive, in link order (users before what they use). METIS has no
# archive in Debian and stays shared (one library).
set(_solver_static)
foreach(_lib glog gflags spqr cholmod amd camd ccolamd colamd suitesparseconfig cxsparse lapack
             blas f77blas atlas)
  find_library(LLMPLAN_STATIC_${_lib} NAMES lib${_lib}.a NO_CACHE)
  if(NOT LLMPLAN_STATIC_${_lib})
    _llmplan_solver_shared("lib${_lib}.a was not found")
  endif()
  list(APPEND _solver_static ${LLMPLAN_STATIC_${_lib}})
endforeach()
find_library(_solver_metis NAMES metis libmetis.so.5 NO_CACHE)  # no -dev symlink in Debian
find_library(_solver_unwind NAMES unwind NO_CACHE)  # glog's stack traces
if(NOT _solver_metis OR NOT _solver_unwind)
  _llmplan_solver_shared("libmetis or libunwind was not found")
endif()
foreach(_rt gfortran quadmath)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=lib${_rt}.a
                  OUTPUT_VARIABLE _solver_${_rt} OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${_solver_${_rt}}" OR NOT EXISTS "${_solver_${_rt}}")
    _llmplan_solver_shared("GCC has no lib${_rt}.a")
  endif()
endforeach()
list(INSERT _solver_static 9 ${_solver_metis})  # after cholmod's helpers, before cxsparse
set_target_properties(Ceres::ceres PROPERTIES INTERFACE_LINK_LIBRARIES
  "Threads::Threads;${_solver_static};${_solver_gfortran};${_solver_quadmath};${_solver_unwind};m;rt;Eigen3::Eigen")
message(STATUS "Ceres' dependencies: static (LLMPLAN_STATIC_SOLVER_DEPS=${LLMPLAN_STATIC_SOLVER_DEPS})")

# CTest (cmake -P): `cmake --install` into a scratch prefix puts the
# executables, the bash completions and the man pages where docs/install.md says,
# and the installed llmplan runs from outside the source and build trees.
# Variables: BUILD_DIR, PREFIX, WITH_PROFILER, WITH_MAN (booleans), MPI_MODULE
# (the MPI module's path under PREFIX when MPI is built in, else empty).
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install exited ${rc}:\n${out}${err}")
endif()
set(expected bin/llmplan share/bash-completion/completions/llmplan)
if(WITH_MAN)
  list(APPEND expected share/man/man1/llmplan.1)
endif()
if(MPI_MODULE)
  list(APPEND expected ${MPI_MODULE})
endif()
if(WITH_PROFILER)
  list(APPEND expected bin/llmplan-profile share/bash-completion/completions/llmplan-profile)
  if(WITH_MAN)
    list(APPEND expected share/man/man1/llmplan-profile.1)
  endif()
endif()
foreach(f IN LISTS expected)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()
# Nothing else: no other libraries, no headers or test binaries.
file(GLOB_RECURSE installed RELATIVE "${PREFIX}" "${PREFIX}/*")
list(SORT installed)
list(SORT expected)
if(NOT installed STREQUAL expected)
  message(FATAL_ERROR "installed '${installed}', expected '${expected}'")
endif()

file(MAKE_DIRECTORY "${PREFIX}/run")
set(programs llmplan)
if(WITH_PROFILER)
  list(APPEND programs llmplan-profile)
endif()
foreach(p IN LISTS programs)
  execute_process(COMMAND "${PREFIX}/bin/${p}" --version WORKING_DIRECTORY "${PREFIX}/run"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^${p} [0-9.]+ \\(git ")
    message(FATAL_ERROR "installed ${p} --version: exit ${rc}, '${out}${err}'")
  endif()
endforeach()
execute_process(COMMAND "${PREFIX}/bin/llmplan" simulate --model gpt3-175b --tp 8 --pp 16 --dp 8
                        --global-batch 1536 --recompute full
                WORKING_DIRECTORY "${PREFIX}/run"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "MFU")
  message(FATAL_ERROR "installed llmplan simulate: exit ${rc}\n${out}${err}")
endif()
message(STATUS "installed and ran: ${installed}")

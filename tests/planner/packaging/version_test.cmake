# CTest (cmake -P): `PROGRAM --version` exits 0 and prints exactly one line,
# "NAME VERSION (git COMMIT)", COMMIT being a short hash (with "-dirty" for a
# tree with changes) or "unknown" (llmplan adds "; mpi: LIBRARY VERSION" or
# "; no mpi" after COMMIT); nothing on stderr. Needs no GPU, also for
# llmplan-profile. Variables: PROGRAM, NAME, VERSION, MPI (llmplan: ON when
# built with MPI).
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND "${PROGRAM}" --version
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME} --version exited ${rc}: ${err}")
endif()
if(NOT err STREQUAL "")
  message(FATAL_ERROR "${NAME} --version wrote to stderr: ${err}")
endif()
string(REPLACE "." "\\." version_re "${VERSION}")
set(note_re "")
if(NAME STREQUAL "llmplan" AND MPI)
  set(note_re "; mpi: [^)\n]+")
elseif(NAME STREQUAL "llmplan")
  set(note_re "; no mpi")
endif()
if(NOT out MATCHES "^${NAME} ${version_re} \\(git ([0-9a-f]+(-dirty)?|unknown)${note_re}\\)\n$")
  message(FATAL_ERROR "${NAME} --version printed '${out}', expected "
                      "'${NAME} ${VERSION} (git <commit>)'")
endif()
message(STATUS "${out}")

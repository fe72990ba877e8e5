# CTest (cmake -P): `PROGRAM --version` exits 0 and prints exactly one line,
# "NAME VERSION (git COMMIT)", COMMIT being a short hash (with "-dirty" for a
# tree with changes) or "unknown"; nothing on stderr. Needs no GPU, also for
# llmplan-profile. Variables: PROGRAM, NAME, VERSION.
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
if(NOT out MATCHES "^${NAME} ${version_re} \\(git ([0-9a-f]+(-dirty)?|unknown)\\)\n$")
  message(FATAL_ERROR "${NAME} --version printed '${out}', expected "
                      "'${NAME} ${VERSION} (git <commit>)'")
endif()
message(STATUS "${out}")

# CTest (cmake -P) of base/git_commit.cmake, the build step that
# writes the commit header. Variables: SCRIPT, SOURCE_DIR (the checkout),
# GIT_EXECUTABLE (may be empty), WORK_DIR (scratch).
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/not-a-checkout")
set(header "${WORK_DIR}/llmplan_git_commit.h")

# Runs the script on `source` with `git` and stores the commit it wrote in
# ${out_var}.
function(commit_for source git out_var)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DSOURCE_DIR=${source} -DOUTPUT=${header}
                          -DGIT_EXECUTABLE=${git} -P "${SCRIPT}"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git_commit.cmake failed: ${err}")
  endif()
  file(READ "${header}" text)
  if(NOT text MATCHES "#define LLMPLAN_GIT_COMMIT \"([^\"]*)\"")
    message(FATAL_ERROR "no LLMPLAN_GIT_COMMIT in:\n${text}")
  endif()
  set(${out_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

# A folder that is not the top of a checkout (here: inside the build tree,
# itself perhaps inside one) says "unknown", as does a missing git.
commit_for("${WORK_DIR}/not-a-checkout" "${GIT_EXECUTABLE}" c)
if(NOT c STREQUAL "unknown")
  message(FATAL_ERROR "outside a checkout: got '${c}', expected 'unknown'")
endif()
commit_for("${SOURCE_DIR}" "" c)
if(NOT c STREQUAL "unknown")
  message(FATAL_ERROR "without git: got '${c}', expected 'unknown'")
endif()

# The source tree: its HEAD, when it is a checkout.
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --short=7 HEAD
                  RESULT_VARIABLE rc OUTPUT_VARIABLE head ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  commit_for("${SOURCE_DIR}" "${GIT_EXECUTABLE}" c)
  if(rc EQUAL 0 AND NOT c MATCHES "^${head}(-dirty)?$")
    message(FATAL_ERROR "in the checkout: got '${c}', expected '${head}' or '${head}-dirty'")
  endif()
  message(STATUS "source tree: ${c}")
endif()

# An unchanged commit leaves the header untouched (so nothing recompiles);
# a changed one rewrites it.
commit_for("${SOURCE_DIR}" "" c)
execute_process(COMMAND touch -d "2001-01-01 00:00:00" "${header}")
commit_for("${SOURCE_DIR}" "" c)
file(TIMESTAMP "${header}" year "%Y")
if(NOT year STREQUAL "2001")
  message(FATAL_ERROR "the header was rewritten although its content did not change")
endif()
file(WRITE "${header}" "#define LLMPLAN_GIT_COMMIT \"stale\"\n")
commit_for("${SOURCE_DIR}" "" c)
if(NOT c STREQUAL "unknown")
  message(FATAL_ERROR "a stale header was not rewritten: '${c}'")
endif()

# Process-level regression cases: run_cases.sh runs the built `llmplan` once
# per line of every tests/cli/*.cases file and checks its exit status, stderr
# and (optionally) that stdout is valid JSON (format: top of run_cases.sh).
add_executable(llmplan_json_check cli/json_check.cc)
target_link_libraries(llmplan_json_check PRIVATE Boost::json)

if(LLMPLAN_SANITIZE)
  set(LLMPLAN_CLI_CASE_TIMEOUT 300)  # seconds per case; ASan+UBSan runs ~5-20x slower
else()
  set(LLMPLAN_CLI_CASE_TIMEOUT 60)
endif()
add_test(NAME cli.cases
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cases.sh
          $<TARGET_FILE:llmplan> $<TARGET_FILE:llmplan_json_check> ${CMAKE_CURRENT_SOURCE_DIR}/cli)
set_tests_properties(cli.cases PROPERTIES
  TIMEOUT 3000
  ENVIRONMENT "LLMPLAN_CASE_TIMEOUT=${LLMPLAN_CLI_CASE_TIMEOUT};LLMPLAN_SOURCE_DIR=${CMAKE_SOURCE_DIR}")

# A closed pipe or a full disk under the commands that print help or stream
# (issue 31, item 6): exit 1 and one line, never SIGPIPE's 141 or a silent 0;
# control bytes of paths escaped in errors (item 7).
add_test(NAME cli.process
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/process_test.py $<TARGET_FILE:llmplan>)
set_tests_properties(cli.process PROPERTIES TIMEOUT 300)

# Test sources of tests/planner/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).
list(APPEND LLMPLAN_TEST_SOURCES planner/validate_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES planner/scaling_cli_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES planner/search_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES planner/plan_cli_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES planner/schedule_jobs_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES planner/schedule_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES planner/hostile_inputs_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES planner/fuzz_regressions_test.cc)

# Test sources of tests/scaling/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).
list(APPEND LLMPLAN_TEST_SOURCES scaling/fit_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES scaling/flops_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES scaling/law_json_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES scaling/loss_csv_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES scaling/optimal_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES scaling/moe_law_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES scaling/objectives_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES scaling/joint_moe_test.cc)

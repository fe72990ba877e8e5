# Test sources of tests/reports/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).
list(APPEND LLMPLAN_TEST_SOURCES reports/scaling_report_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES reports/svg_plot_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES reports/frontier_report_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES reports/failures_report_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES reports/plan_report_test.cc)

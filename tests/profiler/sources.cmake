# Test sources of tests/profiler/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).
list(APPEND LLMPLAN_TEST_SOURCES profiler/kernel_plan_test.cc profiler/moe_plan_test.cc
     profiler/options_test.cc)

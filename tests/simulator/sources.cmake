# Test sources of tests/simulator/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).
list(APPEND LLMPLAN_TEST_SOURCES simulator/model_test.cc)

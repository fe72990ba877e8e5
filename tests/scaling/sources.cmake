# Test sources of tests/scaling/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).

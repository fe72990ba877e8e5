# Test sources of tests/reports/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).

# Test sources of tests/profiler/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).

# Test sources of tests/planner/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).

# Test sources of tests/presets/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).

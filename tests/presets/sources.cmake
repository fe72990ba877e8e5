# Test sources of tests/presets/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).
list(APPEND LLMPLAN_TEST_SOURCES
  presets/builtin_presets_test.cc
  presets/catalog_test.cc
  presets/presets_command_test.cc
  presets/preset_files_json_test.cc
  presets/sim_config_test.cc
  presets/vtrain_config_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES presets/moe_presets_test.cc)

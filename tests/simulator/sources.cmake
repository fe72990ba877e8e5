# Test sources of tests/simulator/ (append with list(APPEND LLMPLAN_TEST_SOURCES ...)).
list(APPEND LLMPLAN_TEST_SOURCES simulator/model_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES
  simulator/collectives_test.cc
  simulator/memory_test.cc
  simulator/schedule_test.cc
  simulator/simulate_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/cluster_json_test.cc simulator/model_json_test.cc simulator/plan_json_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/collective_curve_test.cc simulator/profile_table_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/vtrain_case_study_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/csv_test.cc simulator/input_file_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/limits_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/plausibility_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/sharding_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/fp8_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/nvfp4_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/context_parallel_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/zero_bubble_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/moe_memory_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/moe_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/simulate_fast_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/strict_json_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/error_band_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/nvlink_domain_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/pipeline_split_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/moe_cost_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/chunked_attention_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/mla_test.cc)
list(APPEND LLMPLAN_TEST_SOURCES simulator/mamba_test.cc)

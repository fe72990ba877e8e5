# Build and CTest wiring of the profiler tests (included by tests/CMakeLists.txt
# before llmplan_tests exists, hence the deferred link).
cmake_language(DEFER CALL target_link_libraries llmplan_tests PRIVATE llmplan_profiler_core)

# The executable's own behaviour, where it is built (CUDA toolkit found).
if(TARGET llmplan-profile)
  # --list needs no GPU and must always work.
  add_test(NAME profiler.list_without_gpu
    COMMAND ${CMAKE_COMMAND} -DPROFILER=$<TARGET_FILE:llmplan-profile>
            -DMODE=list -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/profiler_run
            -P ${CMAKE_CURRENT_SOURCE_DIR}/profiler/run_profiler_test.cmake)
  # A real run: on a machine without a GPU it must fail with one line saying
  # so; on a machine with one it must succeed and write a readable profile.
  add_test(NAME profiler.run_or_report_no_gpu
    COMMAND ${CMAKE_COMMAND} -DPROFILER=$<TARGET_FILE:llmplan-profile>
            -DMODE=run -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/profiler_run
            -P ${CMAKE_CURRENT_SOURCE_DIR}/profiler/run_profiler_test.cmake)
  set_tests_properties(profiler.list_without_gpu profiler.run_or_report_no_gpu
                       PROPERTIES TIMEOUT 600)
endif()

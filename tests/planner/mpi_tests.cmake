# The process group under a real MPI launcher (planner/study/distributed.h),
# registered only when MPI is built in (target llmplan_mpi, planner/study/mpi.cmake).
#
# The test program sits next to llmplan, where llmplan_mpi.so is, because
# that is where a program looks for the module. Open MPI (Debian's 4.1)
# settings, each set per test, never globally:
# - OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1: CI runs as root, which mpirun
#   refuses otherwise (needed on the CI machine);
# - --oversubscribe: more ranks than the machine's 2 cores (needed);
# - OMPI_MCA_btl_vader_single_copy_mechanism=none: containers without
#   ptrace rights refuse the cross-memory attach that the shared-memory
#   transport uses for large messages ("Read -1, expected ..., errno = 1");
# - OMPI_MCA_btl=self,vader: shared memory only, no probing of network
#   interfaces for the TCP/openib transports.
# The btl settings are not needed on the CI machine as it is now (the tests
# pass without them) but keep the tests working in stricter containers. The
# MPI tests run one at a time (RUN_SERIAL), and every run has a TIMEOUT, so a
# hang fails instead of waiting. Under the sanitizers the three-rank test
# with every call split is left out: three oversubscribed ranks with full
# leak-check stacks starved one rank past its timeout on 2 cores (it passes
# in the release suite; the two-rank test and the frontier test still run).
if(NOT TARGET llmplan_mpi)
  return()
endif()
add_executable(llmplan_distributed_mpi_test planner/distributed_mpi_test.cc)
target_link_libraries(llmplan_distributed_mpi_test PRIVATE llmplan_cli)
set_target_properties(llmplan_distributed_mpi_test PROPERTIES
                      RUNTIME_OUTPUT_DIRECTORY $<TARGET_FILE_DIR:llmplan>)
add_dependencies(llmplan_tests llmplan_distributed_mpi_test)

set(LLMPLAN_MPI_TEST_ENV
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader)
# Under -DLLMPLAN_SANITIZE=ON, Open MPI's allocations that outlive
# MPI_Finalize are not ours: LeakSanitizer skips them (mpi_lsan.supp) when it
# can tell which library made them, which needs Open MPI to keep its plugins
# loaded (disable_dlclose; otherwise their frames are "<unknown module>") and
# full stacks (fast_unwind_on_malloc=0; frames of libc's asprintf hide the
# caller otherwise). Leaks of llmplan's own code still fail.
set(LLMPLAN_MPI_LEAK_ENV
    OMPI_MCA_mca_base_component_disable_dlclose=1
    ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0
    LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/planner/mpi_lsan.supp)
find_program(LLMPLAN_MPIRUN NAMES mpirun mpiexec)
add_test(NAME mpi.distributed_no_launcher
  COMMAND llmplan_distributed_mpi_test 1)
add_test(NAME mpi.distributed_2_ranks
  COMMAND ${LLMPLAN_MPIRUN} -n 2 --oversubscribe $<TARGET_FILE:llmplan_distributed_mpi_test> 2)
# Three ranks (more than the cores), and every blob split over several
# MPI calls, as a blob over 2 GiB would be.
set(LLMPLAN_MPI_BASIC_TESTS mpi.distributed_no_launcher mpi.distributed_2_ranks)
if(NOT LLMPLAN_SANITIZE)
  add_test(NAME mpi.distributed_3_ranks_split
    COMMAND ${LLMPLAN_MPIRUN} -n 3 --oversubscribe $<TARGET_FILE:llmplan_distributed_mpi_test> 3)
  list(APPEND LLMPLAN_MPI_BASIC_TESTS mpi.distributed_3_ranks_split)
endif()
set_tests_properties(${LLMPLAN_MPI_BASIC_TESTS} PROPERTIES
                     ENVIRONMENT "${LLMPLAN_MPI_TEST_ENV};${LLMPLAN_MPI_LEAK_ENV}" TIMEOUT 300
                     RUN_SERIAL TRUE LABELS mpi)
# Under mpirun, LeakSanitizer's exit-time scan deadlocks now and then beside
# Open MPI's progress threads: on the ASan build, `mpirun -n 2
# llmplan_distributed_mpi_test 2` hung after rank 1's "ok" in 2 of 8 runs
# (self,vader) and 4 of 14 (self,tcp), and never in 14 runs with
# detect_leaks=0 (2026-11-26; one CI run timed out at 300 s on it). So the
# launched test checks the collectives under ASan without the leak scan;
# distributed.cc's leaks are still checked by mpi.distributed_no_launcher
# (same code, one process, no launcher) with the suppressions above.
if(LLMPLAN_SANITIZE)
  set_tests_properties(mpi.distributed_2_ranks PROPERTIES
                       ENVIRONMENT "${LLMPLAN_MPI_TEST_ENV};ASAN_OPTIONS=detect_leaks=0")
endif()
if(NOT LLMPLAN_SANITIZE)
  set_property(TEST mpi.distributed_3_ranks_split APPEND PROPERTY ENVIRONMENT
               LLMPLAN_TEST_MPI_MAX_BYTES_PER_CALL=1000)
endif()

# `mpirun -n 2|3 llmplan frontier ...` writes the single-process run's files,
# byte for byte, whatever the thread count (the issue's acceptance test).
add_test(NAME mpi.frontier_byte_identical
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/planner/mpi_frontier_test.sh $<TARGET_FILE:llmplan>
          ${LLMPLAN_MPIRUN})
# Full stacks on every allocation would make a whole study under ASan far
# slower, so this test does not look for leaks: the frontier's code is
# leak-checked in-process by llmplan_tests (tests/planner/frontier_test.cc).
set_tests_properties(mpi.frontier_byte_identical PROPERTIES
                     ENVIRONMENT "${LLMPLAN_MPI_TEST_ENV};ASAN_OPTIONS=detect_leaks=0" TIMEOUT 300
                     RUN_SERIAL TRUE LABELS mpi)

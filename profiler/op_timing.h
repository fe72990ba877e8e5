// The timing of one measured op, as llmplan-profile takes it (kernel_bench.h):
// plain C++ so that the host-side writers and their tests use it too.
#ifndef LLMPLAN_PROFILER_OP_TIMING_H_
#define LLMPLAN_PROFILER_OP_TIMING_H_

#include <string>
#include <vector>

namespace llmplan::profiler {

// time_s is the median over repetitions of the summed GPU durations of the
// op's kernels (CUPTI), min/max beside it; event_time_s the median of
// cudaEvent pairs around each repetition (launch gaps included).
struct OpTiming {
  double time_s = 0;
  double min_time_s = 0;
  double max_time_s = 0;
  double event_time_s = 0;
  int repeats = 0;
  std::vector<std::string> kernel_names;  // of the first repetition, in order met
};

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_OP_TIMING_H_

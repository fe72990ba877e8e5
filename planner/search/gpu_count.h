// The one check of a GPU count (the planner's --gpus, a frontier's --gpus
// list, a schedule's cluster): which rule a count breaks, if any. The
// commands word their messages themselves (each names its own flag and
// context), so this says what is wrong, not how to say it.
#ifndef LLMPLAN_PLANNER_SEARCH_GPU_COUNT_H_
#define LLMPLAN_PLANNER_SEARCH_GPU_COUNT_H_

namespace llmplan::planner {

// The first rule a GPU count breaks, in the order they are checked.
enum class GpuCountError {
  kNone,
  kNotPositive,    // gpus < 1
  kAboveMax,       // gpus > simulator::Plan::kMaxGpus
  kBelowOneNode,   // gpus < node_gpus
  kNotWholeNodes,  // whole_nodes and gpus % node_gpus != 0
  kAboveCluster,   // max_gpus > 0 and gpus > max_gpus
};

// What the count is checked against beyond 1 <= gpus <= Plan::kMaxGpus.
struct GpuCountLimits {
  int node_gpus = 0;         // GPUs of one node; <= 0: no node rule
  bool whole_nodes = false;  // the count must be a multiple of node_gpus
  long max_gpus = 0;         // the cluster's GPUs; 0: no limit
};

// The first rule `gpus` breaks under `limits` (kNone: none). Pure.
GpuCountError check_gpu_count(long gpus, const GpuCountLimits& limits);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_GPU_COUNT_H_

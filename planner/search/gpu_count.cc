#include "planner/search/gpu_count.h"

#include "simulator/plan.h"

namespace llmplan::planner {

GpuCountError check_gpu_count(long gpus, const GpuCountLimits& limits) {
  if (gpus <= 0) return GpuCountError::kNotPositive;
  if (gpus > simulator::Plan::kMaxGpus) return GpuCountError::kAboveMax;
  if (limits.node_gpus > 0) {
    if (gpus < limits.node_gpus) return GpuCountError::kBelowOneNode;
    if (limits.whole_nodes && gpus % limits.node_gpus != 0) return GpuCountError::kNotWholeNodes;
  }
  if (limits.max_gpus > 0 && gpus > limits.max_gpus) return GpuCountError::kAboveCluster;
  return GpuCountError::kNone;
}

}  // namespace llmplan::planner

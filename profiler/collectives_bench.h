// NCCL collective curves on the GPUs of this machine.
//
// One process drives all GPUs (ncclCommInitAll, group calls from one
// thread), as nccl-tests does with -g. For each group size (the first g
// GPUs; sizes from collective_group_sizes) all_reduce, all_gather and
// reduce_scatter are timed over the buffer sizes (bytes in nccl-tests'
// sense: CollectiveDesc::bytes), float32 elements; send_recv is GPU 0 ->
// GPU 1 (group size 2). Each point: warm-up, then three trials of a loop of
// back-to-back operations timed on the host between device-wide
// synchronisations; the point is the median trial's time per operation.
#ifndef LLMPLAN_PROFILER_COLLECTIVES_BENCH_H_
#define LLMPLAN_PROFILER_COLLECTIVES_BENCH_H_

#include <vector>

#include "simulator/profile_table.h"
#include "base/status.h"

namespace llmplan::profiler {

// Curves for `gpus` visible GPUs (REQUIRES: gpus >= 2) at the given sizes
// (increasing). Internal for CUDA/NCCL errors; a size that rounds to zero
// elements for a group is left out of that curve.
Result<std::vector<simulator::ProfileCollective>> measure_collectives(
    int gpus, const std::vector<double>& sizes_bytes);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_COLLECTIVES_BENCH_H_

// What llmplan-profile records about the machine: the GPUs, the software
// stack, the host and the date.
#ifndef LLMPLAN_PROFILER_GPU_INFO_H_
#define LLMPLAN_PROFILER_GPU_INFO_H_

#include <string>

#include "simulator/profile_table.h"
#include "base/status.h"

namespace llmplan::profiler {

// The number of CUDA GPUs this process can use. FailedPrecondition with the
// one-line message "no CUDA GPU is visible (...)" when cudaGetDeviceCount
// fails (no driver, no device) or reports none. Touches nothing else.
Result<int> visible_gpu_count();

// Name, SM count, memory and peak clocks of `device`, with `count` visible
// GPUs. Internal on CUDA errors.
Result<simulator::ProfileGpu> describe_gpu(int device, int count);

// Driver, CUDA runtime, cuBLAS, NCCL and CUPTI versions ("" where a query
// fails).
simulator::ProfileSoftware software_versions();

// This machine's host name, and the current UTC time as ISO 8601.
std::string host_name();
std::string utc_now_iso8601();

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_GPU_INFO_H_

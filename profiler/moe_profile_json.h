// The MoE profile file that `llmplan-profile --moe` writes: its own JSON
// document (kind "llmplan-moe-profile", format_version 1), separate from the
// profile the simulator reads, whose strict reader knows no MoE keys.
//
// Layout: kind, format_version, llmplan_version, date, host, command_line,
// gpu and software (as in the simulator's profile), timing, the grid
// (models, local_experts, m_sweep, tokens, max_rows), kernels (one object
// per measured job: op, pass, precision, the op's geometry, flops and
// tflops or bytes and gbps, time_s, min_time_s, max_time_s, event_time_s,
// repeats, kernels) and notes. profiler/README.md describes the fields.
#ifndef LLMPLAN_PROFILER_MOE_PROFILE_JSON_H_
#define LLMPLAN_PROFILER_MOE_PROFILE_JSON_H_

#include <string>
#include <vector>

#include "profiler/moe_plan.h"
#include "profiler/op_timing.h"
#include "simulator/profile_table.h"
#include "base/status.h"

namespace llmplan::profiler {

inline constexpr const char* kMoeProfileKind = "llmplan-moe-profile";

struct MoeProfileEntry {
  MoeJob job;
  OpTiming timing;
};

struct MoeProfile {
  // llmplan_version, date, host, gpu, software and timing as in the
  // simulator's profile; its shapes, kernels and collectives are not used.
  simulator::Profile header;
  std::string command_line;
  MoeSettings settings;
  std::vector<MoeProfileEntry> entries;
  std::vector<std::string> notes;
};

// The document as indented JSON. InvalidArgument if a number is not finite
// (e.g. a zero time).
Result<std::string> moe_profile_to_json(const MoeProfile& profile);

}  // namespace llmplan::profiler

#endif  // LLMPLAN_PROFILER_MOE_PROFILE_JSON_H_

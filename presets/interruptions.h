// presets/interruptions.json and --interruptions files: the causes of
// training interruptions with their rates per GPU, node or switch, and the
// storage and restart figures (issue 28), with the reader of that form.
// Plain values; the failure model that turns them into wall time is
// planner/search/reliability.h's.
#ifndef LLMPLAN_PRESETS_INTERRUPTIONS_H_
#define LLMPLAN_PRESETS_INTERRUPTIONS_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace llmplan::presets {

enum class CauseScope { kGpu, kNode, kSwitch };

// One cause of interruptions: its rate per unit (GPU, node or switch) per
// day, and whether the fault takes hardware out (the restart then waits
// for a replacement node: a hot spare or rescheduling).
struct InterruptionCause {
  std::string name;
  CauseScope scope = CauseScope::kGpu;
  double per_unit_day = 0;
  bool hardware = false;
  std::string source;
};

// The storage and restart figures (presets/interruptions.json's storage
// and restart sections; flags override some).
struct CheckpointSettings {
  double write_bytes_per_s = 0;      // aggregate storage write bandwidth
  double read_bytes_per_s = 0;       // aggregate storage read bandwidth
  double node_bytes_per_s = 0;       // one node's storage traffic at most
  double host_copy_bytes_per_s = 0;  // per GPU, device to host (async checkpoint)
  double bytes_per_param = 14;       // checkpointed state per parameter
  bool async = false;                // only the copy to host is exposed
  double detection_s = 0, reschedule_s = 0, spare_swap_s = 0, node_repair_s = 0;
  double init_base_s = 0, init_per_gpu_s = 0, warmup_s = 0;
  int spare_nodes = 0;               // hot spare nodes (charged, not trained on)
};

// Everything the planner needs to turn compute time into wall time.
// enabled == false: wall time is compute time (--no-interruptions).
struct Reliability {
  bool enabled = false;
  std::vector<InterruptionCause> causes;
  int gpus_per_switch = 32;
  CheckpointSettings checkpoint;
  // The GPU kind's rates are the H100 figures carried over (no source for it).
  bool carried_over = false;
  std::string source;  // where the causes come from (preset or file)
};

// Parses an interruptions file (presets/interruptions.json's form; a user
// file may give only "causes", each with "per_day" instead of "count").
// `base` holds the defaults a file leaves out. InvalidArgument names the
// file and the JSON path; unknown keys are errors.
Result<Reliability> parse_interruptions(std::string_view text, const std::string& source_name,
                                        const Reliability* base);

// The built-in presets/interruptions.json for `gpu_name` (carried_over when
// the GPU has no measured figures).
Result<Reliability> builtin_reliability(const std::string& gpu_name);

// The job's total rate per GPU-day for a job of `gpus_per_node`-GPU nodes
// (per-node rates / gpus_per_node, per-switch / gpus_per_switch).
double rate_per_gpu_day(const Reliability& rel, int gpus_per_node);

}  // namespace llmplan::presets

#endif  // LLMPLAN_PRESETS_INTERRUPTIONS_H_

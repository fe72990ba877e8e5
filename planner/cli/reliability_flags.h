// The failure and checkpoint flags (issue 28) of the planner and frontier:
// --no-interruptions, --interruptions FILE, --interruptions-per-gpu-day,
// --checkpoint-write-gbps, --checkpoint-async and --spare-nodes.
#ifndef LLMPLAN_PLANNER_CLI_RELIABILITY_FLAGS_H_
#define LLMPLAN_PLANNER_CLI_RELIABILITY_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "planner/search/reliability.h"
#include "simulator/cluster.h"
#include "base/status.h"

namespace llmplan::planner {

struct ReliabilityFlags {
  bool no_interruptions = false;
  std::string file;                // --interruptions
  double per_gpu_day = -1;         // < 0: not given
  double checkpoint_write_gbps = 0;  // 0: the preset's
  bool checkpoint_async = false;
  int spare_nodes = 0;
};

// Registers the flags on `app`; `what` prefixes the help texts.
void add_reliability_flags(CLI::App* app, ReliabilityFlags* flags, const std::string& what);

// The failure model for `cluster`'s GPU: the built-in presets/interruptions.json
// (or --interruptions FILE over it), scaled to --interruptions-per-gpu-day,
// with the storage and spare flags; disabled with --no-interruptions.
// Errors name the flag or the file's JSON path (one line).
Result<Reliability> resolve_reliability(const ReliabilityFlags& flags,
                                        const simulator::Cluster& cluster);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_RELIABILITY_FLAGS_H_

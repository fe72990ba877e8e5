#include "planner/cli/reliability_flags.h"

#include <cmath>

#include "planner/cli/command.h"
#include "base/input_file.h"

namespace llmplan::planner {

void add_reliability_flags(CLI::App* app, ReliabilityFlags* o, const std::string& what) {
  const std::string p = what + ": ";
  CLI::Option* off = app->add_flag(
      "--no-interruptions", o->no_interruptions,
      p + "ignore failures: the deadline counts compute days only (the answer without issue 28's "
          "failure model)");
  app->add_option("--interruptions", o->file,
                  p + "JSON file of interruption causes (presets/interruptions.json's form; "
                      "\"per_day\" per GPU, node or switch) replacing the built-in Llama 3 figures")
      ->check(CLI::ExistingFile)
      ->excludes(off);
  app->add_option("--interruptions-per-gpu-day", o->per_gpu_day,
                  p + "job interruptions per GPU per day (scales every cause; default 466 / "
                      "(16,384 x 54) from the Llama 3 paper)")
      ->check(finite_in(0, 1e3))
      ->excludes(off);
  app->add_option("--checkpoint-write-gbps", o->checkpoint_write_gbps,
                  p + "aggregate checkpoint storage write (and read) bandwidth, GB/s (10^9 bytes/s; "
                      "default 2000: Llama 3's Tectonic; 0.001 to 1e7)")
      ->check(finite_in(0.001, 1e7))
      ->excludes(off);
  app->add_flag("--checkpoint-async", o->checkpoint_async,
                p + "asynchronous checkpoints: only the copy to host memory stops training")
      ->excludes(off);
  app->add_option("--spare-nodes", o->spare_nodes,
                  p + "hot spare nodes (paid for, not trained on): a faulty node is swapped "
                      "instead of rescheduled")
      ->check(int_in(0, 100000))
      ->excludes(off);
}

Result<Reliability> resolve_reliability(const ReliabilityFlags& flags,
                                        const simulator::Cluster& cluster) {
  Reliability rel;
  if (flags.no_interruptions) return rel;
  LLMPLAN_ASSIGN_OR_RETURN(rel, builtin_reliability(cluster.gpu.name));
  if (!flags.file.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(const std::string text, read_input_file(flags.file));
    Result<Reliability> user = parse_interruptions(text, flags.file, &rel);
    // The file's content is at fault, not the flag: exit 1, as for every file.
    if (!user.ok()) return Status::invalid_argument("--interruptions: " + user.status().message());
    rel = std::move(user.value());
  }
  if (flags.per_gpu_day >= 0) {
    if (!std::isfinite(flags.per_gpu_day)) {
      return Status::usage("--interruptions-per-gpu-day: must be a finite rate >= 0");
    }
    const double now = rate_per_gpu_day(rel, cluster.gpus_per_node);
    if (now > 0) {
      for (InterruptionCause& c : rel.causes) c.per_unit_day *= flags.per_gpu_day / now;
    } else if (flags.per_gpu_day > 0) {
      return Status::usage("--interruptions-per-gpu-day: the causes have no rate to scale");
    }
    rel.source += " scaled to " + std::to_string(flags.per_gpu_day) + " per GPU-day";
  }
  if (flags.checkpoint_write_gbps > 0) {
    rel.checkpoint.write_bytes_per_s = flags.checkpoint_write_gbps * 1e9;
    rel.checkpoint.read_bytes_per_s = flags.checkpoint_write_gbps * 1e9;
  }
  rel.checkpoint.async = flags.checkpoint_async;
  rel.checkpoint.spare_nodes = flags.spare_nodes;
  return rel;
}

}  // namespace llmplan::planner

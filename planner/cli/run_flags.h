// One run's model, plan and cluster as the commands that set them up read
// them: `simulate` (a model and plan from flags over --config or
// --vtrain-config), `sweep` (a config's model and plan, the grid from
// plan_space_flags.h) and the planner (a cluster from --gpu/--cluster).
// The flag structs hold what was given; the apply functions put it over what
// a config (or nothing) set, so every command resolves a run the same way.
#ifndef LLMPLAN_PLANNER_CLI_RUN_FLAGS_H_
#define LLMPLAN_PLANNER_CLI_RUN_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "presets/catalog.h"
#include "presets/sim_config.h"
#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "base/status.h"

namespace llmplan::planner {

// --model NAME|FILE and the shape flags (--layers, --hidden, ... ) of simulate.
struct ModelFlags {
  std::string model_name;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn_hidden = 0, seq = 0, vocab = 0;
  int head_dim = 0, experts = 0, top_k = 0, expert_ffn_hidden = 0, shared_experts = 0;
  const CLI::App* cmd = nullptr;  // where they were registered: which were given
  bool given(const char* flag) const { return cmd->count(flag) > 0; }
};

// One plan's flags (--tp, --pp, --dp, --gpus, ..., --precision) of simulate.
struct PlanFlags {
  int ep = 0, etp = 0;
  bool moe_a2a_overlap = false;
  bool moe_flex_dispatcher = false;
  double moe_imbalance = 1.0;
  int tp = 0, pp = 0, dp = 0, cp = 0, micro_batch = 0, global_batch = 0, virtual_stages = 0;
  int gpus = 0;
  std::string schedule, recompute, precision, fp8_recipe, cp_comm;
  std::string recompute_modules;
  int cpu_offload_layers = 0;
  bool sequence_parallel = false, distributed_optimizer = false, no_flash_attention = false;
  int zero = 0, fsdp_group = 0;
  int bf16_layers_at_start = 0, bf16_layers_at_end = 0;
  bool tp_comm_overlap = false, overlap_grad_reduce = true, overlap_param_gather = false;
  bool no_dropout = false, fused_cross_entropy = false, grad_reduce_in_bf16 = false;
  bool cpu_offload_v2 = false;
  bool no_rope_fusion = false;
  bool no_fp8_param_gather = false;
  bool account_for_embedding = false, account_for_loss = false;
  int pipeline_first_chunk_layers = -1, pipeline_last_chunk_layers = -1;
  const CLI::App* cmd = nullptr;  // where they were registered: which were given
  bool given(const char* flag) const { return cmd->count(flag) > 0; }
};

// --gpu, --cluster and --gpus-per-node (0: not given).
struct ClusterFlags {
  std::string gpu, cluster;
  int gpus_per_node = 0;
};

// Registers --model and the shape flags on `cmd` (in simulate's help order).
void add_model_flags(CLI::App* cmd, ModelFlags* flags);
// Registers the plan flags on `cmd`: the layout (--tp .. --virtual-stages),
// then recompute, memory savers, overlaps and precision.
void add_plan_flags(CLI::App* cmd, PlanFlags* flags);

// Puts the given model flags over *model: --model (a preset, else a model
// file) replaces it; the shape flags set their fields. Without a model from a
// config (`have_model` false) or --model, --layers/--hidden/--heads build a
// custom one (seq 2048, vocab 50257 unless given). Errors name the flag
// ("simulate: ...").
Status apply_model_flags(const ModelFlags& flags, const presets::Catalog& catalog,
                         bool have_model, simulator::Model* model);
// Puts the given plan flags over *plan (--gpus sets the data-parallel
// degree). Errors (usage or InvalidArgument, "simulate: ...") for flags that
// contradict each other or the plan.
Status apply_plan_flags(const PlanFlags& flags, simulator::Plan* plan);

// The run's cluster into *cluster: without a config's cluster (`from_config`
// false), or when --gpu or --cluster is given, resolve_cluster(...) with
// dgx-a100-80gb as the default; with only --gpus-per-node, the config's
// cluster with that node size; otherwise unchanged.
Status apply_cluster_flags(const ClusterFlags& flags, const presets::Catalog& catalog,
                           bool from_config, simulator::Cluster* cluster);

// The model, plan and cluster of --config FILE (SimConfig JSON) or, when it
// is empty, --vtrain-config FILE. REQUIRES: exactly one is not empty.
Result<presets::SimConfig> load_run_config(const std::string& config,
                                           const std::string& vtrain_config,
                                           const presets::VtrainLoadOptions& vtrain,
                                           const presets::Catalog& catalog);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_RUN_FLAGS_H_

#include "planner/accuracy/moe_recipes.h"

namespace llmplan::planner {

namespace {

bool gpu_is(const presets::SimConfig& c, const char* name) { return c.cluster.gpu.name == name; }

}  // namespace

// Read in NVIDIA-NeMo/Megatron-Bridge (Apache-2.0):
//  - @01b2977e518f scripts/performance/configs/qwen/qwen3_workload_base_configs.py:
//    every Qwen3-30B-A3B V1 preset of GB200, B200 and H100 (8 GPUs with
//    micro batch 4 on Blackwell; 16 GPUs with EP 16 on H100) and every
//    Qwen3-235B-A22B GB200 preset set moe_flex_dispatcher_backend
//    "hybridep"; the Qwen3-235B-A22B B200 and H100 presets set
//    moe_token_dispatcher_type "alltoall". The recipes' set-up
//    (src/megatron/bridge/training/flex_dispatcher_backend.py
//    apply_flex_dispatcher_backend) turns a "hybridep" backend into
//    moe_token_dispatcher_type "flex" on Hopper and Blackwell GPUs.
//  - @042641823051 scripts/performance/configs/deepseek/deepseek_workload_base_configs.py
//    (and the older stored version of that file, whose DeepSeek-V3 presets
//    agree on this): every DeepSeek-V3 GB200 and B200 preset sets
//    moe_flex_dispatcher_backend "hybridep" or "deepep".
//  - @2afd2d34f7d7 src/megatron/bridge/recipes/qwen/qwen3_moe.py
//    qwen3_235b_a22b_pretrain_config: account_for_embedding_in_pipeline_split
//    and account_for_loss_in_pipeline_split True (94 layers + 2 = 96 units).
// Only that one commit of the presets file is in the stored sources; the
// runs file maps every release of a layout with it (as runs_file.cc does
// for the recompute and overlap settings), so an older release that ran
// the alltoall dispatcher would be mapped too fast. Layouts that do not
// match a preset are left alone.
void apply_moe_recipe(const MoeRecipeRow& row, presets::SimConfig* config) {
  if (row.source != "Megatron-Bridge" || !config->model.is_moe()) return;
  simulator::Plan& plan = config->plan;
  const bool gb200 = gpu_is(*config, "gb200");
  const bool b200 = gpu_is(*config, "b200");
  const bool h100 = gpu_is(*config, "h100-sxm");
  const bool dropless = !(config->model.moe_capacity_factor > 0);
  if (row.model == "qwen3-30b-a3b" && dropless) {
    const bool blackwell_v1 = (gb200 || b200) && row.gpus == 8 && plan.expert_parallel == 8 &&
                              plan.micro_batch_size == 4;
    const bool h100_v1 = h100 && row.gpus == 16 && plan.expert_parallel == 16;
    if (blackwell_v1 || h100_v1) plan.moe_flex_dispatcher = true;
  }
  if (row.model == "deepseek-v3" && (gb200 || b200) && dropless) plan.moe_flex_dispatcher = true;
  if (row.model == "qwen3-235b-a22b") {
    if (gb200 && dropless) plan.moe_flex_dispatcher = true;
    const int chunks = plan.pipeline_parallel * plan.virtual_stages;
    if (plan.pipeline_parallel > 1 && (config->model.num_layers + 2) % chunks == 0) {
      plan.account_for_embedding_in_pipeline_split = true;
      plan.account_for_loss_in_pipeline_split = true;
    }
  }
}

}  // namespace llmplan::planner

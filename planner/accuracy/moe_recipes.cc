#include "planner/accuracy/moe_recipes.h"

#include <vector>

#include "planner/accuracy/runs_file.h"

namespace llmplan::planner {

namespace {

bool gpu_is(const presets::SimConfig& c, const char* name) { return c.cluster.gpu.name == name; }

// Whether `release` (a runs file's container) is `version` or later
// (release_version order); false when it names no version.
bool release_at_least(const std::string& release, std::vector<int> version) {
  const std::vector<int> v = release_version(release);
  return !v.empty() && v >= version;
}

// DeepSeek-V3 (Megatron-Bridge, Blackwell): the uneven pipeline layout and
// the all-to-all overlap of the recipes read (see apply_moe_recipe).
void apply_deepseek_v3(const MoeRecipeRow& row, bool gb200, bool b200,
                       simulator::Plan* plan) {
  const int chunks = plan->pipeline_parallel * plan->virtual_stages;
  if (chunks == 16) {
    plan->pipeline_first_chunk_layers = 4;
    plan->pipeline_last_chunk_layers = 1;
  }
  const bool mxfp8 = plan->precision == simulator::Precision::kFp8 &&
                     plan->fp8_recipe == simulator::Fp8Recipe::kMxfp8;
  const bool gb200_mx = gb200 && plan->pipeline_parallel == 4 && plan->virtual_stages == 4 &&
                        plan->expert_parallel == 64 && plan->micro_batch_size == 1;
  const bool b200_mx = b200 && plan->pipeline_parallel == 8 && plan->virtual_stages == 2 &&
                       plan->expert_parallel == 32;
  if (mxfp8 && (gb200_mx || b200_mx) && release_at_least(row.release, {26, 4, 1})) {
    plan->moe_a2a_overlap = true;
  }
  // recompute_modules mla_up_proj: every Blackwell preset of both stored
  // versions of the presets file but the newer file's GB200 FP8-CS base
  // (["mlp"]); the one GB200 FP8-CS row (25.09, token drop) is read with the
  // older file. "mlp" (the 3 dense layers' MLPs) and the B200 NVFP4 V2
  // preset's layernorm / moe_act are not mapped (no such rows).
  plan->recompute_modules |= simulator::kRecomputeMlaUpProj;
}

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
//  - @05d003fb8985 src/megatron/bridge/recipes/deepseek/deepseek_v3.py
//    _deepseek_v3_common: mtp_num_layers 1 and, for PP x VP = (4, 4),
//    (8, 2) and (16, 1), pipeline_model_parallel_layout [embedding + 4
//    decoder], 14 x [4 decoder], [decoder + mtp + loss] -- the string
//    "Et*4|(t*4|)*14tmL" that the B200 MXFP8 V2 preset below spells out:
//    Plan::pipeline_first_chunk_layers 4 and pipeline_last_chunk_layers 1
//    (61 = 4 + 14 x 4 + 1; a w/o-MTP row drops only the MTP block).
//  - @042641823051 deepseek_workload_base_configs.py: the GB200 FP8_MX
//    presets (PP 4 x VP 4, EP 64, micro batch 1) set moe_a2a_overlap True
//    (Megatron-Core's overlap_moe_expert_parallel_comm: Plan::
//    moe_a2a_overlap), cuda_graph_impl "full_iteration",
//    cutedsl_fused_grouped_mlp and recompute_modules [mla_up_proj]; the
//    B200 FP8_MX V2 preset runs PP 8 x VP 2, EP 32 with the "deepep"
//    backend, moe_a2a_overlap True, the layout above and recompute_modules
//    [mla_up_proj, mlp]. Every other DeepSeek-V3 Blackwell preset keeps
//    moe_a2a_overlap False.
//  - @f0e2c37e3f82 (an older version of the same file): the GB200 FP8_MX
//    presets are the GB200 base (hybridep, moe_a2a_overlap False,
//    recompute_modules [mla_up_proj], Transformer Engine CUDA graphs of
//    attn, moe_router, moe_preprocess), the B200 ones PP 16 x EP 8 without
//    the overlap.
//    Which release ran which version is not in the stored sources. The
//    B200 PP 8 x VP 2 x EP 32 layout exists only in @042641823051, and the
//    runs file's B200 rows have it from 26.04.01 on (PP 16 x EP 8 up to
//    26.04), so rows from 26.04.01 on are mapped with @042641823051's
//    all-to-all overlap and older rows without it. The GB200 MXFP8 change
//    may have landed in another commit than the B200 one; the GB200 rows
//    speed up 1.16x between 26.04.01 and 26.06, which this mapping does not
//    explain.
//    recompute_modules mla_up_proj is mapped (Plan::recompute_modules: the
//    up-projections and RoPE run again in the backward; fused attention's
//    q, k, v are not held). Not modelled: mlp (Megatron-Core's
//    TransformerLayer recomputes only non-MoE MLPs: DeepSeek-V3's 3 dense
//    layers), CUDA graphs and the CuTe DSL fused grouped MLP.
//  - scripts/performance/configs/nemotronh/nemotron_3_workload_base_configs.py,
//    the stored version with the VR200 and Nemotron 3 Ultra presets (its
//    commit is not recorded with the stored copy): the Nemotron 3 Nano base
//    preset (8 GPUs, EP 8) and the Nemotron 3 Super base preset (64 GPUs,
//    EP 64) set moe_flex_dispatcher_backend "hybridep", and every GB200 and
//    B200 preset of both keeps it; its Super layouts are the runs file's
//    (GB200 TP 2 x EP 64; B200 MXFP8 TP 1 x EP 64, NVFP4 TP 2 x EP 64). Also
//    @06e8da4 and nemotron_3_nano_workload_base_configs.py @00115737719b:
//    hybridep for Nano on every GPU. Nemotron 3.5 Lightning (Nano's shape)
//    has no preset in the stored sources: mapped as Nano, an assumption.
//    HybridEP's inter-node path sends a token once per destination node and
//    forwards it over NVLink there (Plan::moe_flex_node_dedup; only the B200
//    Super rows, EP 64 over 8 DGX nodes, span nodes). Other models' flex rows
//    would run the same kernels, but their MoE constants were fitted without
//    it, so they are left as they were (docs/accuracy-2026-models.md, "Hybrid Mamba models").
//    The B200 TP 1 rows' recompute_modules are mapped in blackwell_rows.cc
//    (from @06e8da4ede24); not modelled: the CUDA graphs.
// Only one commit of the Qwen3 presets file is in the stored sources; the
// runs file maps every release of a layout with it (as blackwell_rows.cc does
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
  if (row.model == "deepseek-v3" && (gb200 || b200)) {
    if (dropless) plan.moe_flex_dispatcher = true;
    apply_deepseek_v3(row, gb200, b200, &plan);
  }
  const bool nemotron3 = row.model == "nemotron3-nano" || row.model == "nemotron3-super" ||
                         row.model == "nemotron3.5-lightning";
  if (nemotron3 && (gb200 || b200) && dropless) {
    plan.moe_flex_dispatcher = true;
  }
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

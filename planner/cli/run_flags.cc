#include "planner/cli/run_flags.h"

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <utility>

#include "planner/cli/command.h"
#include "planner/cli/sim_inputs.h"
#include "planner/search/shapes_json.h"

namespace llmplan::planner {
namespace {

using simulator::Model;
using simulator::Plan;

// An int flag and the field of T it sets when given.
template <typename T>
struct IntField {
  const char* flag;
  int value;
  int T::*field;
};

// Sets each field whose flag was given (Flags::given) to the flag's value.
template <typename Flags, typename T>
void set_given(const Flags& o, std::initializer_list<IntField<T>> fields, T* out) {
  for (const IntField<T>& f : fields) {
    if (o.given(f.flag)) out->*f.field = f.value;
  }
}

// The value `text` names in `names`, else `otherwise` (the flags' own checks
// admit only the names and the one left for `otherwise`).
template <typename T>
T named(const std::string& text, std::initializer_list<std::pair<const char*, T>> names,
        T otherwise) {
  for (const auto& [name, value] : names) {
    if (text == name) return value;
  }
  return otherwise;
}

// The layout flags: parallel degrees (--gpus fills the data-parallel
// degree), the expert axes and the batches.
Status apply_layout_flags(const PlanFlags& o, Plan* plan) {
  set_given(o, {{"--tp", o.tp, &Plan::tensor_parallel},
                {"--pp", o.pp, &Plan::pipeline_parallel},
                {"--dp", o.dp, &Plan::data_parallel},
                {"--cp", o.cp, &Plan::context_parallel}},
            plan);
  if (o.given("--gpus")) {
    // The data-parallel degree that fills --gpus (issue 26: the published
    // layouts name their GPU count, e.g. pp 8 x ep 32 on 256 GB200).
    const int64_t model_ranks = static_cast<int64_t>(plan->tensor_parallel) *
                                plan->context_parallel * plan->pipeline_parallel;
    if (o.gpus % model_ranks != 0) {
      return Status::invalid_argument(
          "simulate: --gpus " + std::to_string(o.gpus) + " is not a multiple of tp x cp x pp = " +
          std::to_string(model_ranks));
    }
    const int dp = static_cast<int>(o.gpus / model_ranks);
    if (o.given("--dp") && o.dp != dp) {
      return Status::invalid_argument("simulate: --gpus " + std::to_string(o.gpus) +
                                      " contradicts --dp " + std::to_string(o.dp) +
                                      " (tp x cp x pp x dp = " +
                                      std::to_string(model_ranks * o.dp) + "): give one of them");
    }
    plan->data_parallel = dp;
  }
  if (o.given("--cp-comm")) {
    plan->cp_comm = o.cp_comm == "p2p" ? simulator::CpComm::kP2p : simulator::CpComm::kAllGather;
  }
  set_given(o, {{"--ep", o.ep, &Plan::expert_parallel},
                {"--etp", o.etp, &Plan::expert_tensor_parallel}},
            plan);
  if (o.moe_a2a_overlap) plan->moe_a2a_overlap = true;
  if (o.moe_flex_dispatcher) plan->moe_flex_dispatcher = true;
  if (o.given("--moe-imbalance")) plan->moe_imbalance = o.moe_imbalance;
  set_given(o, {{"--micro-batch", o.micro_batch, &Plan::micro_batch_size},
                {"--global-batch", o.global_batch, &Plan::global_batch_size},
                {"--virtual-stages", o.virtual_stages, &Plan::virtual_stages}},
            plan);
  return Status();
}

// The schedule, recompute (and its modules) and CPU offloading flags.
Status apply_schedule_flags(const PlanFlags& o, Plan* plan) {
  if (o.given("--schedule")) {
    using simulator::Schedule;
    plan->schedule = named(o.schedule,
                           {{"gpipe", Schedule::kGpipe}, {"1f1b", Schedule::kOneFOneB},
                            {"zb-h1", Schedule::kZbH1}},
                           Schedule::kInterleaved);
  }
  if (o.given("--recompute")) {
    using simulator::Recompute;
    plan->recompute = named(o.recompute,
                            {{"none", Recompute::kNone}, {"selective", Recompute::kSelective}},
                            Recompute::kFull);
  }
  if (o.given("--recompute-modules")) {
    // A comma-separated list of Megatron-Core recompute_modules names.
    plan->recompute_modules = 0;
    std::string list = o.recompute_modules;
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = list.find(',', start);
      const std::string name =
          list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (name == "core_attn") {
        if (plan->recompute == simulator::Recompute::kNone) {
          plan->recompute = simulator::Recompute::kSelective;
        }
      } else if (name == "layernorm") {
        plan->recompute_modules |= simulator::kRecomputeLayernorm;
      } else if (name == "moe_act") {
        plan->recompute_modules |= simulator::kRecomputeMoeAct;
      } else if (name == "mla_up_proj") {
        plan->recompute_modules |= simulator::kRecomputeMlaUpProj;
      } else {
        return Status::invalid_argument("simulate: --recompute-modules: unknown module '" + name +
                                        "' (known: core_attn, layernorm, moe_act, mla_up_proj)");
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  set_given(o, {{"--cpu-offload-layers", o.cpu_offload_layers, &Plan::cpu_offload_layers}}, plan);
  return Status();
}

// The precision, FP8 recipe and bf16 layers flags.
Status apply_precision_flags(const PlanFlags& o, Plan* plan) {
  if (o.given("--precision")) {
    simulator::parse_precision(o.precision, &plan->precision);  // a name CLI::IsMember admitted
  }
  if (o.given("--fp8-recipe")) {
    simulator::parse_fp8_recipe(o.fp8_recipe, &plan->fp8_recipe);  // a name CLI::IsMember admitted
    if (plan->precision != simulator::Precision::kFp8) {
      return Status::invalid_argument("simulate: --fp8-recipe needs --precision fp8");
    }
  }
  set_given(o, {{"--bf16-layers-at-start", o.bf16_layers_at_start, &Plan::bf16_layers_at_start},
                {"--bf16-layers-at-end", o.bf16_layers_at_end, &Plan::bf16_layers_at_end}},
            plan);
  if ((o.given("--bf16-layers-at-start") || o.given("--bf16-layers-at-end")) &&
      !simulator::low_precision(plan->precision)) {
    return Status::usage("simulate: --bf16-layers-at-start/--bf16-layers-at-end need --precision "
                         "fp8 or nvfp4");
  }
  return Status();
}

// The memory savers, sharding, overlaps and pipeline-split flags.
Status apply_memory_flags(const PlanFlags& o, Plan* plan) {
  if (o.sequence_parallel) plan->sequence_parallel = true;
  if (o.distributed_optimizer) plan->distributed_optimizer = true;
  if (o.no_flash_attention) plan->flash_attention = false;
  set_given(o, {{"--zero", o.zero, &Plan::zero_stage},
                {"--fsdp-group", o.fsdp_group, &Plan::fsdp_group}},
            plan);
  if (o.tp_comm_overlap) plan->tp_comm_overlap = true;
  if (o.given("--overlap-grad-reduce")) plan->overlap_grad_reduce = o.overlap_grad_reduce;
  if (o.given("--overlap-param-gather")) {
    plan->overlap_param_gather = o.overlap_param_gather;
  } else if (o.given("--zero") && o.zero == 3) {
    plan->overlap_param_gather = true;  // FSDP prefetches by default
  }
  if (o.no_dropout) plan->dropout = false;
  if (o.fused_cross_entropy) plan->fused_cross_entropy = true;
  if (o.cpu_offload_v2) {
    // The handler only matters for offloaded layers: without them the flag
    // would change nothing, silently.
    if (plan->cpu_offload_layers <= 0) {
      return Status::usage("simulate: --cpu-offload-v2 needs --cpu-offload-layers N (N > 0, here "
                           "or in --config's plan)");
    }
    plan->cpu_offload_v1 = false;
  }
  if (o.no_rope_fusion) plan->rope_fusion = false;
  if (o.grad_reduce_in_bf16) plan->grad_reduce_in_fp32 = false;
  if (o.no_fp8_param_gather) plan->fp8_param_gather = false;
  if (o.account_for_embedding) plan->account_for_embedding_in_pipeline_split = true;
  if (o.account_for_loss) plan->account_for_loss_in_pipeline_split = true;
  set_given(o, {{"--pipeline-first-chunk-layers", o.pipeline_first_chunk_layers,
                 &Plan::pipeline_first_chunk_layers},
                {"--pipeline-last-chunk-layers", o.pipeline_last_chunk_layers,
                 &Plan::pipeline_last_chunk_layers}},
            plan);
  return Status();
}

// The layout flags' registration (--tp .. --virtual-stages).
void add_layout_flags(CLI::App* cmd, PlanFlags* f) {
  cmd->add_option("--tp", f->tp, "Tensor-parallel degree")->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--pp", f->pp, "Pipeline-parallel degree")->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--dp", f->dp, "Data-parallel degree (replicas; GPUs = tp * cp * pp * dp)")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--gpus", f->gpus,
                  "GPUs of the run: sets --dp to GPUs / (tp * cp * pp), which must divide")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--cp", f->cp,
                  "Context-parallel degree: each sequence split over N ranks (2N load-balanced "
                  "chunks; N*2 must divide the sequence length)")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--cp-comm", f->cp_comm,
                  "How context parallelism exchanges keys/values: p2p (ring attention, "
                  "overlapped; default) or all-gather")
      ->check(CLI::IsMember({"p2p", "all-gather"}));
  cmd->add_option("--ep", f->ep,
                  "Expert-parallel degree (MoE): experts split over N ranks, folded onto the "
                  "tp x cp x dp ranks of a stage (ep x etp must divide them; N divides the experts)")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--etp", f->etp, "Expert tensor-parallel degree (MoE; default 1)")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_flag("--moe-a2a-overlap", f->moe_a2a_overlap,
                "Overlap the MoE dispatch/combine all-to-alls with another micro-batch's compute "
                "(Megatron-Core --overlap-moe-expert-parallel-comm)");
  cmd->add_flag("--moe-flex-dispatcher", f->moe_flex_dispatcher,
                "MoE flex token dispatcher (Megatron-Core DeepEP / HybridEP): each token sent once "
                "per destination expert-parallel rank, not once per expert");
  cmd->add_option("--moe-imbalance", f->moe_imbalance,
                  "Expert load imbalance: tokens on the busiest expert-parallel rank over the "
                  "balanced share (1 = balanced, the default)")
      ->check(finite_in(1.0, 64.0));
  cmd->add_option("--micro-batch", f->micro_batch, "Sequences per micro-batch")
      ->check(int_in(1, Plan::kMaxGlobalBatch));
  cmd->add_option("--global-batch", f->global_batch, "Sequences per optimizer step")
      ->check(int_in(1, Plan::kMaxGlobalBatch));
  cmd->add_option("--schedule", f->schedule,
                  "Pipeline schedule (zb-h1: zero-bubble ZB-H1, backward split into input and "
                  "weight gradients)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved", "zb-h1"}));
  cmd->add_option("--virtual-stages", f->virtual_stages, "Model chunks per stage (interleaved)")
      ->check(int_in(1, Model::kMaxLayers));
}

}  // namespace

void add_model_flags(CLI::App* cmd, ModelFlags* f) {
  f->cmd = cmd;
  cmd->add_option("--model", f->model_name, "Model preset (see 'llmplan presets') or model file (llmplan's "
                  "model keys, or a Hugging Face config.json)");
  cmd->add_option("--layers", f->layers, "Transformer layers")->check(int_in(1, Model::kMaxLayers));
  cmd->add_option("--hidden", f->hidden, "Hidden size")->check(int_in(1, Model::kMaxHidden));
  cmd->add_option("--heads", f->heads, "Attention heads")->check(int_in(1, Model::kMaxHidden));
  cmd->add_option("--kv-heads", f->kv_heads, "Key/value heads (GQA); default = heads")
      ->check(int_in(1, Model::kMaxHidden));
  cmd->add_option("--ffn-hidden", f->ffn_hidden, "FFN hidden size; default 4 x hidden")
      ->check(int_in(1, Model::kMaxFfnHidden));
  cmd->add_option("--seq", f->seq, "Sequence length (default 2048 for a custom shape)")
      ->check(int_in(1, Model::kMaxSeqLength));
  cmd->add_option("--vocab", f->vocab, "Vocabulary size (default 50257 for a custom shape)")
      ->check(int_in(1, Model::kMaxVocab));
  cmd->add_option("--head-dim", f->head_dim,
                  "Width of one attention head (default hidden / heads; when given, heads need "
                  "not divide hidden)")
      ->check(int_in(0, Model::kMaxHidden));
  cmd->add_option("--experts", f->experts,
                  "Routed experts per MoE layer (mixture of experts; 0 = dense)")
      ->check(int_in(0, Model::kMaxExperts));
  cmd->add_option("--top-k", f->top_k, "Experts each token is routed to (MoE)")
      ->check(int_in(0, Model::kMaxExperts));
  cmd->add_option("--expert-ffn-hidden", f->expert_ffn_hidden,
                  "FFN size of one expert (MoE; default = --ffn-hidden)")
      ->check(int_in(1, Model::kMaxFfnHidden));
  cmd->add_option("--shared-experts", f->shared_experts,
                  "Always-on experts per MoE layer, each of the expert FFN size")
      ->check(int_in(0, Model::kMaxExperts));
}

void add_plan_flags(CLI::App* cmd, PlanFlags* f) {
  f->cmd = cmd;
  add_layout_flags(cmd, f);
  cmd->add_option("--recompute", f->recompute, "Activation recomputation")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  cmd->add_option("--recompute-modules", f->recompute_modules,
                  "Megatron-Core selective recompute modules, comma-separated: core_attn, "
                  "layernorm (the MoE block's norm), moe_act, mla_up_proj");
  cmd->add_option("--cpu-offload-layers", f->cpu_offload_layers,
                  "Activation CPU offloading: the first N layers' activations to host memory "
                  "(Megatron-Core cpu_offloading_num_layers; pp 1, no recompute, a cluster with "
                  "a host link)")
      ->check(int_in(0, Model::kMaxLayers));
  cmd->add_flag("--cpu-offload-v2", f->cpu_offload_v2,
                "With --cpu-offload-layers: Transformer Engine's refactored offload handler "
                "(after TE pull request 1762, late 2025), which keeps none of the offloaded "
                "layers on the GPU at the peak (memory); default: the earlier handler, which "
                "keeps one");
  cmd->add_flag("--sequence-parallel", f->sequence_parallel, "Megatron sequence parallelism");
  cmd->add_flag("--distributed-optimizer", f->distributed_optimizer,
                "Shard optimizer state over data parallelism (ZeRO-1; same as --zero 1)");
  cmd->add_option("--zero", f->zero,
                  "ZeRO stage: 0 none, 1 optimizer state, 2 + gradients (FSDP SHARD_GRAD_OP), "
                  "3 + parameters (FSDP FULL_SHARD)")
      ->check(int_in(0, 3));
  cmd->add_option("--fsdp-group", f->fsdp_group,
                  "Hybrid sharding: shard within groups of S data-parallel ranks, replicate "
                  "across them (must divide --dp; 0 = all of them)")
      ->check(int_in(0, Plan::kMaxGpus));
  cmd->add_flag("--tp-comm-overlap", f->tp_comm_overlap,
                "Overlap tensor-parallel communication with the GEMMs around it");
  cmd->add_flag("--overlap-grad-reduce,!--no-overlap-grad-reduce", f->overlap_grad_reduce,
                "Overlap the data-parallel gradient reduction with the backward (default on)");
  cmd->add_flag("--overlap-param-gather,!--no-overlap-param-gather", f->overlap_param_gather,
                "Overlap the data-parallel parameter all-gather with compute (prefetch; default "
                "on with --zero 3, as FSDP prefetches, off otherwise)");
  cmd->add_flag("--no-dropout", f->no_dropout,
                "Dropout 0: no dropout masks stored (memory)");
  cmd->add_flag("--fused-cross-entropy", f->fused_cross_entropy,
                "The loss computes its gradient in place on the bf16 logits (memory)");
  cmd->add_flag("--no-rope-fusion", f->no_rope_fusion,
                "Rotary embedding in eager PyTorch ops instead of Transformer Engine's fused "
                "kernel (Megatron-Core apply_rope_fusion False; time)");
  cmd->add_flag("--account-for-embedding-in-pipeline-split", f->account_for_embedding,
                "Count the embedding as one layer when splitting the layers over the pipeline "
                "chunks: the first chunk holds one transformer layer fewer (Megatron-Core)");
  cmd->add_flag("--account-for-loss-in-pipeline-split", f->account_for_loss,
                "Count the output layer and loss as one layer when splitting the layers over "
                "the pipeline chunks: the last chunk holds one transformer layer fewer");
  cmd->add_option("--pipeline-first-chunk-layers", f->pipeline_first_chunk_layers,
                  "Uneven pipeline layout: transformer layers in the first pipeline chunk (with "
                  "the embedding); give with --pipeline-last-chunk-layers; the middle chunks split "
                  "the rest (Megatron-Core pipeline_model_parallel_layout, e.g. DeepSeek-V3's "
                  "Et*4|(t*4|)*14tmL: 4 and 1)")
      ->check(CLI::Range(0, simulator::Model::kMaxLayers));
  cmd->add_option("--pipeline-last-chunk-layers", f->pipeline_last_chunk_layers,
                  "Uneven pipeline layout: transformer layers in the last pipeline chunk (with "
                  "the output layer, loss and MTP modules)")
      ->check(CLI::Range(0, simulator::Model::kMaxLayers));
  cmd->add_flag("--grad-reduce-in-bf16", f->grad_reduce_in_bf16,
                "Gradients accumulated and reduced in bf16 instead of fp32 (Megatron-Core "
                "grad_reduce_in_fp32 False, as the Megatron-Bridge performance recipes run): 2 "
                "bytes of gradient per parameter");
  cmd->add_flag("--no-fp8-param-gather", f->no_fp8_param_gather,
                "With --precision fp8 (delayed or current scaling) and the distributed optimizer: "
                "bf16 parameters gathered at 2 bytes, with Transformer Engine's fp8 copy cached "
                "beside them (no fp8_param_gather, as NeMo-Framework-Launcher 24.07 ran); at "
                "--zero 3, bf16 parameters (PyTorch FSDP) instead of Megatron-FSDP's 1-byte FP8 "
                "ones (memory)");
  cmd->add_flag("--no-flash-attention", f->no_flash_attention, "Unfused attention kernels");
  cmd->add_option("--precision", f->precision,
                  "Training precision: bf16, fp16, fp8 (linear-layer GEMMs in FP8 with "
                  "Transformer Engine's casts; Hopper and Blackwell) or nvfp4 (the same GEMMs in "
                  "NVFP4, Transformer Engine's NVFP4BlockScaling recipe; Blackwell)")
      ->check(CLI::IsMember(simulator::precision_names()));
  cmd->add_option("--fp8-recipe", f->fp8_recipe,
                  "FP8 scaling recipe with --precision fp8: delayed (default), current, mxfp8 "
                  "(Blackwell)")
      ->check(CLI::IsMember(simulator::fp8_recipe_names()));
  cmd->add_option("--bf16-layers-at-start", f->bf16_layers_at_start,
                  "With --precision fp8 or nvfp4: transformer layers kept in bf16 at the start "
                  "of the model (Megatron-Core --first-last-layers-bf16 "
                  "--num-layers-at-start-in-bf16; default 0)")
      ->check(int_in(0, simulator::Model::kMaxLayers));
  cmd->add_option("--bf16-layers-at-end", f->bf16_layers_at_end,
                  "With --precision fp8 or nvfp4: transformer layers kept in bf16 at the end "
                  "(--num-layers-at-end-in-bf16; default 0)")
      ->check(int_in(0, simulator::Model::kMaxLayers));
}

Status apply_model_flags(const ModelFlags& o, const presets::Catalog& catalog,
                         bool have_model, simulator::Model* model) {
  if (!o.model_name.empty()) {
    // A preset name, else a model file (llmplan's model keys or a Hugging
    // Face config.json, planner/search/shapes_json.h).
    auto preset = catalog.model(o.model_name);
    std::error_code ec;
    if (preset.ok() || !std::filesystem::is_regular_file(o.model_name, ec)) {
      LLMPLAN_ASSIGN_OR_RETURN(*model, std::move(preset));
    } else {
      LLMPLAN_ASSIGN_OR_RETURN(*model, resolve_pinned_model(o.model_name, *model, catalog));
    }
    have_model = true;
  }
  const bool shape = o.given("--layers") || o.given("--hidden") || o.given("--heads");
  if (!have_model) {
    if (!shape) {
      return Status::invalid_argument(
          "simulate: no model: give --config, --vtrain-config, --model NAME, or "
          "--layers/--hidden/--heads (see 'llmplan presets' for model names)");
    }
    for (const char* f : {"--layers", "--hidden", "--heads"}) {
      if (!o.given(f)) return Status::invalid_argument(std::string("simulate: ") + f + " is required with a custom model shape");
    }
    model->name = "custom";
    model->seq_length = 2048;
    model->vocab_size = 50257;
  }
  set_given(o, {{"--layers", o.layers, &Model::num_layers},
                {"--hidden", o.hidden, &Model::hidden_size},
                {"--heads", o.heads, &Model::num_heads},
                {"--kv-heads", o.kv_heads, &Model::num_kv_heads},
                {"--ffn-hidden", o.ffn_hidden, &Model::ffn_hidden_size},
                {"--seq", o.seq, &Model::seq_length},
                {"--vocab", o.vocab, &Model::vocab_size},
                {"--head-dim", o.head_dim, &Model::head_dim_size},
                {"--experts", o.experts, &Model::num_experts},
                {"--top-k", o.top_k, &Model::moe_top_k},
                {"--expert-ffn-hidden", o.expert_ffn_hidden, &Model::moe_ffn_hidden_size},
                {"--shared-experts", o.shared_experts, &Model::moe_shared_experts}},
            model);
  return Status();
}

Status apply_plan_flags(const PlanFlags& o, Plan* plan) {
  if (o.given("--zero") && o.distributed_optimizer && o.zero != 1) {
    return Status::usage("simulate: --zero " + std::to_string(o.zero) +
                         " contradicts --distributed-optimizer (ZeRO stage 1): give one of them");
  }
  LLMPLAN_RETURN_IF_ERROR(apply_layout_flags(o, plan));
  LLMPLAN_RETURN_IF_ERROR(apply_schedule_flags(o, plan));
  LLMPLAN_RETURN_IF_ERROR(apply_precision_flags(o, plan));
  return apply_memory_flags(o, plan);
}

Status apply_cluster_flags(const ClusterFlags& o, const presets::Catalog& catalog,
                           bool from_config, simulator::Cluster* cluster) {
  if (from_config && o.cluster.empty() && o.gpu.empty() && o.gpus_per_node == 0) return Status();
  if (from_config && o.cluster.empty() && o.gpu.empty()) {
    cluster->gpus_per_node = o.gpus_per_node;  // only --gpus-per-node changed
    return Status();
  }
  LLMPLAN_ASSIGN_OR_RETURN(*cluster, resolve_cluster(catalog, o.cluster, o.gpu, o.gpus_per_node,
                                                     kDefaultCluster));
  return Status();
}

Result<presets::SimConfig> load_run_config(const std::string& config,
                                           const std::string& vtrain_config,
                                           const presets::VtrainLoadOptions& vtrain,
                                           const presets::Catalog& catalog) {
  if (!config.empty()) return presets::load_sim_config_file(config, catalog);
  return presets::load_vtrain_config_file(vtrain_config, catalog, vtrain);
}

}  // namespace llmplan::planner

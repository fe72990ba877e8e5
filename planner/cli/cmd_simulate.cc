// `llmplan simulate`: one training iteration of one model, plan and cluster.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "planner/cli/command.h"
#include "planner/cli/reliability_flags.h"
#include "planner/report/failures_report.h"
#include "planner/cli/sim_inputs.h"
#include "planner/search/shapes_json.h"
#include "presets/sim_config.h"
#include "reports/step_report.h"
#include "reports/step_report_json.h"
#include "simulator/simulate.h"
#include "base/strict_json.h"
#include "simulator/trace_json.h"

namespace llmplan::planner {
namespace {

using simulator::Model;
using simulator::Plan;

struct SimulateOptions {
  std::string config, vtrain_config, model_name;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn_hidden = 0, seq = 0, vocab = 0;
  int head_dim = 0, experts = 0, top_k = 0, expert_ffn_hidden = 0, shared_experts = 0;
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
  std::string gpu, cluster;
  int gpus_per_node = 0;
  std::string format = "text";
  std::string trace;
  bool task_level = false;
  bool vtrain_ignore_num_gpus = false;
  CostModelOptions cost;
  ReliabilityFlags reliability;  // failures per day of compute (issue 28)
  CLI::App* cmd = nullptr;

  bool given(const char* flag) const { return cmd->count(flag) > 0; }
};

// Applies the model flags; the model comes from --model or from scratch.
Status apply_model_flags(const SimulateOptions& o, const presets::Catalog& catalog,
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
  if (o.given("--layers")) model->num_layers = o.layers;
  if (o.given("--hidden")) model->hidden_size = o.hidden;
  if (o.given("--heads")) model->num_heads = o.heads;
  if (o.given("--kv-heads")) model->num_kv_heads = o.kv_heads;
  if (o.given("--ffn-hidden")) model->ffn_hidden_size = o.ffn_hidden;
  if (o.given("--seq")) model->seq_length = o.seq;
  if (o.given("--vocab")) model->vocab_size = o.vocab;
  if (o.given("--head-dim")) model->head_dim_size = o.head_dim;
  if (o.given("--experts")) model->num_experts = o.experts;
  if (o.given("--top-k")) model->moe_top_k = o.top_k;
  if (o.given("--expert-ffn-hidden")) model->moe_ffn_hidden_size = o.expert_ffn_hidden;
  if (o.given("--shared-experts")) model->moe_shared_experts = o.shared_experts;
  return Status();
}

Status apply_plan_flags(const SimulateOptions& o, Plan* plan) {
  if (o.given("--zero") && o.distributed_optimizer && o.zero != 1) {
    return Status::usage("simulate: --zero " + std::to_string(o.zero) +
                         " contradicts --distributed-optimizer (ZeRO stage 1): give one of them");
  }
  if (o.given("--tp")) plan->tensor_parallel = o.tp;
  if (o.given("--pp")) plan->pipeline_parallel = o.pp;
  if (o.given("--dp")) plan->data_parallel = o.dp;
  if (o.given("--cp")) plan->context_parallel = o.cp;
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
  if (o.given("--ep")) plan->expert_parallel = o.ep;
  if (o.given("--etp")) plan->expert_tensor_parallel = o.etp;
  if (o.moe_a2a_overlap) plan->moe_a2a_overlap = true;
  if (o.moe_flex_dispatcher) plan->moe_flex_dispatcher = true;
  if (o.given("--moe-imbalance")) plan->moe_imbalance = o.moe_imbalance;
  if (o.given("--micro-batch")) plan->micro_batch_size = o.micro_batch;
  if (o.given("--global-batch")) plan->global_batch_size = o.global_batch;
  if (o.given("--virtual-stages")) plan->virtual_stages = o.virtual_stages;
  if (o.given("--schedule")) {
    plan->schedule = o.schedule == "gpipe"   ? simulator::Schedule::kGpipe
                     : o.schedule == "1f1b"  ? simulator::Schedule::kOneFOneB
                     : o.schedule == "zb-h1" ? simulator::Schedule::kZbH1
                                             : simulator::Schedule::kInterleaved;
  }
  if (o.given("--recompute")) {
    plan->recompute = o.recompute == "none"      ? simulator::Recompute::kNone
                      : o.recompute == "selective" ? simulator::Recompute::kSelective
                                                   : simulator::Recompute::kFull;
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
  if (o.given("--cpu-offload-layers")) plan->cpu_offload_layers = o.cpu_offload_layers;
  if (o.given("--precision")) {
    simulator::parse_precision(o.precision, &plan->precision);  // a name CLI::IsMember admitted
  }
  if (o.given("--fp8-recipe")) {
    simulator::parse_fp8_recipe(o.fp8_recipe, &plan->fp8_recipe);  // a name CLI::IsMember admitted
    if (plan->precision != simulator::Precision::kFp8) {
      return Status::invalid_argument("simulate: --fp8-recipe needs --precision fp8");
    }
  }
  if (o.given("--bf16-layers-at-start")) plan->bf16_layers_at_start = o.bf16_layers_at_start;
  if (o.given("--bf16-layers-at-end")) plan->bf16_layers_at_end = o.bf16_layers_at_end;
  if ((o.given("--bf16-layers-at-start") || o.given("--bf16-layers-at-end")) &&
      !simulator::low_precision(plan->precision)) {
    return Status::usage("simulate: --bf16-layers-at-start/--bf16-layers-at-end need --precision "
                         "fp8 or nvfp4");
  }
  if (o.sequence_parallel) plan->sequence_parallel = true;
  if (o.distributed_optimizer) plan->distributed_optimizer = true;
  if (o.no_flash_attention) plan->flash_attention = false;
  if (o.given("--zero")) plan->zero_stage = o.zero;
  if (o.given("--fsdp-group")) plan->fsdp_group = o.fsdp_group;
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
  if (o.given("--pipeline-first-chunk-layers")) {
    plan->pipeline_first_chunk_layers = o.pipeline_first_chunk_layers;
  }
  if (o.given("--pipeline-last-chunk-layers")) {
    plan->pipeline_last_chunk_layers = o.pipeline_last_chunk_layers;
  }
  return Status();
}

Status run_simulate(const SimulateOptions& o, const GlobalOptions& global) {
  LLMPLAN_ASSIGN_OR_RETURN(presets::Catalog catalog, load_catalog(global));
  presets::SimConfig config;
  bool have_model = false;
  if (!o.config.empty() && !o.vtrain_config.empty()) {
    return Status::invalid_argument("simulate: give --config or --vtrain-config, not both");
  }
  if (!o.config.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(config, presets::load_sim_config_file(o.config, catalog));
    have_model = true;
  } else if (!o.vtrain_config.empty()) {
    presets::VtrainLoadOptions vtrain;
    vtrain.ignore_stale_num_gpus = o.vtrain_ignore_num_gpus;
    LLMPLAN_ASSIGN_OR_RETURN(config,
                             presets::load_vtrain_config_file(o.vtrain_config, catalog, vtrain));
    have_model = true;
  }
  LLMPLAN_RETURN_IF_ERROR(apply_model_flags(o, catalog, have_model, &config.model));
  LLMPLAN_RETURN_IF_ERROR(apply_plan_flags(o, &config.plan));
  if (!have_model || !o.cluster.empty() || !o.gpu.empty() || o.gpus_per_node != 0) {
    const std::string base = have_model && o.cluster.empty() && o.gpu.empty() ? "" : o.cluster;
    if (have_model && base.empty() && o.gpu.empty()) {
      config.cluster.gpus_per_node = o.gpus_per_node;  // only --gpus-per-node changed
    } else {
      LLMPLAN_ASSIGN_OR_RETURN(config.cluster, resolve_cluster(catalog, o.cluster, o.gpu,
                                                               o.gpus_per_node, "dgx-a100-80gb"));
    }
  }
  // A precision the GPU cannot run (fp8 or nvfp4 without those tensor
  // cores) contradicts the command line's own GPU: a usage error, exit 2.
  LLMPLAN_RETURN_IF_ERROR(simulator::check_precision(config.plan, config.cluster.gpu).as_usage());
  LLMPLAN_RETURN_IF_ERROR(simulator::check_host_link(config.plan, config.cluster).as_usage());
  LLMPLAN_ASSIGN_OR_RETURN(auto cost, make_cost_model(config.cluster, o.cost, &config.notes));
  simulator::SimOptions sim;
  sim.cost_model = cost;
  sim.keep_timeline = !o.trace.empty();
  sim.collapse_chains = !o.task_level;
  LLMPLAN_ASSIGN_OR_RETURN(simulator::StepReport report,
                           simulator::simulate(config.model, config.plan, config.cluster, sim));
  if (!o.trace.empty()) {
    LLMPLAN_RETURN_IF_ERROR(
        write_output_file(o.trace, simulator::chrome_trace_json(report), "--trace"));
    config.notes.push_back("Chrome trace of this iteration written to " + o.trace);
  }
  const reports::SimulationView view{config.model, config.plan, config.cluster, report, config.notes};
  // Failures (issue 28): the run has no tokens, so per day of compute.
  LLMPLAN_ASSIGN_OR_RETURN(const Reliability rel, resolve_reliability(o.reliability, config.cluster));
  Goodput failures;
  if (rel.enabled) failures = goodput(config.model, config.plan, config.cluster, rel, 86400.0);
  std::string out;
  if (o.format == "json") {
    boost::json::object j = reports::step_report_to_json(view);
    if (rel.enabled) j["failures"] = failures_per_day_json(failures, rel, config.cluster.gpus_per_node);
    LLMPLAN_ASSIGN_OR_RETURN(out, json::pretty_finite(j));
  } else if (o.format == "md") {
    out = reports::step_report_markdown(view);
    if (rel.enabled) out += "\n" + failures_per_day_text(failures, rel);
  } else {
    out = reports::step_report_text(view);
    if (rel.enabled) out += failures_per_day_text(failures, rel);
  }
  return write_stdout(out);
}

}  // namespace

void add_simulate_command(CLI::App& app, const GlobalOptions& global, Action* action) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Simulate one training iteration: time, breakdown, memory, MFU");
  o->cmd = cmd;
  cmd->add_option("--config", o->config,
                  "JSON with model, plan, cluster objects ({\"preset\": NAME} plus overrides)");
  cmd->add_option("--vtrain-config", o->vtrain_config, "A vTrain config file (its JSON format)");
  cmd->add_flag("--vtrain-ignore-num-gpus", o->vtrain_ignore_num_gpus,
                "With --vtrain-config: use t*d*p when num_gpus disagrees (vTrain's case-study "
                "files all say 3360) instead of rejecting the file");
  cmd->add_option("--model", o->model_name, "Model preset (see 'llmplan presets') or model file (llmplan's "
                  "model keys, or a Hugging Face config.json)");
  cmd->add_option("--layers", o->layers, "Transformer layers")->check(int_in(1, Model::kMaxLayers));
  cmd->add_option("--hidden", o->hidden, "Hidden size")->check(int_in(1, Model::kMaxHidden));
  cmd->add_option("--heads", o->heads, "Attention heads")->check(int_in(1, Model::kMaxHidden));
  cmd->add_option("--kv-heads", o->kv_heads, "Key/value heads (GQA); default = heads")
      ->check(int_in(0, Model::kMaxHidden));
  cmd->add_option("--ffn-hidden", o->ffn_hidden, "FFN hidden size; default 4 x hidden")
      ->check(int_in(0, Model::kMaxFfnHidden));
  cmd->add_option("--seq", o->seq, "Sequence length (default 2048 for a custom shape)")
      ->check(int_in(1, Model::kMaxSeqLength));
  cmd->add_option("--vocab", o->vocab, "Vocabulary size (default 50257 for a custom shape)")
      ->check(int_in(1, Model::kMaxVocab));
  cmd->add_option("--head-dim", o->head_dim,
                  "Width of one attention head (default hidden / heads; when given, heads need "
                  "not divide hidden)")
      ->check(int_in(0, Model::kMaxHidden));
  cmd->add_option("--experts", o->experts,
                  "Routed experts per MoE layer (mixture of experts; 0 = dense)")
      ->check(int_in(0, Model::kMaxExperts));
  cmd->add_option("--top-k", o->top_k, "Experts each token is routed to (MoE)")
      ->check(int_in(0, Model::kMaxExperts));
  cmd->add_option("--expert-ffn-hidden", o->expert_ffn_hidden,
                  "FFN size of one expert (MoE; default = --ffn-hidden)")
      ->check(int_in(0, Model::kMaxFfnHidden));
  cmd->add_option("--shared-experts", o->shared_experts,
                  "Always-on experts per MoE layer, each of the expert FFN size")
      ->check(int_in(0, Model::kMaxExperts));
  add_reliability_flags(cmd, &o->reliability, "Failures");
  cmd->add_option("--tp", o->tp, "Tensor-parallel degree")->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--pp", o->pp, "Pipeline-parallel degree")->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--dp", o->dp, "Data-parallel degree (replicas; GPUs = tp * cp * pp * dp)")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--gpus", o->gpus,
                  "GPUs of the run: sets --dp to GPUs / (tp * cp * pp), which must divide")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--cp", o->cp,
                  "Context-parallel degree: each sequence split over N ranks (2N load-balanced "
                  "chunks; N*2 must divide the sequence length)")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--cp-comm", o->cp_comm,
                  "How context parallelism exchanges keys/values: p2p (ring attention, "
                  "overlapped; default) or all-gather")
      ->check(CLI::IsMember({"p2p", "all-gather"}));
  cmd->add_option("--ep", o->ep,
                  "Expert-parallel degree (MoE): experts split over N ranks, folded onto the "
                  "tp x cp x dp ranks of a stage (ep x etp must divide them; N divides the experts)")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_option("--etp", o->etp, "Expert tensor-parallel degree (MoE; default 1)")
      ->check(int_in(1, Plan::kMaxGpus));
  cmd->add_flag("--moe-a2a-overlap", o->moe_a2a_overlap,
                "Overlap the MoE dispatch/combine all-to-alls with another micro-batch's compute "
                "(Megatron-Core --overlap-moe-expert-parallel-comm)");
  cmd->add_flag("--moe-flex-dispatcher", o->moe_flex_dispatcher,
                "MoE flex token dispatcher (Megatron-Core DeepEP / HybridEP): each token sent once "
                "per destination expert-parallel rank, not once per expert");
  cmd->add_option("--moe-imbalance", o->moe_imbalance,
                  "Expert load imbalance: tokens on the busiest expert-parallel rank over the "
                  "balanced share (1 = balanced, the default)")
      ->check(finite_in(1.0, 64.0));
  cmd->add_option("--micro-batch", o->micro_batch, "Sequences per micro-batch")
      ->check(int_in(1, Plan::kMaxGlobalBatch));
  cmd->add_option("--global-batch", o->global_batch, "Sequences per optimizer step")
      ->check(int_in(1, Plan::kMaxGlobalBatch));
  cmd->add_option("--schedule", o->schedule,
                  "Pipeline schedule (zb-h1: zero-bubble ZB-H1, backward split into input and "
                  "weight gradients)")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved", "zb-h1"}));
  cmd->add_option("--virtual-stages", o->virtual_stages, "Model chunks per stage (interleaved)")
      ->check(int_in(1, Model::kMaxLayers));
  cmd->add_option("--recompute", o->recompute, "Activation recomputation")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  cmd->add_option("--recompute-modules", o->recompute_modules,
                  "Megatron-Core selective recompute modules, comma-separated: core_attn, "
                  "layernorm (the MoE block's norm), moe_act, mla_up_proj");
  cmd->add_option("--cpu-offload-layers", o->cpu_offload_layers,
                  "Activation CPU offloading: the first N layers' activations to host memory "
                  "(Megatron-Core cpu_offloading_num_layers; pp 1, no recompute, a cluster with "
                  "a host link)")
      ->check(int_in(0, Model::kMaxLayers));
  cmd->add_flag("--cpu-offload-v2", o->cpu_offload_v2,
                "With --cpu-offload-layers: Transformer Engine's refactored offload handler "
                "(after TE pull request 1762, late 2025), which keeps none of the offloaded "
                "layers on the GPU at the peak (memory); default: the earlier handler, which "
                "keeps one");
  cmd->add_flag("--sequence-parallel", o->sequence_parallel, "Megatron sequence parallelism");
  cmd->add_flag("--distributed-optimizer", o->distributed_optimizer,
                "Shard optimizer state over data parallelism (ZeRO-1; same as --zero 1)");
  cmd->add_option("--zero", o->zero,
                  "ZeRO stage: 0 none, 1 optimizer state, 2 + gradients (FSDP SHARD_GRAD_OP), "
                  "3 + parameters (FSDP FULL_SHARD)")
      ->check(int_in(0, 3));
  cmd->add_option("--fsdp-group", o->fsdp_group,
                  "Hybrid sharding: shard within groups of S data-parallel ranks, replicate "
                  "across them (must divide --dp; 0 = all of them)")
      ->check(int_in(0, Plan::kMaxGpus));
  cmd->add_flag("--tp-comm-overlap", o->tp_comm_overlap,
                "Overlap tensor-parallel communication with the GEMMs around it");
  cmd->add_flag("--overlap-grad-reduce,!--no-overlap-grad-reduce", o->overlap_grad_reduce,
                "Overlap the data-parallel gradient reduction with the backward (default on)");
  cmd->add_flag("--overlap-param-gather,!--no-overlap-param-gather", o->overlap_param_gather,
                "Overlap the data-parallel parameter all-gather with compute (prefetch; default "
                "on with --zero 3, as FSDP prefetches, off otherwise)");
  cmd->add_flag("--no-dropout", o->no_dropout,
                "Dropout 0: no dropout masks stored (memory)");
  cmd->add_flag("--fused-cross-entropy", o->fused_cross_entropy,
                "The loss computes its gradient in place on the bf16 logits (memory)");
  cmd->add_flag("--no-rope-fusion", o->no_rope_fusion,
                "Rotary embedding in eager PyTorch ops instead of Transformer Engine's fused "
                "kernel (Megatron-Core apply_rope_fusion False; time)");
  cmd->add_flag("--account-for-embedding-in-pipeline-split", o->account_for_embedding,
                "Count the embedding as one layer when splitting the layers over the pipeline "
                "chunks: the first chunk holds one transformer layer fewer (Megatron-Core)");
  cmd->add_flag("--account-for-loss-in-pipeline-split", o->account_for_loss,
                "Count the output layer and loss as one layer when splitting the layers over "
                "the pipeline chunks: the last chunk holds one transformer layer fewer");
  cmd->add_option("--pipeline-first-chunk-layers", o->pipeline_first_chunk_layers,
                  "Uneven pipeline layout: transformer layers in the first pipeline chunk (with "
                  "the embedding); give with --pipeline-last-chunk-layers; the middle chunks split "
                  "the rest (Megatron-Core pipeline_model_parallel_layout, e.g. DeepSeek-V3's "
                  "Et*4|(t*4|)*14tmL: 4 and 1)")
      ->check(CLI::Range(0, simulator::Model::kMaxLayers));
  cmd->add_option("--pipeline-last-chunk-layers", o->pipeline_last_chunk_layers,
                  "Uneven pipeline layout: transformer layers in the last pipeline chunk (with "
                  "the output layer, loss and MTP modules)")
      ->check(CLI::Range(0, simulator::Model::kMaxLayers));
  cmd->add_flag("--grad-reduce-in-bf16", o->grad_reduce_in_bf16,
                "Gradients accumulated and reduced in bf16 instead of fp32 (Megatron-Core "
                "grad_reduce_in_fp32 False, as the Megatron-Bridge performance recipes run): 2 "
                "bytes of gradient per parameter");
  cmd->add_flag("--no-fp8-param-gather", o->no_fp8_param_gather,
                "With --precision fp8 (delayed or current scaling) and the distributed optimizer: "
                "bf16 parameters gathered at 2 bytes, with Transformer Engine's fp8 copy cached "
                "beside them (no fp8_param_gather, as NeMo-Framework-Launcher 24.07 ran); at "
                "--zero 3, bf16 parameters (PyTorch FSDP) instead of Megatron-FSDP's 1-byte FP8 "
                "ones (memory)");
  cmd->add_flag("--no-flash-attention", o->no_flash_attention, "Unfused attention kernels");
  cmd->add_option("--precision", o->precision,
                  "Training precision: bf16, fp16, fp8 (linear-layer GEMMs in FP8 with "
                  "Transformer Engine's casts; Hopper and Blackwell) or nvfp4 (the same GEMMs in "
                  "NVFP4, Transformer Engine's NVFP4BlockScaling recipe; Blackwell)")
      ->check(CLI::IsMember(simulator::precision_names()));
  cmd->add_option("--fp8-recipe", o->fp8_recipe,
                  "FP8 scaling recipe with --precision fp8: delayed (default), current, mxfp8 "
                  "(Blackwell)")
      ->check(CLI::IsMember(simulator::fp8_recipe_names()));
  cmd->add_option("--bf16-layers-at-start", o->bf16_layers_at_start,
                  "With --precision fp8 or nvfp4: transformer layers kept in bf16 at the start "
                  "of the model (Megatron-Core --first-last-layers-bf16 "
                  "--num-layers-at-start-in-bf16; default 0)")
      ->check(int_in(0, simulator::Model::kMaxLayers));
  cmd->add_option("--bf16-layers-at-end", o->bf16_layers_at_end,
                  "With --precision fp8 or nvfp4: transformer layers kept in bf16 at the end "
                  "(--num-layers-at-end-in-bf16; default 0)")
      ->check(int_in(0, simulator::Model::kMaxLayers));
  cmd->add_option("--gpu", o->gpu, "GPU preset");
  cmd->add_option("--cluster", o->cluster, "Cluster preset (default dgx-a100-80gb)");
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node")
      ->check(int_in(1, simulator::Cluster::kMaxGpusPerNode));
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "md"}));
  cmd->add_option("--trace", o->trace, "Write a Chrome-trace JSON of the iteration to FILE");
  cmd->add_flag("--task-level", o->task_level,
                "Simulate every kernel as its own task (slower; same result)");
  add_cost_model_flags(cmd, &o->cost);
  cmd->callback([o, &global, action] { *action = [o, &global] { return run_simulate(*o, global); }; });
}

}  // namespace llmplan::planner

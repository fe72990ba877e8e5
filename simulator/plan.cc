#include "simulator/plan.h"

namespace llmplan::simulator {

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::kGpipe: return "gpipe";
    case Schedule::kOneFOneB: return "1f1b";
    case Schedule::kInterleaved: return "interleaved";
    case Schedule::kZbH1: return "zb-h1";
  }
  return "?";
}
const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}
const char* to_string(CpComm c) { return c == CpComm::kP2p ? "p2p" : "all_gather"; }

namespace {

// validate(Plan)'s error for `field`: InvalidArgument "plan.<field>: <why>".
Status bad_plan_field(const char* field, const std::string& why) {
  return Status::invalid_argument(std::string("plan.") + field + ": " + why);
}

// OK when 1 <= v <= max.
Status plan_in_range(const char* field, int64_t v, int64_t max) {
  if (v < 1) return bad_plan_field(field, "must be >= 1, got " + std::to_string(v));
  if (v > max) {
    return bad_plan_field(field, "must be at most " + std::to_string(max) + ", got " +
                                     std::to_string(v));
  }
  return Status();
}

// The degrees, batch sizes and per-field ranges; recomputation and CPU
// offloading.
Status validate_plan_fields(const Plan& p) {
  LLMPLAN_RETURN_IF_ERROR(plan_in_range("tp", p.tensor_parallel, Plan::kMaxGpus));
  LLMPLAN_RETURN_IF_ERROR(plan_in_range("pp", p.pipeline_parallel, Plan::kMaxGpus));
  LLMPLAN_RETURN_IF_ERROR(plan_in_range("dp", p.data_parallel, Plan::kMaxGpus));
  LLMPLAN_RETURN_IF_ERROR(plan_in_range("cp", p.context_parallel, Plan::kMaxGpus));
  LLMPLAN_RETURN_IF_ERROR(plan_in_range("global_batch", p.global_batch_size, Plan::kMaxGlobalBatch));
  LLMPLAN_RETURN_IF_ERROR(plan_in_range("micro_batch", p.micro_batch_size, Plan::kMaxGlobalBatch));
  LLMPLAN_RETURN_IF_ERROR(plan_in_range("virtual_stages", p.virtual_stages, Model::kMaxLayers));
  LLMPLAN_RETURN_IF_ERROR(plan_in_range("ep", p.expert_parallel, Plan::kMaxGpus));
  LLMPLAN_RETURN_IF_ERROR(plan_in_range("etp", p.expert_tensor_parallel, Plan::kMaxGpus));
  if (!(p.moe_imbalance >= 1.0 && p.moe_imbalance <= 64.0)) {
    return bad_plan_field("moe_imbalance", "must be in [1, 64] (tokens on the busiest expert-parallel rank "
                                "over the balanced share), got " + std::to_string(p.moe_imbalance));
  }
  if (p.bf16_layers_at_start < 0 || p.bf16_layers_at_start > Model::kMaxLayers) {
    return bad_plan_field("bf16_layers_at_start", "must be between 0 and " + std::to_string(Model::kMaxLayers));
  }
  if (p.bf16_layers_at_end < 0 || p.bf16_layers_at_end > Model::kMaxLayers) {
    return bad_plan_field("bf16_layers_at_end", "must be between 0 and " + std::to_string(Model::kMaxLayers));
  }
  if (p.grad_bucket_bytes < 0) return bad_plan_field("grad_bucket_bytes", "must not be negative");
  if (p.recompute_modules >= (kRecomputeMlaUpProj << 1)) {
    return bad_plan_field("recompute_modules", "unknown module bit set");
  }
  if (p.recompute_modules != 0 && p.recompute == Recompute::kFull) {
    return bad_plan_field("recompute_modules", "selective recompute modules cannot be combined with full "
                                    "recompute");
  }
  if (p.cpu_offload_layers < 0 || p.cpu_offload_layers > Model::kMaxLayers) {
    return bad_plan_field("cpu_offloading_num_layers",
               "must be between 0 and " + std::to_string(Model::kMaxLayers) + ", got " +
                   std::to_string(p.cpu_offload_layers));
  }
  if (p.cpu_offload_layers > 0) {
    // Megatron-Core's TransformerConfig.__post_init__ refuses CPU offloading
    // with pipeline parallelism and with activation recomputation.
    if (p.pipeline_parallel > 1) {
      return bad_plan_field("cpu_offloading_num_layers",
                 "activation CPU offloading needs pp = 1 (Megatron-Core has no CPU offloading "
                 "with pipeline parallelism)");
    }
    if (p.schedule == Schedule::kZbH1) {
      return bad_plan_field("cpu_offloading_num_layers",
                 "activation CPU offloading is not modelled with the zb-h1 schedule");
    }
    if (p.recompute != Recompute::kNone || p.recompute_modules != 0) {
      return bad_plan_field("cpu_offloading_num_layers",
                 "activation CPU offloading does not work with activation recomputation "
                 "(Megatron-Core)");
    }
  }
  return Status();
}

// ZeRO stage and hybrid sharding.
Status validate_plan_sharding(const Plan& p) {
  if (p.zero_stage < 0 || p.zero_stage > 3) {
    return bad_plan_field("zero_stage", "must be 0, 1, 2 or 3, got " + std::to_string(p.zero_stage));
  }
  if (p.fsdp_group < 0) {
    return bad_plan_field("fsdp_group", "must not be negative, got " + std::to_string(p.fsdp_group));
  }
  if (p.fsdp_group > 0) {
    if (p.sharding_stage() == 0) {
      return bad_plan_field("fsdp_group", "hybrid sharding needs zero_stage >= 1 (or the distributed optimizer)");
    }
    if (p.data_parallel % p.fsdp_group != 0) {
      return bad_plan_field("fsdp_group", "fsdp_group " + std::to_string(p.fsdp_group) +
                                   " does not divide dp = " + std::to_string(p.data_parallel));
    }
  }
  return Status();
}

// The GPU count and the global batch's split into micro-batch passes.
Status validate_plan_batches(const Plan& p) {
  // Each factor is <= 2^20 here, so the products below fit in 64 bits.
  const int64_t tp_pp = static_cast<int64_t>(p.tensor_parallel) * p.pipeline_parallel;
  if (tp_pp > Plan::kMaxGpus || tp_pp * p.data_parallel > Plan::kMaxGpus) {
    return bad_plan_field("dp", "tp * pp * dp = " + std::to_string(tp_pp * p.data_parallel) +
                         " GPUs is more than the limit of " + std::to_string(Plan::kMaxGpus));
  }
  const int64_t world = tp_pp * p.data_parallel * p.context_parallel;
  if (world > Plan::kMaxGpus) {
    return bad_plan_field("cp", "tp * cp * pp * dp = " + std::to_string(world) +
                         " GPUs is more than the limit of " + std::to_string(Plan::kMaxGpus));
  }
  const int64_t per_step = static_cast<int64_t>(p.data_parallel) * p.micro_batch_size;
  if (p.global_batch_size % per_step != 0) {
    return bad_plan_field("global_batch", "global batch " + std::to_string(p.global_batch_size) +
                                   " is not divisible by dp * micro_batch = " +
                                   std::to_string(per_step));
  }
  const int64_t passes = p.global_batch_size / per_step * p.pipeline_parallel * p.virtual_stages;
  if (passes > Plan::kMaxMicroBatchPasses) {
    return bad_plan_field("global_batch", "global batch " + std::to_string(p.global_batch_size) + " makes " +
                                   std::to_string(passes) +
                                   " micro-batch passes per step (micro-batches per replica * pp * "
                                   "virtual_stages), more than the limit of " +
                                   std::to_string(Plan::kMaxMicroBatchPasses) +
                                   "; use a larger micro batch or dp");
  }
  return Status();
}

// The pipeline schedule and its virtual stages.
Status validate_plan_schedule(const Plan& p) {
  if (p.schedule == Schedule::kZbH1 && p.virtual_stages != 1) {
    return bad_plan_field("virtual_stages", "zb-h1 needs virtual_stages = 1, got " +
                                     std::to_string(p.virtual_stages) +
                                     " (the interleaved zero-bubble ZB-V is not modelled)");
  }
  if (p.schedule != Schedule::kInterleaved && p.virtual_stages != 1) {
    return bad_plan_field("virtual_stages", "virtual stages > 1 need the interleaved schedule");
  }
  if (p.schedule == Schedule::kInterleaved) {
    if (p.pipeline_parallel < 2) return bad_plan_field("schedule", "interleaving needs pp >= 2");
    if (p.num_micro_batches() % p.pipeline_parallel != 0) {
      return bad_plan_field("schedule", "interleaved 1F1B needs micro-batches per replica (" +
                                 std::to_string(p.num_micro_batches()) +
                                 ") to be a multiple of pp (" +
                                 std::to_string(p.pipeline_parallel) + ")");
    }
  }
  return Status();
}

}  // namespace

Status validate(const Plan& p) {
  LLMPLAN_RETURN_IF_ERROR(validate_plan_fields(p));
  LLMPLAN_RETURN_IF_ERROR(validate_plan_sharding(p));
  LLMPLAN_RETURN_IF_ERROR(validate_plan_batches(p));
  return validate_plan_schedule(p);
}

namespace {

// Tensor parallelism against the model's heads, FFN and vocabulary (and
// the bf16 layers against its layers).
Status validate_tensor_parallel(const Model& model, const Plan& plan) {
  const int t = plan.tensor_parallel;
  if (model.num_heads % t != 0) {
    return Status::invalid_argument("plan.tp: tensor parallelism " + std::to_string(t) +
                                    " does not divide " + std::to_string(model.num_heads) +
                                    " attention heads");
  }
  if (model.kv_heads() % t != 0) {
    return Status::invalid_argument("plan.tp: tensor parallelism " + std::to_string(t) +
                                    " does not divide " + std::to_string(model.kv_heads()) +
                                    " kv heads");
  }
  // Mamba layers (layers/mamba.h): Megatron-Core splits the Mamba heads
  // and groups over TP; context parallelism for them is not modelled.
  if (model.is_hybrid() && model.layer_pattern.find('M') != std::string::npos) {
    if (model.mamba_heads % t != 0 || model.mamba_groups % t != 0) {
      return Status::invalid_argument("plan.tp: tensor parallelism " + std::to_string(t) +
                                      " does not divide " + std::to_string(model.mamba_heads) +
                                      " mamba heads and " + std::to_string(model.mamba_groups) +
                                      " mamba groups");
    }
    if (plan.context_parallel > 1) {
      return Status::invalid_argument(
          "plan.cp: context parallelism " + std::to_string(plan.context_parallel) +
          " on a model with Mamba layers is not modelled (llmplan models cp only for attention)");
    }
  }
  if (plan.bf16_layers_at_start + plan.bf16_layers_at_end > model.num_layers) {
    return Status::invalid_argument(
        "plan.bf16_layers_at_start + bf16_layers_at_end: " +
        std::to_string(plan.bf16_layers_at_start + plan.bf16_layers_at_end) +
        " bf16 layers, more than the model's " + std::to_string(model.num_layers));
  }
  if (model.num_moe_layers() < model.num_layers && model.ffn_hidden() % t != 0) {
    return Status::invalid_argument("plan.tp: tensor parallelism " + std::to_string(t) +
                                    " does not divide the FFN size " +
                                    std::to_string(model.ffn_hidden()));
  }
  if (model.vocab_size < t) {
    return Status::invalid_argument(
        "plan.tp: tensor parallelism " + std::to_string(t) + " is larger than the vocabulary of " +
        std::to_string(model.vocab_size) + " (every rank holds a slice of the embedding)");
  }
  return Status();
}

// Expert parallelism against the model's experts.
Status validate_expert_parallel(const Model& model, const Plan& plan) {
  const int t = plan.tensor_parallel;
  const int ep = plan.expert_parallel, etp = plan.expert_tensor_parallel;
  if (!model.is_moe()) {
    if (ep > 1) {
      return Status::invalid_argument("plan.ep: expert parallelism " + std::to_string(ep) +
                                      " needs a mixture-of-experts model (this one is dense)");
    }
    if (etp > 1) {
      return Status::invalid_argument("plan.etp: expert tensor parallelism " +
                                      std::to_string(etp) +
                                      " needs a mixture-of-experts model (this one is dense)");
    }
  } else {
    if (model.num_experts % ep != 0) {
      return Status::invalid_argument("plan.ep: " + std::to_string(ep) + " does not divide the " +
                                      std::to_string(model.num_experts) + " experts of the model");
    }
    if (model.moe_ffn_hidden() % etp != 0) {
      return Status::invalid_argument("plan.etp: " + std::to_string(etp) +
                                      " does not divide the expert FFN size " +
                                      std::to_string(model.moe_ffn_hidden()));
    }
    if (model.moe_shared_experts > 0 &&
        static_cast<int64_t>(model.moe_shared_experts) * model.moe_ffn_hidden() % t != 0) {
      return Status::invalid_argument(
          "plan.tp: tensor parallelism " + std::to_string(t) + " does not divide the shared "
          "experts' FFN size " +
          std::to_string(static_cast<int64_t>(model.moe_shared_experts) * model.moe_ffn_hidden()));
    }
    const int64_t stage_ranks =
        static_cast<int64_t>(t) * plan.context_parallel * plan.data_parallel;
    const int64_t expert_ranks = static_cast<int64_t>(ep) * etp;
    if (stage_ranks % expert_ranks != 0) {
      return Status::invalid_argument(
          "plan.ep: ep x etp = " + std::to_string(expert_ranks) + " does not divide the " +
          std::to_string(stage_ranks) +
          " tensor x context x data ranks of a pipeline stage (expert layers fold onto them)");
    }
  }
  return Status();
}

// The uneven layout (plan.h): both ends given, the middle chunks fed.
Status validate_uneven_layout(const Model& model, const Plan& plan, int64_t chunks,
                              bool first_set) {
  const bool last_set = plan.pipeline_last_chunk_layers >= 0;
  const char* field = first_set ? "plan.pipeline_first_chunk_layers"
                                : "plan.pipeline_last_chunk_layers";
  if (!first_set || !last_set) {
    return Status::invalid_argument(
        std::string(field) + ": pipeline_first_chunk_layers and pipeline_last_chunk_layers "
        "are set together, each >= 0 (-1 for neither)");
  }
  if (plan.account_for_embedding_in_pipeline_split || plan.account_for_loss_in_pipeline_split) {
    return Status::invalid_argument(
        std::string(field) + ": the first / last chunk layers and the embedding- / "
        "loss-aware pipeline split are alternatives; set one");
  }
  if (chunks < 2) {
    return Status::invalid_argument(std::string(field) +
                                    ": the first / last chunk layers need pp * "
                                    "virtual_stages >= 2 pipeline chunks");
  }
  const int64_t middle = static_cast<int64_t>(model.num_layers) -
                         plan.pipeline_first_chunk_layers - plan.pipeline_last_chunk_layers;
  if (middle < chunks - 2 || (chunks == 2 && middle != 0)) {
    return Status::invalid_argument(
        std::string(field) + ": " + std::to_string(model.num_layers) + " layers less " +
        std::to_string(plan.pipeline_first_chunk_layers) + " (first chunk) and " +
        std::to_string(plan.pipeline_last_chunk_layers) + " (last chunk) leave " +
        std::to_string(middle) + " for the " + std::to_string(chunks - 2) +
        " middle pipeline chunks (each needs at least one; none with 2 chunks)");
  }
  return Status();
}

// The model's layers over the pipeline chunks; offloading and recompute
// modules against the model.
Status validate_pipeline_split(const Model& model, const Plan& plan) {
  const int64_t chunks = static_cast<int64_t>(plan.pipeline_parallel) * plan.virtual_stages;
  const bool first_set = plan.pipeline_first_chunk_layers >= 0;
  const bool last_set = plan.pipeline_last_chunk_layers >= 0;
  if (first_set || last_set || plan.pipeline_first_chunk_layers < -1 ||
      plan.pipeline_last_chunk_layers < -1) {
    LLMPLAN_RETURN_IF_ERROR(validate_uneven_layout(model, plan, chunks, first_set));
  }
  const int accounted = (plan.account_for_embedding_in_pipeline_split ? 1 : 0) +
                        (plan.account_for_loss_in_pipeline_split ? 1 : 0);
  if (plan.cpu_offload_layers >= model.num_layers) {
    return Status::invalid_argument(
        "plan.cpu_offloading_num_layers: " + std::to_string(plan.cpu_offload_layers) +
        " layers offloaded must be fewer than the model's " + std::to_string(model.num_layers) +
        " (Megatron-Core)");
  }
  if (plan.recomputes(kRecomputeMlaUpProj) && !model.is_mla()) {
    return Status::invalid_argument(
        "plan.recompute_modules: mla_up_proj needs a latent-attention model (kv_lora_rank)");
  }
  if (accounted > 0) {
    // Megatron-Core's embedding- / loss-aware split (plan.h): the layers
    // plus the accounted embedding / loss divide evenly over the chunks, and
    // every middle chunk keeps at least one layer.
    const int64_t units = static_cast<int64_t>(model.num_layers) + accounted;
    const char* field = plan.account_for_embedding_in_pipeline_split
                            ? "plan.account_for_embedding_in_pipeline_split"
                            : "plan.account_for_loss_in_pipeline_split";
    if (units % chunks != 0 || units / chunks < 1 || (chunks == 1 && units - accounted < 1)) {
      return Status::invalid_argument(
          std::string(field) + ": " + std::to_string(model.num_layers) + " layers + " +
          std::to_string(accounted) + " (embedding / loss) = " + std::to_string(units) +
          " do not divide evenly over pp * virtual_stages = " + std::to_string(chunks) +
          " pipeline chunks");
    }
  } else if (!first_set && model.num_layers < chunks) {
    return Status::invalid_argument("plan.pp: " + std::to_string(model.num_layers) +
                                    " layers cannot fill pp * virtual_stages = " +
                                    std::to_string(chunks) + " pipeline chunks");
  }
  return Status();
}

// Sequence and context parallelism against the sequence length.
Status validate_sequence_split(const Model& model, const Plan& plan) {
  const int t = plan.tensor_parallel;
  if (plan.sequence_parallel && model.seq_length % t != 0) {
    return Status::invalid_argument("plan.sequence_parallel: sequence length " +
                                    std::to_string(model.seq_length) +
                                    " is not divisible by tp " + std::to_string(t));
  }
  const int cp = plan.context_parallel;
  if (cp > 1) {
    const int64_t chunks_cp = 2 * static_cast<int64_t>(cp);
    if (model.seq_length % chunks_cp != 0) {
      return Status::invalid_argument(
          "plan.cp: context parallelism " + std::to_string(cp) + " splits each sequence into 2 * cp = " +
          std::to_string(chunks_cp) + " equal chunks (load-balanced causal attention), but the "
          "sequence length " + std::to_string(model.seq_length) + " is not divisible by " +
          std::to_string(chunks_cp));
    }
    if (plan.sequence_parallel && (model.seq_length / cp) % t != 0) {
      return Status::invalid_argument("plan.sequence_parallel: the " +
                                      std::to_string(model.seq_length / cp) +
                                      " tokens per context-parallel rank are not divisible by tp " +
                                      std::to_string(t));
    }
    if (!plan.flash_attention) {
      return Status::invalid_argument(
          "plan.cp: context parallelism needs flash attention (ring attention runs flash-attention "
          "blocks); turn flash_attention on or use cp 1");
    }
  }
  return Status();
}

}  // namespace

Status validate(const Model& model, const Plan& plan) {
  LLMPLAN_RETURN_IF_ERROR(validate(model));
  LLMPLAN_RETURN_IF_ERROR(validate(plan));
  LLMPLAN_RETURN_IF_ERROR(validate_tensor_parallel(model, plan));
  LLMPLAN_RETURN_IF_ERROR(validate_expert_parallel(model, plan));
  LLMPLAN_RETURN_IF_ERROR(validate_pipeline_split(model, plan));
  return validate_sequence_split(model, plan);
}

int layers_in_chunk(const Model& model, const Plan& plan, int chunk) {
  const int chunks = plan.pipeline_parallel * plan.virtual_stages;
  if (plan.pipeline_first_chunk_layers >= 0) {
    if (chunk == 0) return plan.pipeline_first_chunk_layers;
    if (chunk == chunks - 1) return plan.pipeline_last_chunk_layers;
    const int middle =
        model.num_layers - plan.pipeline_first_chunk_layers - plan.pipeline_last_chunk_layers;
    const int m = chunks - 2;  // middle chunks 1 .. chunks - 2
    return middle / m + (chunk - 1 >= m - middle % m ? 1 : 0);
  }
  const int e = plan.account_for_embedding_in_pipeline_split ? 1 : 0;
  const int o = plan.account_for_loss_in_pipeline_split ? 1 : 0;
  if (e + o > 0) {
    const int per_chunk = (model.num_layers + e + o) / chunks;
    return per_chunk - (chunk == 0 ? e : 0) - (chunk == chunks - 1 ? o : 0);
  }
  const int base = model.num_layers / chunks;
  const int extra = model.num_layers % chunks;
  return base + (chunk >= chunks - extra ? 1 : 0);
}

}  // namespace llmplan::simulator

#include "simulator/memory.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "simulator/schedule.h"

namespace llmplan::simulator {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kCudaContextBytes = 0.5 * kGiB;
constexpr double kCublasWorkspaceBytes = 2 * 32 * kMiB;
constexpr double kNcclBytesPerCommunicator = 0.5 * kGiB;
constexpr double kTpOverlapBufferBytes = 0.5 * kGiB;
// ZeRO 2-3's unsharded gradients in flight, in the compute precision.
constexpr double kShardedGradientBytes = 2.0;
}  // namespace

namespace {

// Bytes of the stored copy of a linear GEMM's input: FP8 training keeps the
// inputs of the linear GEMMs (QKV, output projection, FC1, FC2, the expert
// GEMMs) as the fp8 copies their weight-gradient GEMMs read (Transformer
// Engine): 1 byte per element instead of 2. NVFP4 training keeps only the
// columnwise NVFP4 copy the weight-gradient GEMM reads (Transformer Engine's
// _Linear.forward drops the rowwise usage of a quantized input before
// save_for_backward): kNvfp4BytesPerElement.
double gemm_input_bytes(const Plan& plan) {
  switch (plan.precision) {
    case Precision::kFp8: return 1.0;
    case Precision::kNvfp4: return kNvfp4BytesPerElement;
    case Precision::kBf16:
    case Precision::kFp16: return 2.0;
  }
  return 2.0;
}

// FC1 output bytes per FFN unit: SwiGLU's two projections, GeLU's one.
double fc1_output_bytes(const Model& model) {
  return model.activation == Activation::kSwiglu ? 4.0 : 2.0;
}

// Attention (and norms, masks) activations of one layer per token of the
// rank, in units of h bytes: the `replicated` part (split by t only with
// SP) and the `split` part (split by t). `mlp_input` adds the FC1 input of a
// dense MLP to the replicated part.
struct AttentionActivations {
  double replicated = 0;
  double split = 0;
};
AttentionActivations mla_activations(const Model& model, const Plan& plan, bool mlp_input);

AttentionActivations attention_activations(const Model& model, const Plan& plan, bool mlp_input) {
  if (model.is_mla()) return mla_activations(model, plan, mlp_input);
  const double h = model.hidden_size;
  const double q_ratio = static_cast<double>(model.num_heads) * model.head_dim() / h;
  const double kv_ratio = static_cast<double>(model.kv_heads()) * model.head_dim() / h;
  const double gemm_in = gemm_input_bytes(plan);
  AttentionActivations a;
  // Not split by TP (unless SP): both norm inputs (4), the QKV input (and
  // the FC1 input of a dense MLP), the two dropout masks (1 + 1) when
  // dropout is on.
  a.replicated = 4.0 + (mlp_input ? 2.0 : 1.0) * gemm_in + (plan.dropout ? 2.0 : 0.0);
  // Split by TP: Q (2), K and V (2 each), the attention output O = the
  // output projection's input. Fused (flash) attention saves q, k, v, out
  // and the softmax statistics (Transformer Engine
  // transformer_engine/pytorch/attention (FusedAttnFunc.forward:
  // ctx.save_for_backward(q, k, v, out, softmax_lse / aux_ctx_tensors)), all
  // in bf16; the output projection (TE linear.py, _Linear.forward) saves its
  // input: the same tensor as O in bf16, its own fp8 copy in FP8 (2 + 1).
  a.split = 2.0 * q_ratio + 4.0 * kv_ratio + (gemm_in < 2.0 ? 2.0 + gemm_in : 2.0) * q_ratio;
  // The fp32 log-sum-exp per head and token (flash attention's softmax
  // statistics), a d-th of a head's width: 4 a / h bytes per token per h.
  if (plan.flash_attention) a.split += 4.0 * model.num_heads / h;
  return a;
}

// Bytes per parameter saved by a bf16 gradient buffer (Plan::
// grad_reduce_in_fp32 false: Megatron-Core's _ParamAndGradBuffer takes
// grad_dtype bf16 instead of fp32, and Megatron-FSDP's gradient shards are
// bf16): 4 - 2 = 2; 0 with the fp32 default. The fp32 main weights and Adam
// moments (12 bytes) are unchanged.
double bf16_gradient_saving_bytes(const Plan& plan) {
  return plan.grad_reduce_in_fp32 ? 0.0 : 2.0;
}

// Multi-head latent attention (Model::kv_lora_rank; Megatron-Core
// MLASelfAttention with Transformer Engine), per token in units of h bytes.
// Not split by TP (unless SP: the down-projections run on the rank's
// sequence shard): both norm inputs (4), the down-projections' input (one
// bf16 tensor both read; in FP8 each keeps its own quantized copy; with
// q_lora_rank 0 the direct q projection's input instead of q_down's), the
// FC1 input of a dense MLP, the dropout masks, and the latents: the latent
// RMSNorms' inputs (2 (ql + kl)) and the up-projections' inputs (ql + kl
// in the GEMM input format; TE's column-parallel linears save their
// sequence-parallel shard). Split by TP: what fused attention saves (TE
// FusedAttnFunc: q and k of a (qk) columns, v of a v, out of a v, bf16,
// after RoPE and the head assembly, whose inputs are not kept), the output
// projection's input (out, or its fp8 copy too) and the fp32 softmax
// statistics (4 a). The up-projections' outputs are not kept (RoPE and
// the split are linear; Megatron-Core's fused MLA RoPE saves no input).
// DeepSeek-V3 (arXiv:2412.19437 section 3.2.3) recomputes the latent norms
// and up-projections in the backward; Megatron-Core's "mla_up_proj"
// selective recompute is not modelled here.
AttentionActivations mla_activations(const Model& model, const Plan& plan, bool mlp_input) {
  const double h = model.hidden_size, a = model.num_heads;
  const double ql = model.q_lora_rank, kl = model.kv_lora_rank;
  const double qk = model.mla_qk_head_dim(), v = model.v_head_dim;
  const double gemm_in = gemm_input_bytes(plan);
  const double down_inputs = gemm_in < 2.0 ? 2.0 * gemm_in : 2.0;
  AttentionActivations act;
  act.replicated = 4.0 + down_inputs + (mlp_input ? gemm_in : 0.0) + (plan.dropout ? 2.0 : 0.0) +
                   (2.0 + gemm_in) * (ql + kl) / h;
  const double out = (gemm_in < 2.0 ? 2.0 + gemm_in : 2.0) * a * v;
  // Plan::recompute_modules mla_up_proj (Megatron-Core MLASelfAttention's
  // qkv_up_checkpoint, a CheckpointWithoutOutput around the up-projections
  // and RoPE): the q, k, v they produce are freed once core attention has
  // run and rebuilt before its backward, so fused attention's saved q, k, v
  // are not held; the up-projections' inputs (the checkpoint's inputs) are.
  const double qkv = plan.recomputes(kRecomputeMlaUpProj) ? 0.0 : 2.0 * 2.0 * a * qk + 2.0 * a * v;
  act.split = (qkv + out) / h;
  if (plan.flash_attention) act.split += 4.0 * a / h;
  return act;
}

// Tokens of one micro-batch on this rank (s/cp of each sequence).
double rank_tokens(const Model& model, const Plan& plan) {
  return static_cast<double>(plan.micro_batch_size) * model.seq_length / plan.context_parallel;
}

// Tokens an MoE layer's router and dispatcher see on this rank: T / t with
// tensor parallelism (sequence-parallel MoE).
double moe_tokens(const Model& model, const Plan& plan) {
  const double tokens = rank_tokens(model, plan);
  return plan.tensor_parallel > 1 ? tokens / plan.tensor_parallel : tokens;
}

// Rows reaching this rank's experts: k T_moe etp q.
double expert_rows(const Model& model, const Plan& plan) {
  const double q = model.moe_capacity_factor > 0 ? model.moe_capacity_factor : plan.moe_imbalance;
  return model.moe_top_k * moe_tokens(model, plan) * plan.expert_tensor_parallel * q;
}

}  // namespace

double layer_activation_bytes(const Model& model, const Plan& plan) {
  const double s = static_cast<double>(model.seq_length) / plan.context_parallel;
  const double b = plan.micro_batch_size, h = model.hidden_size;
  const double a = model.num_heads, t = plan.tensor_parallel;
  const double f_over_h = static_cast<double>(model.ffn_hidden()) / model.hidden_size;
  const bool sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  if (plan.recompute == Recompute::kFull) return 2.0 * s * b * h / (sp ? t : 1.0);
  const double gemm_in = gemm_input_bytes(plan);
  const AttentionActivations attn = attention_activations(model, plan, /*mlp_input=*/true);
  // Split by TP as well: FC1 output and activation output = FC2 input
  // (GeLU 2f+2f, SwiGLU 4f+2f, per h).
  const double mlp = (fc1_output_bytes(model) + gemm_in) * f_over_h;
  const double split = attn.split + mlp;
  double per_token_h = (sp ? attn.replicated / t : attn.replicated) + split / t;
  const bool keep_scores = plan.recompute == Recompute::kNone && !plan.flash_attention;
  if (keep_scores) per_token_h += 5.0 * a * s / (h * t);
  return s * b * h * per_token_h;
}

double moe_layer_activation_bytes(const Model& model, const Plan& plan) {
  const double s = static_cast<double>(model.seq_length) / plan.context_parallel;
  const double b = plan.micro_batch_size, h = model.hidden_size;
  const double a = model.num_heads, t = plan.tensor_parallel;
  const bool sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  if (plan.recompute == Recompute::kFull) return 2.0 * s * b * h / (sp ? t : 1.0);
  const double gemm_in = gemm_input_bytes(plan);
  const double fe = model.moe_ffn_hidden(), experts = model.num_experts;
  const double etp = plan.expert_tensor_parallel;
  const AttentionActivations attn = attention_activations(model, plan, /*mlp_input=*/false);
  double per_token_h = (sp ? attn.replicated / t : attn.replicated) + attn.split / t;
  const bool keep_scores = plan.recompute == Recompute::kNone && !plan.flash_attention;
  if (keep_scores) per_token_h += 5.0 * a * s / (h * t);
  const double mlp_unit = fc1_output_bytes(model) + gemm_in;  // FC1 out + FC2 in per FFN unit
  // Shared experts: a dense MLP of width n_s f_e, split by t.
  per_token_h += mlp_unit * model.moe_shared_experts * fe / (h * t);
  const double attention_part = s * b * h * per_token_h;
  // Plan::recompute_modules layernorm: the MoE block's norm (Megatron-Core's
  // pre_mlp_layernorm, a TENorm of its own) is checkpointed without its
  // output, so the router's bf16 input (the norm output) is not held.
  const double router_input = plan.recomputes(kRecomputeLayernorm) ? 0.0 : 2.0 * h;
  const double router = moe_tokens(model, plan) * (router_input + 9.0 * experts);
  // Latent MoE: the routed rows are L wide; fc1_latent_proj keeps its input
  // in the GEMM format (the norm output's own bf16 copy when that is the
  // format) and fc2_latent_proj its L-wide input.
  const double w = model.moe_routed_width(), latent = model.moe_latent_size;
  const double latent_inputs =
      latent > 0 ? moe_tokens(model, plan) * ((gemm_in < 2.0 ? gemm_in * h : 0.0) + gemm_in * latent)
                 : 0.0;
  // Plan::recompute_modules moe_act: the routed experts' activation is
  // checkpointed without its output, so FC2's input is not held (rebuilt
  // from FC1's output before FC2's backward). Assumption for FP8 / NVFP4:
  // FC2 keeps no quantized copy of its own either (Megatron-Core's grouped
  // MLP asks Transformer Engine to save the original input when moe_act is
  // recomputed), so the whole g f_e / etp per row goes.
  const double fc2_input = plan.recomputes(kRecomputeMoeAct) ? 0.0 : gemm_in;
  // Model::activation_clamp (GPT-OSS): the clamps keep FC1's output for
  // their backward and the fused activation saves the clamped, concatenated
  // copy (lowering/moe.cc), a second FC1-output-sized tensor; with moe_act
  // recomputed neither is held beyond FC1's output.
  const double clamp_copy = model.activation_clamp > 0 && !plan.recomputes(kRecomputeMoeAct)
                                ? fc1_output_bytes(model)
                                : 0.0;
  const double routed =
      expert_rows(model, plan) *
      (gemm_in * w + (fc1_output_bytes(model) + clamp_copy + fc2_input) * fe / etp + 4.0);
  return attention_part + router + latent_inputs + routed;
}

double hybrid_layer_activation_bytes(const Model& model, const Plan& plan, int layer) {
  const double s = static_cast<double>(model.seq_length) / plan.context_parallel;
  const double b = plan.micro_batch_size, h = model.hidden_size, t = plan.tensor_parallel;
  const bool sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  if (plan.recompute == Recompute::kFull) return 2.0 * s * b * h / (sp ? t : 1.0);
  const double gemm_in = gemm_input_bytes(plan);
  const double tsp = sp ? t : 1.0;
  // One block's own norm input (2), its first GEMM's input and its dropout
  // mask, per token per h: not split by TP unless SP.
  const double block_in = 2.0 + gemm_in + (plan.dropout ? 1.0 : 0.0);
  // A standard dense layer less both blocks' replicated part and the MLP's
  // split part: attention's split part (and kept scores).
  const double standard_in = 4.0 + 2.0 * gemm_in + (plan.dropout ? 2.0 : 0.0);
  const double mlp_split = (fc1_output_bytes(model) + gemm_in) * model.ffn_hidden() / h;
  const double attention_only = layer_activation_bytes(model, plan) +
                                s * b * h * ((block_in - standard_in) / tsp - mlp_split / t);
  switch (model.layer_kind(layer)) {
    case Model::LayerKind::kStandard:
      return model.is_moe_layer(layer) ? moe_layer_activation_bytes(model, plan)
                                       : layer_activation_bytes(model, plan);
    case Model::LayerKind::kAttention: return attention_only;
    case Model::LayerKind::kMlp: return layer_activation_bytes(model, plan) - attention_only;
    case Model::LayerKind::kMoe: return moe_layer_activation_bytes(model, plan) - attention_only;
    case Model::LayerKind::kMamba: break;
  }
  // Mamba-2 mixer (Megatron-Core MambaMixer with mamba_ssm's kernels), split
  // by TP: in_proj's output [z, x, B, C, dt] (kept for the conv1d and the
  // gated norm), the conv1d output (the scan's x, B, C), the scan's output
  // y (the gated norm's input), the fp32 dt and cumulative decay the scan
  // saves (8 H), out_proj's input.
  const double di = model.mamba_inner();
  const double split = 2.0 * model.mamba_in_proj_columns() + 2.0 * model.mamba_conv_channels() +
                       2.0 * di + 8.0 * model.mamba_heads + gemm_in * di;
  return s * b * (h * block_in / tsp + split / t);
}

double moe_buffer_bytes(const Model& model, const Plan& plan) {
  if (!model.is_moe()) return 0.0;
  const double rows = expert_rows(model, plan);
  const double back = model.moe_top_k * moe_tokens(model, plan);
  // With etp > 1 the reduce-scatter's output is a buffer of its own; with
  // etp = 1 FC2's output is what the all-to-all sends.
  const double etp = plan.expert_tensor_parallel;
  const double scattered = etp > 1 ? rows / etp : 0.0;
  return 2.0 * model.moe_routed_width() * (rows + scattered + back);
}

// MLA's GEMMs for the deferred weight-gradient GEMMs (zb-h1), per token: the
// inputs and output gradients of q_down (h, ql), kv_down (h, kl + r), q_up
// (ql or h, a qk / t), kv_up (kl, a (n + v) / t) and o_proj (a v / t, h).
double mla_weight_grad_per_token(const Model& model, const Plan& plan) {
  const double t = plan.tensor_parallel, h = model.hidden_size, a = model.num_heads;
  const double ql = model.q_lora_rank, kl = model.kv_lora_rank, r = model.qk_rope_head_dim;
  const double q_down = ql > 0 ? h + ql : 0.0;
  const double q_up = (ql > 0 ? ql : h) + a * model.mla_qk_head_dim() / t;
  const double kv = (h + kl + r) + (kl + a * (model.qk_nope_head_dim + model.v_head_dim) / t);
  return q_down + q_up + kv + (a * model.v_head_dim / t + h);
}

double layer_weight_grad_bytes(const Model& model, const Plan& plan) {
  const double t = plan.tensor_parallel, h = model.hidden_size;
  const double qkv_cols = static_cast<double>(model.num_heads + 2 * model.kv_heads()) *
                          model.head_dim() / t;
  const double attn_cols = static_cast<double>(model.num_heads) * model.head_dim() / t;
  const double ffn = static_cast<double>(model.ffn_hidden()) / t;
  const double fc1_cols = model.activation == Activation::kSwiglu ? 2.0 * ffn : ffn;
  const double attention = model.is_mla() ? mla_weight_grad_per_token(model, plan)
                                           : (h + qkv_cols) + (attn_cols + h);
  const double per_token = attention + (h + fc1_cols) + (ffn + h);
  return static_cast<double>(model.seq_length) * plan.micro_batch_size * per_token * 2.0;
}

double moe_layer_weight_grad_bytes(const Model& model, const Plan& plan) {
  const double t = plan.tensor_parallel, h = model.hidden_size;
  const double qkv_cols =
      static_cast<double>(model.num_heads + 2 * model.kv_heads()) * model.head_dim() / t;
  const double attn_cols = static_cast<double>(model.num_heads) * model.head_dim() / t;
  const double tokens = static_cast<double>(model.seq_length) * plan.micro_batch_size;
  const bool swiglu = model.activation == Activation::kSwiglu;
  const double shared = static_cast<double>(model.moe_shared_experts) * model.moe_ffn_hidden() / t;
  double per_token = model.is_mla() ? mla_weight_grad_per_token(model, plan)
                                    : (h + qkv_cols) + (attn_cols + h);
  if (shared > 0) per_token += (h + (swiglu ? 2.0 : 1.0) * shared) + (shared + h);
  // The router and the experts see T_moe tokens (T / t) and R rows; here T =
  // s b as above.
  const double moe_tok = t > 1 ? tokens / t : tokens;
  const double router = moe_tok * (h + model.num_experts);
  const double q = model.moe_capacity_factor > 0 ? model.moe_capacity_factor : plan.moe_imbalance;
  const double rows = model.moe_top_k * moe_tok * plan.expert_tensor_parallel * q;
  const double fe = static_cast<double>(model.moe_ffn_hidden()) / plan.expert_tensor_parallel;
  const double w = model.moe_routed_width(), latent = model.moe_latent_size;
  const double routed = rows * ((w + (swiglu ? 2.0 : 1.0) * fe) + (fe + w));
  // Latent MoE's two projections: inputs and output gradients.
  const double projections = latent > 0 ? moe_tok * 2.0 * (h + latent) : 0.0;
  return (tokens * per_token + router + routed + projections) * 2.0;
}

double state_bytes_per_parameter(const Plan& plan) {
  const double shards = plan.shard_ranks();
  const double bf16_grad_saving = bf16_gradient_saving_bytes(plan);
  switch (plan.sharding_stage()) {
    case 0: return 18.0 - bf16_grad_saving;
    case 1: return 6.0 - bf16_grad_saving + 12.0 / shards;
    case 2: return 2.0 + (16.0 - bf16_grad_saving) / shards;
    default: return (16.0 - bf16_grad_saving) / shards;
  }
}

double expert_state_bytes_per_parameter(const Plan& plan) {
  const double shards = std::max(1.0, static_cast<double>(plan.expert_data_parallel()) *
                                          plan.shard_group_size() / plan.data_parallel);
  const double bf16_grad_saving = bf16_gradient_saving_bytes(plan);
  switch (plan.sharding_stage()) {
    case 0:
      return 18.0 - bf16_grad_saving;
    case 1:
      return 6.0 - bf16_grad_saving + 12.0 / shards;
    case 2:
      return 2.0 + (16.0 - bf16_grad_saving) / shards;
    default:
      return (16.0 - bf16_grad_saving) / shards;
  }
}

double expert_parameters_per_device(const Model& model, const Plan& plan) {
  if (!model.is_moe()) return 0.0;
  return static_cast<double>(model.expert_parameters_per_layer()) /
         (static_cast<double>(plan.expert_parallel) * plan.expert_tensor_parallel);
}

double layer_parameters_per_device(const Model& model, const Plan& plan, int layer) {
  const double t = plan.tensor_parallel;
  // MLA's down-projections and latent norms are duplicated on every TP rank.
  double replicated = static_cast<double>(model.mla_replicated_parameters());
  if (!model.is_moe_layer(layer)) {
    return (static_cast<double>(model.layer_parameters(layer)) - replicated) / t + replicated;
  }
  // Latent MoE's projections are duplicated on every TP rank too.
  replicated += static_cast<double>(model.moe_latent_parameters());
  const double dense_part =
      static_cast<double>(model.layer_parameters(layer) - model.expert_parameters_per_layer());
  return (dense_part - replicated) / t + replicated + expert_parameters_per_device(model, plan);
}

double mtp_parameters_per_device(const Model& model, const Plan& plan) {
  if (model.mtp_layers == 0) return 0.0;
  const double h = model.hidden_size, t = plan.tensor_parallel;
  const int chunks = plan.pipeline_parallel * plan.virtual_stages;
  double block = 0;
  for (const int i : model.mtp_block_layers()) block += layer_parameters_per_device(model, plan, i);
  // Once per module with its own weights (Model::mtp_shared_weights).
  double params = model.mtp_weight_copies() * (3.0 * h + 2.0 * h * h / t + block);
  if (chunks > 1) params += static_cast<double>(model.vocab_size) * h / t;
  return params;
}

int first_layer_of_chunk(const Model& model, const Plan& plan, int chunk) {
  const int chunks = plan.pipeline_parallel * plan.virtual_stages;
  if (plan.pipeline_first_chunk_layers >= 0) {
    // The uneven layout (layers_in_chunk): the first chunk's layers, then
    // the middle chunks' even split (the last of them one more each).
    if (chunk == 0) return 0;
    const int middle =
        model.num_layers - plan.pipeline_first_chunk_layers - plan.pipeline_last_chunk_layers;
    const int m = chunks - 2, i = std::min(chunk - 1, m);  // middle chunks before `chunk`
    const int base = m > 0 ? middle / m : 0, extra = m > 0 ? middle % m : 0;
    return plan.pipeline_first_chunk_layers + i * base + std::max(0, i - (m - extra));
  }
  if (plan.account_for_embedding_in_pipeline_split || plan.account_for_loss_in_pipeline_split) {
    // The embedding- / loss-aware split (layers_in_chunk): equal chunks of
    // (l + e + o) / (p v), the first one e layers short.
    const int e = plan.account_for_embedding_in_pipeline_split ? 1 : 0;
    const int o = plan.account_for_loss_in_pipeline_split ? 1 : 0;
    const int per_chunk = (model.num_layers + e + o) / chunks;
    return chunk == 0 ? 0 : chunk * per_chunk - e;
  }
  const int base = model.num_layers / chunks;
  const int extra = model.num_layers % chunks;
  return chunk * base + std::max(0, chunk - (chunks - extra));
}

std::vector<double> stage_parameters_per_device(const Model& model, const Plan& plan) {
  const int p = plan.pipeline_parallel, chunks = p * plan.virtual_stages;
  const double t = plan.tensor_parallel, h = model.hidden_size;
  std::vector<double> out(p, 0.0);
  for (int c = 0; c < chunks; ++c) {
    const int first = first_layer_of_chunk(model, plan, c);
    const int layers = layers_in_chunk(model, plan, c);
    for (int i = first; i < first + layers; ++i) {
      out[c % p] += layer_parameters_per_device(model, plan, i);
    }
  }
  out[0] += static_cast<double>(model.vocab_size) * h / t;
  if (model.positions == PositionEmbedding::kLearned) {
    out[0] += static_cast<double>(model.seq_length) * h;
  }
  out[p - 1] += model.linear_bias ? 2.0 * h : h;
  if (!model.tied_embeddings || chunks > 1)
    out[p - 1] += static_cast<double>(model.vocab_size) * h / t;
  out[p - 1] += mtp_parameters_per_device(model, plan);
  return out;
}

double sharded_working_bytes(const Plan& plan, double layer_parameters, int layers,
                             double root_parameters) {
  const int stage = plan.sharding_stage();
  if (stage < 2) return 0.0;
  const double unsharded = std::min(layers, 2) * layer_parameters + root_parameters;
  // Unsharded gradients in the compute precision (2 bytes), and at stage 3
  // the gathered 2-byte parameters.
  const double bytes_per_parameter =
      stage == 3 ? kShardedGradientBytes + 2.0 : kShardedGradientBytes;
  return unsharded * bytes_per_parameter;
}

double context_parallel_buffer_bytes(const Model& model, const Plan& plan) {
  const int cp = plan.context_parallel;
  if (cp <= 1) return 0.0;
  // K and V columns per token: 2 g d, or MLA's a (qk + v) up-projected ones.
  const double kv_cols = model.is_mla()
                             ? static_cast<double>(model.num_heads) *
                                   (model.mla_qk_head_dim() + model.v_head_dim)
                             : 2.0 * model.kv_heads() * model.head_dim();
  const double chunk = static_cast<double>(plan.micro_batch_size) * (model.seq_length / cp) *
                       kv_cols / plan.tensor_parallel * 2.0;
  return plan.cp_comm == CpComm::kP2p ? 4.0 * chunk : 2.0 * cp * chunk;
}

double framework_buffer_bytes(const Plan& plan) {
  int communicators = 0;
  for (int degree : {plan.tensor_parallel, plan.pipeline_parallel, plan.grad_reduce_ranks(),
                     plan.context_parallel}) {
    if (degree > 1) ++communicators;
  }
  // MoE expert layers (ep x etp > 1, only valid for an MoE model): the
  // expert-parallel all-to-all group, the expert-data-parallel gradient
  // group and, with etp != t, the expert tensor-parallel group are
  // communicators of their own.
  if (static_cast<int64_t>(plan.expert_parallel) * plan.expert_tensor_parallel > 1) {
    if (plan.expert_parallel > 1) ++communicators;
    if (plan.expert_tensor_parallel > 1 && plan.expert_tensor_parallel != plan.tensor_parallel) {
      ++communicators;
    }
    // With etp x ep = t the expert-data-parallel group is the data x
    // context group (counted above).
    const int64_t expert_ranks =
        static_cast<int64_t>(plan.expert_parallel) * plan.expert_tensor_parallel;
    if (plan.expert_data_parallel() > 1 && expert_ranks != plan.tensor_parallel) ++communicators;
  }
  double bytes = kCudaContextBytes + kCublasWorkspaceBytes + communicators * kNcclBytesPerCommunicator;
  if (plan.tp_comm_overlap && plan.tensor_parallel > 1) bytes += kTpOverlapBufferBytes;
  return bytes;
}

std::vector<MemoryBreakdown> stage_memory(const Model& model, const Plan& plan,
                                          const std::vector<double>& stage_parameters,
                                          double extra_reserved_bytes, bool fp8_weight_transpose) {
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const double per_layer = layer_activation_bytes(model, plan);
  Plan full_plan = plan;
  full_plan.recompute = Recompute::kNone;
  const double full_layer = layer_activation_bytes(model, full_plan);
  const double t = plan.tensor_parallel;
  const bool sp = plan.sequence_parallel && plan.tensor_parallel > 1;
  // Tokens of one micro-batch on this rank (s/cp of each sequence).
  const double tokens = rank_tokens(model, plan);
  const double mla_replicated = static_cast<double>(model.mla_replicated_parameters());
  double layer_params =
      (static_cast<double>(model.layer_parameters()) - mla_replicated) / t + mla_replicated;
  const double reserved = framework_buffer_bytes(plan) + extra_reserved_bytes;
  // MoE layers (none in a dense model, whose figures take the dense
  // expressions below unchanged).
  const bool moe = model.is_moe();
  const double moe_per_layer = moe ? moe_layer_activation_bytes(model, plan) : 0.0;
  const double moe_full_layer = moe ? moe_layer_activation_bytes(model, full_plan) : 0.0;
  // A hybrid model's first MoE ('E') layer stands for its MoE layers; its
  // largest other layer for the rest (ZeRO's working unit, bf16 layers).
  int first_moe_layer = model.moe_first_dense;
  if (model.is_hybrid()) {
    const size_t e = model.layer_pattern.find('E');
    first_moe_layer = e == std::string::npos ? 0 : static_cast<int>(e);
    layer_params = 0;
    for (int i = 0; i < model.num_layers; ++i) {
      if (!model.is_moe_layer(i)) {
        layer_params = std::max(layer_params, layer_parameters_per_device(model, plan, i));
      }
    }
  }
  const double moe_layer_params =
      moe ? layer_parameters_per_device(model, plan, first_moe_layer) : 0.0;
  // Hybrid models (Model::layer_pattern): what a chunk's layers store beyond
  // `per_layer` per non-MoE layer and `moe_per_layer` per MoE layer.
  const auto hybrid_extra_in = [&](int chunk, int layers) {
    if (!model.is_hybrid()) return 0.0;
    const int first = first_layer_of_chunk(model, plan, chunk);
    double extra = 0;
    for (int i = first; i < first + layers; ++i) {
      extra += hybrid_layer_activation_bytes(model, plan, i) -
               (model.is_moe_layer(i) ? moe_per_layer : per_layer);
    }
    return extra;
  };
  const double experts_per_layer = expert_parameters_per_device(model, plan);
  // MoE layers among the `layers` layers of chunk `chunk`.
  const auto moe_layers_in = [&](int chunk, int layers) {
    if (!moe) return 0;
    const int first = first_layer_of_chunk(model, plan, chunk);
    int n = 0;
    for (int i = first; i < first + layers; ++i) n += model.is_moe_layer(i) ? 1 : 0;
    return n;
  };
  // The bf16 layers of a low-precision plan (Plan::bf16_layers_at_*) among
  // the `layers` layers of chunk `chunk`, dense and MoE: they keep bf16 GEMM
  // inputs and no quantized weight copies. Their activations differ from
  // per_layer (moe_per_layer) by bf16_extra (moe_bf16_extra) each.
  struct Bf16Layers {
    int dense = 0, moe = 0;
  };
  const auto bf16_layers_in = [&](int chunk, int layers) {
    Bf16Layers n;
    if (!plan.has_bf16_layers()) return n;
    const int first = first_layer_of_chunk(model, plan, chunk);
    for (int i = first; i < first + layers; ++i) {
      if (plan.low_precision_layer(i, model.num_layers)) continue;
      ++(moe && model.is_moe_layer(i) ? n.moe : n.dense);
    }
    return n;
  };
  double bf16_extra = 0, moe_bf16_extra = 0;
  if (plan.has_bf16_layers()) {
    Plan bf16_plan = plan;
    bf16_plan.precision = Precision::kBf16;
    bf16_extra = layer_activation_bytes(model, bf16_plan) - per_layer;
    if (moe) moe_bf16_extra = moe_layer_activation_bytes(model, bf16_plan) - moe_per_layer;
  }
  std::vector<MemoryBreakdown> out(p);
  for (int r = 0; r < p; ++r) {
    MemoryBreakdown& mb = out[r];
    mb.parameters = stage_parameters[r];
    int stage_layers = 0;
    int stage_moe_layers = 0;
    Bf16Layers stage_bf16;  // the stage's bf16 layers
    int first_chunk_in_flight = 0;  // forwards in flight in the stage's first chunk
    int last_chunk_in_flight = 0;   // and in its last chunk (the MTP modules')
    double offload_in_transit = 0;  // the offloaded layer on the GPU (cpu_offload_v1)
    if (plan.schedule == Schedule::kZbH1) {
      // v = 1: the stage's layers hold per_layer per forward in flight and
      // weight_grad per deferred W; the peak of their sum.
      const int layers = layers_in_chunk(model, plan, r);
      const int moe_layers = moe_layers_in(r, layers);
      const double weight_grad = layer_weight_grad_bytes(model, plan);
      stage_layers = layers;
      stage_moe_layers = moe_layers;
      stage_bf16 = bf16_layers_in(r, layers);
      if (moe_layers == 0 && !model.is_hybrid()) {
        const SplitInFlight live = peak_in_flight_split(plan, r, per_layer, weight_grad);
        first_chunk_in_flight = live.forwards;
        mb.activation_bytes =
            layers * (live.forwards * per_layer + live.deferred_weight_grads * weight_grad);
        mb.in_flight_micro_batches = live.forwards + live.deferred_weight_grads;
      } else {
        const int dense_layers = layers - moe_layers;
        const double forward =
            dense_layers * per_layer + moe_layers * moe_per_layer + hybrid_extra_in(r, layers);
        const double deferred =
            dense_layers * weight_grad + moe_layers * moe_layer_weight_grad_bytes(model, plan);
        const SplitInFlight live = peak_in_flight_split(plan, r, forward, deferred);
        first_chunk_in_flight = live.forwards;
        mb.activation_bytes = live.forwards * forward + live.deferred_weight_grads * deferred;
        mb.in_flight_micro_batches = live.forwards + live.deferred_weight_grads;
      }
      mb.activation_bytes += first_chunk_in_flight * (stage_bf16.dense * bf16_extra +
                                                       stage_bf16.moe * moe_bf16_extra);
      last_chunk_in_flight = first_chunk_in_flight;
    } else {
      const std::vector<int> live = peak_in_flight(plan, r);
      for (int c = 0; c < v; ++c) {
        const int layers = layers_in_chunk(model, plan, c * p + r);
        const int moe_layers = moe_layers_in(c * p + r, layers);
        stage_layers += layers;
        stage_moe_layers += moe_layers;
        if (moe_layers == 0) {
          mb.activation_bytes += live[c] * layers * per_layer;
        } else {
          mb.activation_bytes +=
              live[c] * (layers - moe_layers) * per_layer + live[c] * moe_layers * moe_per_layer;
        }
        mb.activation_bytes += live[c] * hybrid_extra_in(c * p + r, layers);
        const Bf16Layers bf16 = bf16_layers_in(c * p + r, layers);
        mb.activation_bytes += live[c] * (bf16.dense * bf16_extra + bf16.moe * moe_bf16_extra);
        stage_bf16.dense += bf16.dense;
        stage_bf16.moe += bf16.moe;
        mb.in_flight_micro_batches += live[c];
      }
      first_chunk_in_flight = live[0];
      last_chunk_in_flight = live[v - 1];
      // Activation CPU offloading (Plan::cpu_offload_layers; validate()
      // holds p = 1, so this is the only stage and layers 0 .. N-1 are its
      // first ones): their stored activations live in host memory, but,
      // with Transformer Engine's handler before its refactor
      // (Plan::cpu_offload_v1), for the layer in transit -- it frees a
      // layer's GPU copy only at a later layer's end and reloads one layer
      // ahead in the backward -- which stays on the GPU: the largest
      // offloaded layer, per micro-batch in flight. The refactored handler
      // finishes layer i's offload before forward layer l - N + i starts
      // and starts its reload after backward layer l - N + i: none of the N
      // is on the GPU at the peak.
      if (plan.cpu_offload_layers > 0) {
        double offloaded = 0, largest = 0;
        const int n = std::min(plan.cpu_offload_layers, model.num_layers);
        for (int i = 0; i < n; ++i) {
          double bytes = model.is_hybrid() ? hybrid_layer_activation_bytes(model, plan, i)
                         : model.is_moe_layer(i) ? moe_per_layer
                                                 : per_layer;
          if (plan.has_bf16_layers() && !plan.low_precision_layer(i, model.num_layers)) {
            bytes += model.is_moe_layer(i) ? moe_bf16_extra : bf16_extra;
          }
          offloaded += bytes;
          largest = std::max(largest, bytes);
        }
        mb.activation_bytes -= live[0] * (plan.cpu_offload_v1 ? offloaded - largest : offloaded);
        if (plan.cpu_offload_v1) offload_in_transit = live[0] * largest;
      }
    }
    // The MTP modules (Model::mtp_layers) on the last stage: each a decoder
    // layer like the model's mtp_layer_like() (MoE when the model has
    // experts) plus its input's stored tensors per micro-batch of the last
    // chunk in flight: the two RMSNorms' inputs (2 h bytes each) and
    // eh_proj's input (2h in the GEMM input format), per sequence shard.
    // Activations are per depth; with shared weights (Model::
    // mtp_shared_weights) the layers' parameters count once. A hybrid
    // model's "*E" block is taken as one MoE layer (attention + MoE).
    if (r == p - 1 && model.mtp_layers > 0) {
      const int n = model.mtp_layers;
      const double input = tokens * model.hidden_size * (4.0 + 2.0 * gemm_input_bytes(plan)) /
                           (sp ? t : 1.0);
      mb.activation_bytes +=
          last_chunk_in_flight * n * ((moe ? moe_per_layer : per_layer) + input);
      const int copies = model.mtp_weight_copies();
      stage_layers += copies * static_cast<int>(model.mtp_block_layers().size());
      stage_moe_layers += copies * model.mtp_block_moe_layers();
    }
    const int stage_dense_layers = stage_layers - stage_moe_layers;
    // This stage's layers' parameters on the device, and its routed experts'.
    double stage_layer_params =
        stage_moe_layers == 0
            ? stage_layers * layer_params
            : stage_dense_layers * layer_params + stage_moe_layers * moe_layer_params;
    if (model.is_hybrid()) {
      stage_layer_params = 0;
      for (int c = 0; c < v; ++c) {
        const int first = first_layer_of_chunk(model, plan, c * p + r);
        const int layers = layers_in_chunk(model, plan, c * p + r);
        for (int i = first; i < first + layers; ++i) {
          stage_layer_params += layer_parameters_per_device(model, plan, i);
        }
      }
    }
    mb.expert_parameters = stage_moe_layers * experts_per_layer;
    if (stage_moe_layers == 0) {
      mb.weights_and_optimizer_bytes = stage_parameters[r] * state_bytes_per_parameter(plan);
    } else {
      // The dense part's state is sharded over the data-parallel group (x
      // cp), the experts' over the expert-data-parallel group.
      const double dense_params = std::max(0.0, stage_parameters[r] - mb.expert_parameters);
      mb.weights_and_optimizer_bytes =
          dense_params * state_bytes_per_parameter(plan) +
          mb.expert_parameters * expert_state_bytes_per_parameter(plan);
    }
    // The root unit: what the stage holds besides its layers (embedding,
    // positions, final norm, output head).
    const double root = std::max(0.0, stage_parameters[r] - stage_layer_params);
    // FP8: Transformer Engine caches each layer weight's fp8 copy and its
    // transpose across the micro-batches of a step (2 bytes per layer
    // parameter, routed experts included: the grouped GEMMs keep theirs);
    // at ZeRO-3 they are cast per layer after the gather (in the working
    // set's gathered layer). With the distributed optimizer (stage 1) the
    // weights themselves are fp8 (fp8_param_gather, NVIDIA's FP8 recipes):
    // data + transpose replace the bf16 weight, nothing is added.
    //
    // NVFP4: the cached copies are a rowwise and a columnwise NVFP4 weight
    // (2 x kNvfp4BytesPerElement per layer parameter) at ZeRO 0-2: the
    // weights stay bf16, as Megatron-Bridge has no FP4 parameters
    // (bf16_with_nvfp4_mixed sets fp8_param_gather False; Megatron-Bridge
    // src/megatron/bridge/training/mixed_precision.py refuses fp4_param);
    // at ZeRO-3 cast per layer after the gather, like FP8.
    // The bf16 layers of Plan::bf16_layers_at_* have no quantized copy.
    const int stage = plan.sharding_stage();
    const double quantized_params = stage_layer_params - stage_bf16.dense * layer_params -
                                    stage_bf16.moe * moe_layer_params;
    if (plan.precision == Precision::kFp8 && (stage == 0 || stage == 2)) {
      mb.weights_and_optimizer_bytes += 2.0 * quantized_params;
    }
    // Blackwell, FP8 tensor scaling (stage_memory's fp8_weight_transpose
    // false): no transposed copy, one byte less per layer parameter -- at
    // ZeRO-1 the fp8 weight is 1 byte against the bf16 2 it replaces.
    if (plan.precision == Precision::kFp8 && plan.fp8_recipe != Fp8Recipe::kMxfp8 &&
        !fp8_weight_transpose && stage <= 2) {
      mb.weights_and_optimizer_bytes -= quantized_params;
    }
    if (plan.precision == Precision::kNvfp4 && stage <= 2) {
      mb.weights_and_optimizer_bytes += 2.0 * kNvfp4BytesPerElement * quantized_params;
    }
    // ZeRO 2-3 work on the stage's largest layer unit (an MoE layer, if any).
    mb.sharded_working_bytes = sharded_working_bytes(
        plan, stage_moe_layers == 0 ? layer_params : std::max(layer_params, moe_layer_params),
        stage_layers, root);
    // ZeRO 2-3 with one pipeline stage: the word embedding's gradient is not
    // in the working set at the peak (sharded_working_bytes' root counts one
    // for every root parameter). The peak is at the turn from the forward to
    // the backward; the embedding's weight gradient is the backward's last
    // product, made after every layer's backward has freed its stored
    // activations, and -- as sharded_working_bytes already takes it -- each
    // micro-batch's gradients are reduce-scattered after its backward:
    // Megatron-FSDP reduces them "every bprop" under optim_grads and
    // optim_grads_params, the embedding's in its root post-backward hook
    // (it has no input that requires a gradient, so no per-module hook;
    // NVIDIA/Megatron-LM megatron/core/distributed/fsdp/src/megatron_fsdp/
    // megatron_fsdp.py, _register_fsdp_hooks: _post_backward,
    // _register_post_backward_hook, _root_post_backward). Its gathered
    // weight stays: Megatron-FSDP gathers a non-unit module's parameters in
    // its forward pre-hook and releases only the FSDP units' (the default
    // unit is the TransformerLayer) after their forward. With tied
    // embeddings the output layer's gradient is the same tensor, made at the
    // start of the backward; the MTP modules look the embedding up at the
    // forward's end, so their backward makes its gradient at the start too:
    // both keep it.
    if (stage >= 2 && p == 1 && !model.tied_embeddings && model.mtp_layers == 0) {
      double embedding = static_cast<double>(model.vocab_size) * model.hidden_size / t;
      if (model.positions == PositionEmbedding::kLearned) {
        embedding += static_cast<double>(model.seq_length) * model.hidden_size;
      }
      mb.sharded_working_bytes -= kShardedGradientBytes * std::min(embedding, root);
    }
    // Megatron-FSDP with FP8 parameters (ZeRO-3, FP8 delayed or current
    // scaling, Plan::fp8_param_gather; dense models): the transformer layers'
    // weights are Transformer Engine Float8Tensors, held in Megatron-FSDP's
    // weight buffer as uint8 -- sharded and gathered at 1 byte a parameter
    // instead of bf16's 2 -- with bf16 gradients (ParamAndGradBuffer.
    // _init_each_parameter_group_buffers: is_dtype_float8 gives param_dtype
    // torch.uint8 and grad_dtype torch.bfloat16; NVIDIA/Megatron-LM
    // megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py).
    // Megatron-Bridge's FP8 current-scaling recipe sets fp8_param_gather True
    // (src/megatron/bridge/training/mixed_precision.py,
    // bf16_with_fp8_current_scaling_mixed) and its performance scripts keep
    // it with Megatron-FSDP (scripts/performance/utils/overrides.py,
    // set_megatron_fsdp_overrides, changes only keep_fp8_transpose_cache to
    // False, average_in_collective and the meta-device init). The gathered
    // layers (fsdp_double_buffer: two buffers of each kind, FixedPoolAllocator)
    // hold the fp8 data, plus its transpose on GPUs whose FP8 GEMMs need one
    // (fp8_weight_transpose: Hopper; made after the gather and dropped after
    // use, keep_fp8_transpose_cache False) -- 1 or 2 bytes instead of 2. The
    // bf16 layers (Plan::bf16_layers_at_*) stay bf16 parameters; the root
    // (embedding, output layer, norms) is not a Transformer Engine module and
    // stays bf16. Memory only: the per-layer gathers' time in the lowering
    // still moves 2 bytes a parameter.
    if (stage == 3 && !moe && !model.is_hybrid() && plan.precision == Precision::kFp8 &&
        plan.fp8_recipe != Fp8Recipe::kMxfp8 && plan.fp8_param_gather) {
      mb.weights_and_optimizer_bytes -= quantized_params / plan.shard_ranks();
      const int gathered = std::min(stage_layers, 2);
      const int gathered_fp8 = gathered - std::min(gathered, stage_bf16.dense);
      mb.sharded_working_bytes -=
          gathered_fp8 * layer_params * (fp8_weight_transpose ? 0.0 : 1.0);
    }
    // The embedding's output is the first layer's input, stored by that
    // layer's first norm (counted in layer_activation_bytes); the embedding's
    // backward reads only the token ids (torch.nn.functional.embedding).
    // With dropout the first stage also keeps the embedding dropout's 1-byte
    // mask per in-flight micro-batch of its first chunk (Korthikanti et al.
    // 2022, section 4.3: s b h p / t with SP; Megatron-Core
    // LanguageModelEmbedding.forward, embedding_dropout).
    if (r == 0 && plan.dropout) {
      mb.activation_bytes += first_chunk_in_flight * tokens * model.hidden_size / (sp ? t : 1.0);
    }
    if (plan.recompute == Recompute::kFull) {
      mb.recompute_bytes = stage_moe_layers == 0     ? full_layer
                           : stage_dense_layers == 0 ? moe_full_layer
                                                     : std::max(full_layer, moe_full_layer);
    }
    // mla_up_proj recompute: one layer's q, k, v rebuilt for its backward.
    if (plan.recomputes(kRecomputeMlaUpProj) && model.is_mla()) {
      const double a = model.num_heads;
      mb.recompute_bytes = std::max(
          mb.recompute_bytes,
          tokens * 2.0 * (2.0 * a * model.mla_qk_head_dim() + a * model.v_head_dim) / t);
    }
    mb.context_parallel_bytes = context_parallel_buffer_bytes(model, plan);
    if (stage_moe_layers > 0) mb.moe_buffer_bytes = moe_buffer_bytes(model, plan);
    if (r == p - 1) {
      // Logits in bf16 plus their fp32 copy for the loss, one micro-batch;
      // a fused cross-entropy keeps the bf16 logits only.
      mb.logits_bytes = tokens * model.vocab_size / t * (plan.fused_cross_entropy ? 2.0 : 6.0);
      // Each MTP module's logits are kept for its loss's backward as well.
      mb.logits_bytes *= 1 + model.mtp_layers;
    }
    // The earlier offload handler's layer in transit and the logits are not
    // on the GPU at once. Transformer Engine's AsyncDoubleBufferGroupOffload
    // Handler (cpu_offload.py before pull request 1762, cpu_offload_v1.py
    // since: NVIDIA/TransformerEngine@047883f3e587, synchronize_on_group_
    // commit_forward and on_group_commit_backward; Megatron-Core leaves its
    // double_buffering off by default) frees offloaded group i's GPU copy at the commit of forward
    // layer layer_window_map[i] and reloads it at that layer's backward
    // commit; the last group's window is the model's last layer (l - 1 for
    // any N < l: (l / N) N - 1 plus the l % N spread over the first groups).
    // Megatron-Core commits after each layer of its TransformerBlock, so the
    // last offloaded layer leaves before the final norm, output layer and
    // loss run, and comes back after their backward has freed the logits:
    // the peak holds the larger of the two, not both.
    if (offload_in_transit > 0) {
      mb.activation_bytes -= std::min(offload_in_transit, mb.logits_bytes);
    }
    mb.fragmentation_bytes =
        kAllocatorFragmentation *
        (mb.activation_bytes + mb.recompute_bytes + mb.logits_bytes + mb.sharded_working_bytes +
         mb.context_parallel_bytes + mb.moe_buffer_bytes);
    mb.reserved_bytes = reserved;
  }
  return out;
}

}  // namespace llmplan::simulator

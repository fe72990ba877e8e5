// Per-device memory of a training plan (DESIGN.md section 4).
//
// The peak of one device of pipeline stage r is the sum of
//   training state     parameters x state_bytes_per_parameter(plan) (ZeRO stage);
//                      fp8 at ZeRO-0 and 2: + 2 bytes per layer parameter (the
//                      cached fp8 weight and its transpose, TE's
//                      module/base.py weight workspaces kept across the
//                      micro-batches of a step). At ZeRO-1 (Megatron-Core's
//                      distributed optimizer) the FP8 recipes
//                      NVIDIA ships keep the weights in fp8 instead of bf16
//                      (fp8_param_gather = True in NeMo 2's
//                      nemo/collections/llm/recipes/precision/mixed_precision.py
//                      bf16_with_fp8_mixed and Megatron-Bridge's
//                      src/megatron/bridge/training/mixed_precision.py; the
//                      parameters are TE Float8Tensors, fp8_model_init):
//                      1-byte data + 1-byte transpose replace the 2-byte bf16
//                      weight, +0; the fp32 main copy is the optimizer's.
//                      nvfp4 at ZeRO 0-2: + 2 x 0.5625 bytes per layer
//                      parameter (rowwise and columnwise NVFP4 copies with
//                      their E4M3 scales; the weights stay bf16: Megatron-
//                      Bridge has no FP4 parameters); the bf16 layers of
//                      Plan::bf16_layers_at_start / _end have no copies and
//                      keep bf16 GEMM inputs
//   sharding working   stage 2-3: unsharded gradients in flight; stage 3 also
//                      the gathered parameters (sharded_working_bytes)
//   activations        stored activations of the in-flight micro-batches
//                      (fp8: the linear GEMMs' inputs kept as 1-byte copies;
//                      nvfp4: as their columnwise NVFP4 copies, 0.5625 bytes);
//                      the embedding's output is the first layer's input (no
//                      separate term); with dropout the first stage keeps
//                      the embedding dropout mask (1 byte per element) per
//                      in-flight micro-batch of its first chunk. In-flight
//                      counts come from the schedule (schedule.h): Megatron-
//                      Core's interleaved 1F1B runs (p - r - 1) x 2 +
//                      (v - 1) x p warm-up forwards of 1/v of the stage's
//                      layers each (megatron/core/pipeline_parallel/
//                      schedules.py, forward_backward_pipelining_with_
//                      interleaving: num_warmup_microbatches), one more at
//                      the peak: stage 0 holds p + (p - 1)/v stages' worth,
//                      Korthikanti et al. 2022's (1 + (p - 1)/(p v)) x p
//                      (layer_activation_bytes x layers x peak_in_flight;
//                      zb-h1 also layer_weight_grad_bytes x layers per
//                      micro-batch whose W is deferred, at the joint peak)
//   recompute          full recompute: one layer's activations rebuilt;
//                      recompute_modules mla_up_proj: one layer's q, k, v
//   CPU offloading     Plan::cpu_offload_layers: the first N layers'
//                      activations are in host memory, but for the largest
//                      of them (the layer in transit) with Transformer
//                      Engine's handler before its refactor
//                      (Plan::cpu_offload_v1); see stage_memory
//   recompute modules  Plan::recompute_modules layernorm, moe_act and
//                      mla_up_proj drop the MoE norm's output, the experts'
//                      FC2 input and MLA's q, k, v (the functions below)
//   context parallel   cp > 1: the KV exchange buffers of one layer
//                      (context_parallel_buffer_bytes)
//   MoE buffers        MoE stage: the dispatch / combine buffers of one MoE
//                      layer (moe_buffer_bytes)
//   logits             last stage: one micro-batch's logits and loss
//   fragmentation      caching-allocator slack, a fraction of the dynamic part
//   reserved           CUDA context, cuBLAS and NCCL buffers
//                      (framework_buffer_bytes) plus any extra reserve.
// The capacity it is compared with is the memory CUDA reports (GpuSpec::
// hbm_bytes: 81,559 MiB on an H100 80GB, presets/gpus.json), from which the
// reserved term's CUDA context is taken.
// Every figure is a formula of the model and plan, stated below with its
// source; nothing is fitted. data/h100/published_runs.csv's dense BF16 runs
// (which all ran on 80 GB H100s) are all predicted to fit (tests check the
// tightest of them); so does Qwen3-235B-A22B on its published layout.
//
// Mixture-of-experts layers (Model::is_moe_layer) differ in these places:
//  - the routed experts' parameters on a device are
//    expert_parameters_per_layer() / (ep x etp) per MoE layer (the dense part
//    of the layer -- attention, norms, router, shared experts -- is split by
//    t as a dense layer); their gradients and optimizer state are sharded by
//    ZeRO over the expert-data-parallel group edp (Megatron-Core's distributed
//    optimizer shards expert state over EDP, not d x cp):
//    expert_state_bytes_per_parameter; FP8's cached weight copies cover the
//    experts too;
//  - an MoE layer stores moe_layer_activation_bytes per micro-batch;
//  - the dispatch / combine all-to-all buffers of one MoE layer are live at
//    the peak (moe_buffer_bytes);
//  - the expert groups (ep, edp, etp) have NCCL communicators of their own
//    (framework_buffer_bytes).
// A dense model gives exactly the figures it gave before MoE existed.
#ifndef LLMPLAN_SIMULATOR_MEMORY_H_
#define LLMPLAN_SIMULATOR_MEMORY_H_

#include <cstdint>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::simulator {

// Bytes held by one device of one pipeline stage at its peak.
struct MemoryBreakdown {
  double parameters = 0;          // parameters held (count, not bytes)
  double expert_parameters = 0;   // MoE: routed-expert parameters among `parameters`
  double weights_and_optimizer_bytes = 0;  // weights + grads + Adam state (sharded by ZeRO)
  double sharded_working_bytes = 0;  // ZeRO 2-3: unsharded grads in flight, gathered params
  double activation_bytes = 0;    // stored activations of in-flight micro-batches
  double recompute_bytes = 0;     // one layer's full activations while recomputing
  double context_parallel_bytes = 0;  // cp > 1: KV exchange buffers of one layer
  double moe_buffer_bytes = 0;        // MoE: dispatch / combine buffers of one MoE layer
  double logits_bytes = 0;        // last stage: logits and loss of one micro-batch
  double fragmentation_bytes = 0; // caching-allocator fragmentation of the dynamic part
  double reserved_bytes = 0;      // CUDA context, NCCL and cuBLAS workspaces (+ extra)
  int in_flight_micro_batches = 0;  // at the peak (zb-h1: forwards + deferred W's)
  double total_bytes() const {
    return weights_and_optimizer_bytes + sharded_working_bytes + activation_bytes +
           recompute_bytes + context_parallel_bytes + moe_buffer_bytes + logits_bytes +
           fragmentation_bytes + reserved_bytes;
  }
};

// Activations one layer stores for one micro-batch on one device, bytes.
// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", section 4 and Table 2 (s sequence, b micro-batch,
// h hidden, a heads, t tensor parallel):
//   no parallelism            s b h (34 + 5 a s / h)
//   tensor parallel           s b h (10 + 24/t + 5 a s / (h t))
//   tensor + sequence par.    s b h (34/t + 5 a s / (h t))
//   selective recompute       drops the 5 a s / h term (the s x s scores)
//   full recompute            2 s b h (the layer input; / t with SP)
// Flash attention (Dao et al. 2022) keeps no s x s scores either: no 5 a s/h
// term. Generalised to GQA and any FFN size/activation (the 34 is 4 LN + 11
// attention + 19 MLP for f = 4h GeLU; 32 without dropout, whose two 1-byte
// masks go with plan.dropout = false). What Megatron-Core with Transformer
// Engine saves, per layer (pre-norm GPT layer, TE modules):
//  - TELayerNormColumnParallelLinear (QKV, FC1; TE
//    module/layernorm_linear.py, _LayerNormLinear.forward save_for_backward):
//    the norm's input (bf16, 2 h), its fp32 mean / rstd (per token,
//    negligible) and the normalised input ln_out, the GEMM's input (2 h
//    bf16, 1 h fp8, 0.5625 h nvfp4: saved as the quantized copy): 4 + 2 g
//    per layer for the
//    two norm-linears, one copy of each normalised input;
//  - core attention (TE attention FusedAttnFunc.forward: q, k, v, out,
//    the fp32 softmax log-sum-exp and the RNG state): Q, K, V, O in bf16
//    and 4 a / h per token for the statistics; the output projection
//    (TERowParallelLinear, module/linear.py _Linear.forward) saves its input:
//    O itself in bf16, its fp8 copy in FP8 (O costs 2 + 1 then);
//  - MLP: FC1's output, the activation's input (Megatron-Core
//    fusions/fused_bias_swiglu.py / fused_bias_gelu.py save their input:
//    2 f bytes GeLU, 4 f SwiGLU), and FC2's input (TERowParallelLinear:
//    the activation output, 2 f bf16, f fp8);
//  - dropout masks (1 byte each after attention and MLP) only with dropout.
// K and V scale with kv_heads/heads,
// the MLP stores 4f/h (GeLU: FC1 output + activation output) or 6f/h
// (SwiGLU: two projections + the gated product). With context parallelism
// a rank holds s/cp tokens of each sequence: s becomes s/cp throughout (the
// K and V it stores are its own chunk's; ring attention keeps no gathered
// KV between forward and backward). With an explicit head_dim (Qwen3,
// GPT-OSS) Q, the output projection's input and K, V scale with
// heads x head_dim / h and kv_heads x head_dim / h instead of 1 and
// kv_heads / heads (the same numbers when head_dim = h / heads).
// This is a dense layer (ffn_hidden()), whatever the model's experts.
double layer_activation_bytes(const Model& model, const Plan& plan);

// Activations one MoE layer stores for one micro-batch on one device, bytes.
// T = s b / cp tokens of the micro-batch on the rank; T_moe = T / t when
// t > 1 (Megatron-Core runs MoE with sequence parallelism: the router and
// the dispatcher see the rank's 1/t of the tokens); R = k T_moe etp q rows
// reach the rank's experts (the all-to-all over ep brings k T_moe rows on
// average, the all-gather over etp multiplies them by etp; q = the capacity
// factor c when c > 0 -- experts padded to capacity -- else
// plan.moe_imbalance, the busiest rank's share). With f_e =
// moe_ffn_hidden(), E experts, top-k k, g = 1 byte in FP8, 0.5625 in NVFP4
// (the GEMM inputs' quantized copies), else 2:
//   attention and norms   as layer_activation_bytes without the MLP: both
//                         norm inputs (4 h), the QKV input (g h), dropout
//                         masks (2 h), Q, K, V, the output projection's
//                         input (split by t), per token of T
//   router                T_moe (2 h + 4 E + E + 4 E): its input (bf16, read
//                         by the router GEMM's weight gradient), the fp32
//                         scores (softmax / sigmoid output, read by their
//                         backward and the aux loss), the routing map (1
//                         byte per token and expert) and the permutation's
//                         row map (int32 per token and expert)
//   routed experts        R (g h + (2 c_1 + g) f_e / etp + 4): FC1's input
//                         (the permuted tokens, as the grouped GEMM keeps
//                         them), FC1's output (c_1 = 2 projections SwiGLU,
//                         1 GeLU, 2 bytes each), the activation output = FC2's
//                         input, and the fp32 routing probability per row
//                         (Megatron-Core >= 0.12 applies the probabilities in
//                         the activation, so FC2's output is not kept and the
//                         unpermute stores only indices)
//   shared experts        T (2 c_1 + g) n_s f_e / t: a dense MLP of width
//                         n_s f_e on every token (its input is the router's)
// Full recompute keeps only the layer input (2 T h, / t with SP), as a dense
// layer; selective recompute drops the attention scores as for a dense layer
// (none with flash attention).
double moe_layer_activation_bytes(const Model& model, const Plan& plan);

// Activation bytes layer `layer` of a hybrid model (Model::layer_pattern)
// stores per micro-batch: an attention-only ('*'), MLP-only ('-') or
// MoE-only ('E') layer its block's share of layer_activation_bytes /
// moe_layer_activation_bytes (one norm input, its block's tensors); a Mamba
// layer ('M') its norm input, in_proj input and dropout mask (split by t
// only with SP) and, split by t, in_proj's output, the conv1d's output, the
// scan's output, the scan's fp32 dt and decay (8 H bytes) and out_proj's
// input. Full recomputation: the layer input only. A standard layer:
// layer_activation_bytes or moe_layer_activation_bytes. Deferred weight
// gradients (zb-h1) and bf16 layers of hybrid models are costed as for the
// standard layers (an approximation).
double hybrid_layer_activation_bytes(const Model& model, const Plan& plan, int layer);

// The transient dispatch / combine buffers of the MoE layer being computed,
// on one device, bytes (0 for a dense model). At the combine of a forward
// (and the matching dispatch of the gradient in the backward) the rank
// holds FC2's output (R rows), with etp > 1 the all-to-all's send buffer
// after the etp reduce-scatter (R / etp rows; with etp = 1 FC2's output is
// sent as it is) and the all-to-all's receive buffer (k T_moe rows), each h
// wide in bf16: 2 h (R + [etp > 1] R / etp + k T_moe), with R and T_moe as
// in moe_layer_activation_bytes.
double moe_buffer_bytes(const Model& model, const Plan& plan);

// What one layer keeps for one micro-batch between its B (input gradient)
// and its deferred W (weight gradient) under zb-h1, bytes: the operands of
// the four weight-gradient GEMMs dW = X^T dY, each input X and output
// gradient dY in the compute precision (2 bytes), as the GEMM reads them
// (sequence-parallel inputs gathered, so W needs no communication):
//   QKV      X: h            dY: (a + 2g) d / t
//   out-proj X: a d / t      dY: h
//   FC1      X: h            dY: f / t (2f / t SwiGLU)
//   FC2      X: f / t        dY: h
// elements per token, times s b. For a GPT layer (g = a, f = 4h) at t = 1
// that is 32 s b h, against 34 s b h (+ 5 a s^2 b without flash attention)
// for the whole layer: W frees little, which is why ZB-H1 keeps the number
// of in-flight micro-batches of 1F1B's first stage (schedule.h). The
// LayerNorm weight gradients are folded into the B pass. Independent of the
// recompute setting: the recomputed forward is what B and W consume, so with
// full recomputation (2 s b h stored per layer) the deferred W's dominate
// and zb-h1 needs more memory than 1F1B.
double layer_weight_grad_bytes(const Model& model, const Plan& plan);

// The same for one MoE layer: QKV and output projection as above, the
// router (X: h, dY: E on T_moe tokens), the shared experts (as FC1/FC2 of
// width n_s f_e / t) and the routed experts' grouped GEMMs on the R rows of
// moe_layer_activation_bytes (FC1 X: h, dY: f_e / etp, 2 f_e / etp SwiGLU;
// FC2 X: f_e / etp, dY: h).
double moe_layer_weight_grad_bytes(const Model& model, const Plan& plan);

// Bytes of weights, gradients and optimizer state per parameter, per device,
// by ZeRO stage (Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward
// Training Trillion Parameter Models", section 5: 2 + 2 + K bytes with K = 12
// for mixed-precision Adam). Megatron keeps fp32 main gradients, so the
// unsharded figure is 2 (bf16 weight) + 4 (fp32 gradient) + 12 (fp32 master
// weight, Adam m and v) = 18. The gradients are fp32: Megatron-LM's
// megatron/training/arguments.py sets accumulate_allreduce_grads_in_fp32 for
// bf16 unless --grad-reduce-in-bf16, NeMo 2's and Megatron-Bridge's
// bf16_mixed set grad_reduce_in_fp32 = True, and the distributed optimizer's
// contiguous grad buffer takes that dtype (megatron/core/distributed/
// param_and_grad_buffer.py, _ParamAndGradBuffer: grad_dtype); the bf16
// parameters live in the param buffer beside it. With S = plan.shard_ranks() (the data-
// parallel shard group times cp):
//   stage 0   18
//   stage 1   6 + 12/S      (optimizer state sharded: distributed optimizer)
//   stage 2   2 + 16/S      (gradients too, as fp32 shards: FSDP SHARD_GRAD_OP
//                            keeps the bf16 weights whole)
//   stage 3   16/S          (parameters too: FSDP FULL_SHARD keeps only fp32
//                            shards -- parameter 4, gradient 4, Adam 8 -- and
//                            casts to bf16 when it gathers; ZeRO-3's
//                            (2 + 2 + 12)/S. The bf16 weights exist only in
//                            the working set below.)
// Stages 2 and 3 also hold an unsharded working set: sharded_working_bytes.
// Megatron-FSDP's FP8 parameters (stage 3, FP8 delayed or current scaling,
// Plan::fp8_param_gather, dense models; stage_memory) hold the transformer
// layers' weight shard in fp8: 1 byte instead of 2 per layer parameter, /S.
// With bf16 gradients (Plan::grad_reduce_in_fp32 false, as the Megatron-
// Bridge performance recipes run) the gradient takes 2 bytes instead of 4:
// 16, 4 + 12/S, 2 + 14/S, 14/S.
double state_bytes_per_parameter(const Plan& plan);

// The same for routed-expert parameters: the stage formulas above with S =
// the expert-data-parallel group edp = plan.expert_data_parallel() (times
// fsdp_group / d under hybrid sharding, at least 1), over which
// Megatron-Core's distributed optimizer shards expert state (ZeRO 2-3 shard
// expert gradients and parameters over the same group).
// REQUIRES: validate(model, plan).ok() for an MoE model.
double expert_state_bytes_per_parameter(const Plan& plan);

// Parameters of layer `layer` (0-based, global) on one device: a dense
// layer's layer_parameters() / t; an MoE layer's dense part (attention,
// norms, router, shared experts) / t plus its routed experts /
// (ep x etp); MLA's down-projections and latent MoE's projections are
// whole on every TP rank.
double layer_parameters_per_device(const Model& model, const Plan& plan, int layer);
// The MTP modules' parameters on a last-stage device (Model::mtp_layers):
// per module with its own weights (Model::mtp_weight_copies()) its input
// norms (3h, duplicated), eh_proj (2h^2 / t) and its decoder block
// (layer_parameters_per_device of each of mtp_block_layers()); with
// more than one chunk the stage's own copy of the word embeddings' V h / t
// for the modules' lookups. 0 without MTP.
double mtp_parameters_per_device(const Model& model, const Plan& plan);

// Routed-expert parameters of one MoE layer on one device:
// expert_parameters_per_layer() / (ep x etp) (0 for a dense model).
double expert_parameters_per_device(const Model& model, const Plan& plan);

// Parameters held by one device of each pipeline stage, as the lowering
// counts them (its layers by layer_parameters_per_device; the embedding on
// the first chunk, / t, + learned positions; the final norm and, untied or
// with p x v > 1 chunks, the output projection / t on the last chunk).
// REQUIRES: validate(model, plan).ok().
std::vector<double> stage_parameters_per_device(const Model& model, const Plan& plan);

// The first layer (0-based, global) of pipeline chunk `chunk` (chunks hold
// layers_in_chunk consecutive layers, in chunk order).
int first_layer_of_chunk(const Model& model, const Plan& plan, int chunk);

// The unsharded working set of ZeRO stages 2 and 3 on one device, bytes. The
// parameters are gathered and the gradients reduce-scattered one unit at a
// time (FSDP wraps each transformer layer; the rest -- embedding, final norm,
// head -- is the root unit, which stays gathered for the whole step and whose
// gradient is reduced once at the end of the backward). At the peak two layer
// units are live: the current one and the prefetched (forward) or the one
// whose gradient is still being reduce-scattered (backward).
//   stage 2   (2 layers + root) x 2            (unsharded bf16 gradients)
//   stage 3   (2 layers + root) x (2 + 2)      (+ gathered bf16 parameters)
// with the layer and root sizes of this stage per device (gradients are
// produced and reduce-scattered in the compute precision, then accumulated
// into the fp32 shard: ZeRO's 2-byte gradients, FSDP's reduce_dtype bf16). 0 for stages 0 and 1 (their gradients are counted in
// state_bytes_per_parameter).
// stage_memory then takes from it, with one pipeline stage, untied
// embeddings and no MTP, the word embedding's gradient (made by the
// backward's last op, after the stored activations are freed, and
// reduce-scattered with the micro-batch's others), and, with Megatron-FSDP's
// FP8 parameters, the gathered layers' second byte (fp8 data, without its
// transpose on GPUs whose FP8 GEMMs read either layout).
double sharded_working_bytes(const Plan& plan, double layer_parameters, int layers,
                             double root_parameters);

// The context-parallel KV exchange's buffers on one device, bytes, for the
// layer being computed (0 with cp = 1). A KV chunk is the rank's s/cp tokens
// of K and V: b * s/cp * 2 * g * d / t * 2 bytes. Ring attention (kP2p,
// Transformer Engine) double-buffers its receives: 2 chunks in the forward;
// in the backward each of the two slots holds a KV and a dKV chunk: 4 at
// the peak. All-gather (kAllGather): the gathered KV of the whole sequence
// (cp chunks) and, in the backward, its gradient before the reduce-scatter:
// 2 cp chunks at the peak.
double context_parallel_buffer_bytes(const Model& model, const Plan& plan);

// Framework buffers per device, bytes (kept as they were: no measurement of
// NCCL's lazily allocated channels on these layouts to replace them with):
// the CUDA context (about 0.5 GiB on
// H100 with CUDA 12 and lazy module loading), cuBLAS workspaces (PyTorch
// sets 32 MiB per handle on Hopper, CUBLAS_WORKSPACE_CONFIG ":4096:8"; two
// streams: 64 MiB) and NCCL buffers for each communicator of more than one
// rank (tensor, pipeline, context parallel, and the data-parallel gradient
// group of d * cp ranks; with MoE expert layers also the expert-parallel,
// expert-data-parallel and, when etp != t, expert tensor-parallel groups
// of more than one rank), 0.5 GiB each (NCCL_BUFFSIZE 4 MiB
// per channel and protocol, up to 32 channels, send and receive, plus NVLS
// buffers on H100), and Transformer Engine's userbuffers when tensor-parallel
// communication is overlapped (one s b h bf16 buffer per ring: bounded here
// by 0.5 GiB).
double framework_buffer_bytes(const Plan& plan);

// Fraction of the dynamic memory (activations, recompute, logits, sharding
// working set) lost to the PyTorch caching allocator's fragmentation (the
// gap between reserved and allocated bytes); the static state, allocated
// once, does not fragment. Guo et al. 2024, "GMLake: Efficient and
// Transparent GPU Memory Defragmentation for Large-scale DNN Training"
// (ASPLOS), measure 15 % on average (up to 33 %) over LLM fine-tuning and
// training set-ups that mix memory-saving techniques (recompute, ZeRO
// offload, LoRA) and so interleave many allocation sizes. Plain pre-training
// repeats the same sizes every step, and the published H100 runs bound it
// from above: llm-foundry's MPT-3B at s = 8192, micro-batch 3, no recompute
// ran with about 68 GB of dynamic memory and 7 GB of state and buffers
// (these formulas) in 80e9 bytes, which leaves at most about 7 %. We take 5 %.
inline constexpr double kAllocatorFragmentation = 0.05;

// Memory of every stage of `plan`, given each stage's parameters (per
// device, routed experts included, e.g. stage_parameters_per_device; the
// expert share is derived from the model and plan: expert_parameters of the
// breakdown). `extra_reserved_bytes` is added to framework_buffer_bytes(plan)
// in each stage's reserved_bytes (a user's safety margin; 0 by default).
// `fp8_weight_transpose`: whether FP8 tensor-scaling weights (delayed or
// current scaling) keep a transposed copy beside their data. Hopper's FP8
// GEMMs take only the TN layout, so Transformer Engine keeps data +
// transpose (2 bytes per parameter); Blackwell's (compute capability 10.x,
// TE transformer_engine/pytorch/utils.py is_non_tn_fp8_gemm_supported) read
// either layout from the one copy, 1 byte (TE's own memory test: "FP8
// tensor-scaling caches one byte per element" unless non-TN GEMMs are
// unsupported, then 2). simulate() passes false for the GPUs with FP4 tensor
// cores (the presets' Blackwell data-center parts). MXFP8 and NVFP4 keep
// rowwise and columnwise copies either way.
// REQUIRES: validate(model, plan).ok().
std::vector<MemoryBreakdown> stage_memory(const Model& model, const Plan& plan,
                                          const std::vector<double>& stage_parameters,
                                          double extra_reserved_bytes,
                                          bool fp8_weight_transpose = true);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_MEMORY_H_

// How one training job is laid out on the GPUs.
#ifndef LLMPLAN_SIMULATOR_PLAN_H_
#define LLMPLAN_SIMULATOR_PLAN_H_

#include <cstdint>
#include <string>

#include "simulator/model.h"
#include "simulator/precision.h"
#include "base/status.h"

namespace llmplan::simulator {

// kZbH1: ZB-H1 of Qi et al. 2024, "Zero Bubble Pipeline Parallelism"
// (ICLR): 1F1B's order with each backward split into B (input gradient, sent
// upstream at once) and W (weight gradient, deferred to fill the cool-down);
// see schedule.h.
enum class Schedule { kGpipe, kOneFOneB, kInterleaved, kZbH1 };
enum class Recompute { kNone, kSelective, kFull };
// How context parallelism exchanges keys and values (Megatron-Core's
// --cp-comm-type): kP2p passes each rank's KV chunk around the CP ring,
// overlapped with attention (ring attention, the default); kAllGather
// all-gathers the KV over the CP group before attention.
enum class CpComm { kP2p, kAllGather };

// Modules of Plan::recompute_modules (bit values). kLayernorm: the norm in
// front of an MoE block (Megatron-Core's pre_mlp_layernorm, a TENorm of its
// own; the norms fused into TELayerNormColumnParallelLinear are not
// separate modules and are not recomputed). kMoeAct: the routed experts'
// activation function. kMlaUpProj: latent attention's up-projections and
// RoPE, whose outputs (the q, k, v fused attention saves) are dropped.
enum RecomputeModule : uint32_t {
  kRecomputeLayernorm = 1u << 0,
  kRecomputeMoeAct = 1u << 1,
  kRecomputeMlaUpProj = 1u << 2,
};

const char* to_string(Schedule s);
const char* to_string(Recompute r);
const char* to_string(CpComm c);  // "p2p", "all_gather" (the JSON values)

// The parallelism degrees, the batching of one optimizer step, and which
// memory savers are on. World size is t * cp * p * d; ranks are ordered
// tensor fastest, then context, then data, then pipeline (Megatron-Core's
// tp-cp-ep-dp-pp order).
//
// A plain value: cheap to copy, comparable, safe to read from many threads.
struct Plan {
  // Largest values validate() accepts, chosen so that no count derived from
  // a valid plan can overflow an int and the simulator's work stays bounded:
  //  - kMaxGpus (2^20, about ten times the largest clusters built so far)
  //    bounds t, cp, p, d and the world size t * cp * p * d, which
  //    validate() forms in 64 bits before comparing; so world_size() fits
  //    an int.
  //  - kMaxGlobalBatch (2^24 sequences, thousands of times today's batches)
  //    bounds B, and with it d * b (which divides B) and the tokens per step
  //    B * s (< 2^44 with Model::kMaxSeqLength).
  //  - kMaxMicroBatchPasses (2^20) bounds m * p * v, the micro-batch passes
  //    of one step over all pipeline chunks. The simulator keeps a few tasks
  //    and schedule entries per pass (per stage, per chunk and micro-batch),
  //    so this bounds its memory (~100 MB) and time (~1 s) per iteration;
  //    Megatron-scale plans use a few thousand passes.
  //  - virtual stages are bounded by the model's layers (p * v <= layers,
  //    checked by validate(model, plan)); alone by Model::kMaxLayers.
  static constexpr int kMaxGpus = 1048576;
  static constexpr int kMaxGlobalBatch = 16777216;
  static constexpr int64_t kMaxMicroBatchPasses = 1048576;

  int tensor_parallel = 1;    // t: divides the heads (and kv heads)
  int pipeline_parallel = 1;  // p: pipeline stages
  int data_parallel = 1;      // d: replicas (not counting context parallelism)
  // cp: context parallelism. Each sequence is split into 2*cp equal chunks
  // and CP rank i holds chunks i and 2cp-1-i (load-balanced causal
  // attention), s/cp tokens of every sequence; the cp ranks of a group see
  // the same sequences, so micro-batches per replica stay B / (d * b). The
  // data-parallel gradient reduction and ZeRO sharding run over the d * cp
  // ranks of a (tensor, pipeline) position (Megatron-Core reduces gradients
  // over DP x CP). Needs flash attention.
  int context_parallel = 1;
  CpComm cp_comm = CpComm::kP2p;
  int micro_batch_size = 1;   // b: sequences per micro-batch
  int global_batch_size = 1;  // B: sequences per optimizer step; multiple of d*b
  int virtual_stages = 1;     // v: model chunks per pipeline rank (interleaved only; zb-h1: 1)
  // Megatron-Core's embedding- / loss-aware pipeline split
  // (TransformerConfig account_for_embedding_in_pipeline_split /
  // account_for_loss_in_pipeline_split; megatron/core/transformer/
  // transformer_block.py get_num_layers_to_build): the embedding and the
  // output layer with the loss each count as one layer when the layers are
  // divided among the p x v chunks, so the first chunk builds one transformer
  // layer fewer (embedding) and the last one fewer (loss); (layers + the
  // flags set) must divide by p x v, and the first / last chunk may hold no
  // transformer layer. Set by Megatron-Bridge's Llama 3.1 405B recipe
  // (src/megatron/bridge/recipes/llama/llama3.py llama31_405b_pretrain_config:
  // 126 layers + 2 = 128 over PP 16 x VP 4 or 8). See layers_in_chunk.
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  // An uneven pipeline layout with the first and the last chunk set apart
  // (Megatron-Core's pipeline_model_parallel_layout, e.g. DeepSeek-V3's
  // "Et*4|(t*4|)*14tmL": the embedding and 4 layers, 14 chunks of 4, one
  // layer with the MTP block and the loss): transformer layers in the first
  // and in the last pipeline chunk (model order), the other p x v - 2
  // chunks splitting the rest as layers_in_chunk does (each at least one).
  // -1: not set (both or neither set; p x v >= 2; not with the embedding- /
  // loss-aware split). The embedding stays on the first chunk, the output
  // layer, the loss and the MTP modules on the last, as always. Set by
  // Megatron-Bridge's DeepSeek-V3 recipes (planner/accuracy/moe_recipes.cc).
  int pipeline_first_chunk_layers = -1;
  int pipeline_last_chunk_layers = -1;
  Schedule schedule = Schedule::kOneFOneB;
  Recompute recompute = Recompute::kNone;
  // Megatron-Core's selective recompute modules beyond core attention
  // (TransformerConfig recompute_modules; "core_attn" is Recompute::
  // kSelective): a bit set of RecomputeModule. Each module's output is
  // dropped after the forward (CheckpointWithoutOutput) and rebuilt just
  // before its consumer's backward: memory.h says what each saves, the
  // lowering adds its forward again as recompute. Not with full recompute.
  // JSON "recompute_modules": ["layernorm", "moe_act", "mla_up_proj"]
  // (and "core_attn", which sets recompute "selective").
  uint32_t recompute_modules = 0;
  // Megatron-Core's activation CPU offloading (TransformerConfig
  // cpu_offloading with cpu_offloading_activations and
  // cpu_offloading_num_layers; Transformer Engine's
  // get_cpu_offload_context): the stored activations of the model's first
  // cpu_offload_layers transformer layers are copied to host memory after
  // each layer's forward and copied back before its backward, on a stream
  // of their own, overlapped with the next layer's work (memory.h, the
  // lowering's offload wait). 0: off. Needs p = 1, no recompute and fewer
  // layers than the model's (Megatron-Core's TransformerConfig checks), and
  // a cluster with a host link (Cluster::host_link_bytes_per_s). JSON
  // "cpu_offloading_num_layers".
  int cpu_offload_layers = 0;
  // Which of Transformer Engine's offload handlers runs the offloading.
  // True (the default): the handler TE had before its activation-offloading
  // refactor (NVIDIA/TransformerEngine PR 1762, reviewed November 2025; kept
  // since as the NVTE_CPU_OFFLOAD_V1=1 path, cpu_offload_v1.py), whose
  // AsyncDoubleBufferGroupOffloadHandler frees layer i's GPU copy only at a
  // later layer's end and reloads it one window early in the backward: one
  // offloaded layer is on the GPU at the peak (memory.h). False: the
  // refactored OffloadSynchronizer (transformer_engine/pytorch/
  // cpu_offload.py, _default_offload_sync_init): layer i's offload must
  // finish before forward layer l - N + i and its reload starts at backward
  // layer l - 1 - N + i, so the stored activations peak at (l - N) layers'
  // -- "peak memory usage of saving activations is (num_layers -
  // num_offloaded_layers) * T", its docstring. Memory only. JSON
  // "cpu_offload_v1" (written only when false).
  bool cpu_offload_v1 = true;
  bool sequence_parallel = false;
  bool distributed_optimizer = false;  // ZeRO-1: optimizer state sharded over d
  // Sharding of the training state over the data-parallel group (ZeRO,
  // Rajbhandari et al. 2020): 0 none, 1 optimizer state (Megatron's
  // distributed optimizer), 2 also the gradients (reduce-scattered; FSDP
  // SHARD_GRAD_OP), 3 also the parameters (FSDP FULL_SHARD: each layer's
  // parameters all-gathered before its forward and again before its
  // backward). distributed_optimizer = true means at least stage 1; read the
  // effective stage with sharding_stage().
  int zero_stage = 0;
  // Hybrid sharding (FSDP HYBRID_SHARD): the state is sharded within groups
  // of this many consecutive data-parallel ranks (in-node first) and
  // replicated across the d / fsdp_group groups, whose gradients are
  // all-reduced. 0 = one group of all d ranks. Needs sharding_stage() >= 1
  // and must divide d.
  int fsdp_group = 0;
  // Tensor-parallel all-gather / reduce-scatter overlapped with the GEMMs
  // around them (Megatron-Core --tp-comm-overlap, Transformer Engine
  // userbuffers).
  bool tp_comm_overlap = false;
  // The data-parallel parameter all-gather overlapped with compute: after the
  // optimizer (stages 1-2) with the next forward, per layer (stage 3)
  // prefetched during the previous layer (Megatron --overlap-param-gather,
  // FSDP forward/backward prefetch).
  bool overlap_param_gather = false;
  bool flash_attention = true;
  // Dropout on (Megatron's default 0.1 on the attention and hidden outputs):
  // each layer stores two 1-byte masks per token and hidden unit. Off for
  // runs with dropout 0 (Llama, MPT), which store no masks.
  bool dropout = true;
  // The loss computes its gradient in place on the bf16 logits (flash-attn's
  // fused cross-entropy, llm-foundry's default): 2 bytes per logit at the
  // peak instead of the bf16 logits plus their fp32 copy (6 bytes).
  bool fused_cross_entropy = false;
  // Rotary position embedding in one fused kernel per tensor (Transformer
  // Engine's fused_apply_rotary_pos_emb, Megatron-Core apply_rope_fusion;
  // JSON "rope_fusion", simulate --no-rope-fusion). False: Megatron-Core's
  // eager _apply_rotary_pos_emb_bshd, a dozen PyTorch elementwise kernels
  // per tensor (layers/attention.h has the bytes). Default true, as the
  // Megatron-Bridge performance scripts set it for every model; its
  // GPTModelProvider turns it off again for yarn (GPT-OSS), which the runs
  // files map (planner/accuracy/published_run.cc). No effect on models without
  // rotary embeddings or with latent attention.
  bool rope_fusion = true;
  Precision precision = Precision::kBf16;
  // Scaling recipe of precision kFp8 (ignored otherwise).
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
  // Transformer layers kept in bf16 at the start and at the end of the model
  // in fp8 / nvfp4 training: their GEMMs run in bf16, with no casts and no
  // quantized copies (Megatron-Core's first_last_layers_bf16 with
  // num_layers_at_start_in_bf16 / num_layers_at_end_in_bf16,
  // megatron/core/fp8_utils.py get_fp8_context, fp4_utils.py@322dfae
  // get_fp4_context; JSON "bf16_layers_at_start", "bf16_layers_at_end").
  // Default 0 and 0, Megatron-Bridge's bf16_with_nvfp4_mixed and
  // bf16_with_mxfp8_mixed presets (src/megatron/bridge/training/
  // mixed_precision.py); its FP8 current-scaling preset keeps 1 and 1, its
  // GPT-OSS NVFP4 performance configs 0 and 4, the NVFP4 paper's 12B run
  // 2 and 8 (arXiv 2509.25149, section 4). Ignored in 16-bit training.
  int bf16_layers_at_start = 0;
  int bf16_layers_at_end = 0;
  // Data-parallel gradient reduction: bucket size (0 = one bucket for the
  // whole stage) and whether buckets overlap the last micro-batch's backward.
  int64_t grad_bucket_bytes = 0;
  bool overlap_grad_reduce = true;
  // Gradients accumulated and reduced in fp32 (Megatron-Core's
  // grad_reduce_in_fp32, the default of Megatron-LM for bf16 and of NeMo 2's
  // and Megatron-Bridge's bf16_mixed recipes). False: the gradient buffer and
  // its data-parallel reduction are bf16 (--grad-reduce-in-bf16; JSON
  // "grad_reduce_in_fp32": false), as every Megatron-Bridge performance
  // recipe of the Blackwell runs sets (scripts/performance/configs/*:
  // set_llama3_common_configs, set_llama31_common_configs,
  // set_qwen3_common_configs, set_gpt_oss_common_configs:
  // cfg.ddp.grad_reduce_in_fp32 = False). Memory: 2 bytes of gradient per
  // parameter instead of 4 (memory.h state_bytes_per_parameter).
  bool grad_reduce_in_fp32 = true;
  // FP8 tensor scaling (delayed or current) with the distributed optimizer
  // (ZeRO-1): the transformer layers' weights are fp8 parameters, gathered
  // over the data-parallel group at 1 byte each and held without a bf16
  // copy (Transformer Engine's fp8_model_init; NeMo 2's and
  // Megatron-Bridge's FP8 tensor-scaling recipes set fp8_param_gather True,
  // nemo/collections/llm/recipes/precision/mixed_precision.py
  // bf16_with_fp8_mixed and bf16_with_fp8_current_scaling_mixed). False:
  // bf16 parameters, gathered at 2 bytes, with Transformer Engine's cached
  // fp8 copy beside them (the NeMo-Framework-Launcher 24.07 FP8 runs, whose
  // configs set fp8 and fp8_hybrid but no fp8_params: examples/training/
  // llama/h100/llama3_70b_fp8.sh). JSON "fp8_param_gather". Ignored for
  // other precisions, MXFP8 (never gathered in fp8) and ZeRO 0 / 2. At
  // ZeRO-3 (Megatron-FSDP; dense models) it is read by the memory model
  // only: the layer weights are sharded and gathered as 1-byte fp8 (memory.h,
  // sharded_working_bytes); the per-layer gathers' time stays at 2 bytes.
  // At ZeRO-1 only the gather reads it: the memory model keeps counting fp8
  // weights either way (with bf16 parameters Transformer Engine would
  // cache the fp8 copy beside them, 2 bytes more per layer parameter on
  // Hopper, which predicts 3 of the 12 NeMo 24.07 H100 runs, which ran, not
  // to fit: that memory term is left open).
  bool fp8_param_gather = true;
  // Megatron's pipeline scatter/gather: with t > 1 a stage sends 1/t of the
  // activation and the receiver all-gathers it over NVLink.
  bool pipeline_scatter_gather = false;

  // Mixture-of-experts layers (Megatron-Core's MoE parallel folding): the
  // t * cp * d ranks of a pipeline stage, which run attention as tensor x
  // context x data parallel, run the expert layers as etp x ep x edp
  // (expert tensor, expert, expert-data parallel; etp fastest, in rank
  // order). Each of the ep ranks of an expert-parallel group holds E / ep
  // experts (split over etp ranks), tokens travel to their experts by an
  // all-to-all over the ep group, and the edp = t*cp*d / (etp*ep) ranks
  // holding the same experts reduce (or shard) their gradients. ep = etp =
  // 1 and dense models: no expert layout.
  int expert_parallel = 1;         // ep: divides the experts
  int expert_tensor_parallel = 1;  // etp: divides the expert FFN size
  // The dispatch / combine all-to-alls of one micro-batch run under another
  // micro-batch's compute (Megatron-Core's --overlap-moe-expert-parallel-comm
  // with --delay-wgrad-compute; DeepSeek-V3's DualPipe idea).
  bool moe_a2a_overlap = false;
  // Load imbalance of the routed experts: tokens received by the busiest
  // expert-parallel rank over the balanced share (1 = balanced, as the
  // published benchmarks force with --moe-router-force-load-balancing).
  double moe_imbalance = 1.0;
  // Megatron-Core's flex token dispatcher (moe_token_dispatcher_type "flex"
  // with moe_flex_dispatcher_backend "deepep" or "hybridep"): each token is
  // sent once to every expert-parallel rank that holds one of its top-k
  // experts, not once per expert as the alltoall dispatcher does, so the
  // dispatch / combine bytes scale by the expected distinct destination
  // ranks over k (layers/moe_dispatch.h). Across nodes a token crosses the
  // network once per destination node and is forwarded over NVLink there
  // (DeepEP internode / HybridEP; layers/moe.cc). Dropless routing only.
  bool moe_flex_dispatcher = false;

  // Whether Plan::recompute_modules holds `m`.
  bool recomputes(RecomputeModule m) const { return (recompute_modules & m) != 0; }

  // The ZeRO stage in effect: zero_stage, at least 1 with distributed_optimizer.
  int sharding_stage() const { return zero_stage > 0 ? zero_stage : (distributed_optimizer ? 1 : 0); }
  // Data-parallel ranks the sharded state is split over (fsdp_group, or d),
  // not counting context parallelism.
  int shard_group_size() const { return fsdp_group > 0 ? fsdp_group : data_parallel; }
  // Ranks the sharded state is actually split over: shard_group_size() * cp
  // (each CP rank holds its own shard, as Megatron-Core's distributed
  // optimizer over DP x CP and torchtitan's dp_shard_cp mesh do).
  // REQUIRES: validate(*this).ok().
  int shard_ranks() const { return shard_group_size() * context_parallel; }
  // Ranks the gradients are reduced over: d * cp. REQUIRES: validate(*this).ok().
  int grad_reduce_ranks() const { return data_parallel * context_parallel; }

  // Whether transformer layer `layer` (0-based, of a model of `layers`) runs
  // its linear GEMMs in the plan's low precision (fp8 or nvfp4): not in
  // 16-bit training, nor in the bf16 layers at either end.
  bool low_precision_layer(int layer, int layers) const {
    return low_precision(precision) && layer >= bf16_layers_at_start &&
           layer < layers - bf16_layers_at_end;
  }
  // Whether some of a low-precision plan's layers stay bf16.
  bool has_bf16_layers() const {
    return low_precision(precision) && (bf16_layers_at_start > 0 || bf16_layers_at_end > 0);
  }

  // GPUs: t * cp * p * d. REQUIRES: validate(*this).ok() (so it fits an int).
  int world_size() const {
    return tensor_parallel * context_parallel * pipeline_parallel * data_parallel;
  }
  // Expert-data-parallel width: t * cp * d / (etp * ep), the ranks holding
  // the same experts. REQUIRES: validate(model, *this).ok() for an MoE model.
  int expert_data_parallel() const {
    return tensor_parallel * context_parallel * data_parallel /
           (expert_tensor_parallel * expert_parallel);
  }
  // Micro-batches per replica per step: B / (d * b). REQUIRES: validate(*this).ok().
  int num_micro_batches() const {
    return global_batch_size / (data_parallel * micro_batch_size);
  }
  // Bytes of one gradient element in the data-parallel reduction (fp32
  // accumulation for bf16, fp8 and nvfp4 -- whose gradients are bf16 --
  // fp16 otherwise; Megatron's defaults); 2 without grad_reduce_in_fp32.
  int grad_reduce_bytes() const {
    return precision == Precision::kFp16 || !grad_reduce_in_fp32 ? 2 : 4;
  }

  friend bool operator==(const Plan&, const Plan&) = default;
};

// OK when every degree is >= 1 and within the Plan::kMax* bounds (world
// size, global batch, micro-batch passes per step), and the batch divides;
// the plan alone. InvalidArgument names the first field at fault.
Status validate(const Plan& plan);

// OK when `plan` can lay out `model`: t divides the heads, the kv heads and
// the FFN size, and is at most the vocabulary (each rank holds V/t rows);
// every one of the p*v pipeline chunks gets at least one layer (layers are
// split as evenly as possible, see layers_in_chunk; with the embedding- /
// loss-aware split, layers + the flags set divide by p*v and only the first
// / last chunk may hold none; with the first / last chunk layers set, both
// are >= 0, p*v >= 2 and every middle chunk keeps one); with sequence
// parallelism t divides the sequence; with context parallelism 2*cp divides
// the sequence (load-balanced causal chunks; with SP, t also divides s/cp) and flash
// attention is on. InvalidArgument otherwise.
Status validate(const Model& model, const Plan& plan);

// Layers held by pipeline chunk `chunk` (0 .. p*v-1, in model order): l/(p*v)
// each, and the last (l mod p*v) chunks one more. With the embedding- /
// loss-aware split: (l + e + o) / (p*v) each, e = 1 fewer in the first chunk
// and o = 1 fewer in the last (Megatron-Core get_num_layers_to_build). With
// pipeline_first_chunk_layers / pipeline_last_chunk_layers: those in the
// first and last chunk, the rest split over the middle chunks as above.
// REQUIRES: validate(model, plan).ok().
int layers_in_chunk(const Model& model, const Plan& plan, int chunk);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_PLAN_H_

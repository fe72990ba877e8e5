// The swap point between the simulator and its source of kernel and
// collective durations.
//
// The op-graph builder describes every GPU kernel (KernelDesc) and every
// collective (CollectiveDesc) of an iteration; a CostModel turns each into
// seconds. Two implementations exist: Roofline (analytic, calibrated
// constants, roofline.h) and ProfileTable (measured by llmplan-profile,
// profile_table.h).
#ifndef LLMPLAN_SIMULATOR_COST_MODEL_H_
#define LLMPLAN_SIMULATOR_COST_MODEL_H_

#include <cstdint>
#include <limits>
#include <string>

#include "simulator/plan.h"

namespace llmplan::simulator {

// The kernels of one transformer layer, the embedding, the logits and the
// optimizer. Names (kernel_kind_name) are the keys of profile JSON files.
enum class KernelKind {
  kLayerNorm,        // memory-bound
  kQkvGemm,          // [b*s, h] x [h, (a+2g)d/t]
  kAttnScoreGemm,    // batched [s, d] x [d, s], batch b*a/t
  kSoftmax,          // memory-bound over b*a/t*s*s
  kAttnDropout,      // memory-bound over b*a/t*s*s
  kAttnValueGemm,    // batched [s, s] x [s, d], batch b*a/t
  kFlashAttention,   // fused attention, b*a/t heads of s x d
  kOutProjGemm,      // [b*s, a*d/t] x [a*d/t, h]
  kDropoutResidual,  // memory-bound
  kFc1Gemm,          // [b*s, h] x [h, f/t] (x2 columns for SwiGLU)
  kActivation,       // GeLU / SwiGLU, memory-bound
  kFc2Gemm,          // [b*s, f/t] x [f/t, h]
  kEmbedding,        // lookup + position add, memory-bound
  kLogitsGemm,       // [b*s, h] x [h, V/t]
  kCrossEntropy,     // memory-bound over b*s*V/t
  kOptimizerStep,    // Adam over the local parameter shard, memory-bound
  kFp8CastTranspose, // FP8 training: bf16 -> fp8 cast + transpose + amax, memory-bound
  // Mixture of experts (lowering.h):
  kRouterGemm,       // [tokens, h] x [h, E]: the router's expert scores
  kMoeRouting,       // softmax/sigmoid, top-k and the auxiliary loss, memory-bound
  kMoePermute,       // token rows gathered by expert / scattered back, memory-bound
  kExpertFc1Gemm,    // grouped: batch = local experts, [m_e, h] x [h, f_e/etp] (x2 SwiGLU)
  kExpertFc2Gemm,    // grouped: batch = local experts, [m_e, f_e/etp] x [f_e/etp, h]
  kMoeExpertBias,    // experts with biases: FC2's bias x routing weight added per expert, memory-bound
  kMoeActClamp,      // clamped gated activation: FC1's output clamped and concatenated, memory-bound
  // Mamba-2 mixer (hybrid models; layers/mamba.h):
  kMambaInProjGemm,  // [b*s, h] x [h, (2 d_inner + 2 G N + H)/t]
  kMambaConv,        // depthwise causal conv1d + SiLU over the x, B, C channels, memory-bound
  kSsdScan,          // SSD chunked scan: FLOPs (chunk matmuls) and HBM bytes, the larger wins
  kMambaGatedNorm,   // y * silu(z) and the grouped RMSNorm, memory-bound
  kMambaOutProjGemm, // [b*s, d_inner/t] x [d_inner/t, h]
  kRope,             // rotary position embedding on q and k, memory-bound (layers/attention.h)
  kCount
};

// Which pass a kernel belongs to. GEMMs split their backward into the
// data-gradient and weight-gradient GEMMs.
enum class Pass { kForward, kBackwardData, kBackwardWeight, kBackward };

const char* kernel_kind_name(KernelKind k);
const char* pass_name(Pass p);
bool is_gemm(KernelKind k);

// A GEMM C[m,n] = A[m,k] B[k,n], repeated `batch` times.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// One kernel launch as the simulator sees it.
struct KernelDesc {
  KernelKind kind = KernelKind::kLayerNorm;
  Pass pass = Pass::kForward;
  GemmShape gemm;        // GEMMs only (for flash attention: m=n=s, k=d, batch=b*a/t)
  double flops = 0;      // arithmetic work (GEMMs, flash attention)
  double bytes = 0;      // HBM traffic (memory-bound kernels)
  Precision precision = Precision::kBf16;
  // An FP8 GEMM whose operands carry MXFP8 block scales (Fp8Recipe::kMxfp8:
  // one E8M0 scale per 32 elements) instead of one scale per tensor. Cost
  // models that know the block-scaled kernels' rate apply it (Roofline:
  // kMxfp8GemmRateRatio).
  bool fp8_block_scaled = false;
};

// kAllToAll: every rank sends S/n bytes to each rank of the group (the MoE
// token dispatch and combine); `bytes` is the per-rank send buffer S.
enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kSendRecv, kAllToAll };
const char* collective_kind_name(CollectiveKind k);

// A communicator: `size` ranks, of which `ranks_per_node` share a node
// (size / ranks_per_node nodes). size == ranks_per_node means inside one node.
struct CommGroup {
  int size = 1;
  int ranks_per_node = 1;
  int nodes() const { return (size + ranks_per_node - 1) / ranks_per_node; }
  friend bool operator==(const CommGroup&, const CommGroup&) = default;
};

// One collective. `bytes` is the buffer size S in nccl-tests' sense: the
// per-rank buffer of an all-reduce, the gathered (output) size of an
// all-gather, the input size of a reduce-scatter, the message of a send.
struct CollectiveDesc {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double bytes = 0;
  CommGroup group;
  // kAllToAll only: the share of the uniform inter-node bytes ((n - k)/n of
  // S) that actually leaves the node, in (0, 1]; below 1 for node-limited
  // MoE routing (Model::moe_router_groups, layers/moe.h) and for the flex
  // dispatcher's one copy per destination node (layers/moe_dispatch.h).
  double off_node_scale = 1.0;
  // kAllToAll only: the factor on the uniform in-node NVLink bytes ((k - 1)/n
  // of S), >= 1: above 1 when the copies that cross the NIC are forwarded
  // over NVLink inside the receiving node (the flex dispatcher,
  // layers/moe_dispatch.h); 1 for NCCL's all-to-all.
  double in_node_scale = 1.0;
};

// Source of durations. Implementations are immutable after construction and
// safe to call from many threads at once.
class CostModel {
 public:
  virtual ~CostModel() = default;
  // Seconds for one kernel on one GPU.
  virtual double kernel_time_s(const KernelDesc& kernel) const = 0;
  // Seconds for one collective, from launch until every rank has its result.
  virtual double collective_time_s(const CollectiveDesc& collective) const = 0;
  // Host time between two kernel (or collective) launches, seconds: the
  // simulator queues launches this far apart, so a kernel cannot start before
  // the host has issued it (lowering.h). 0: the host is never the bottleneck.
  virtual double launch_interval_s() const { return 0.0; }
  // How far the host may run ahead of the GPU's finished work, seconds
  // (lowering.h); infinity: no limit.
  virtual double host_run_ahead_s() const { return std::numeric_limits<double>::infinity(); }
  // Whether FP8 tensor-scaling casts (delayed or current) write a transposed
  // fp8 copy beside the data: Hopper's FP8 GEMMs take only the TN layout, so
  // Transformer Engine writes both; Blackwell's read either layout from one
  // copy (memory.h stage_memory's fp8_weight_transpose, the same rule), so
  // its casts write one byte per element less (lowering.h
  // fp8_cast_bytes_per_element).
  virtual bool fp8_transpose_copy() const { return true; }
  // Host overhead added once per micro-batch per pipeline chunk per pass.
  virtual double microbatch_overhead_s() const = 0;
  // Host overhead added once per iteration.
  virtual double iteration_overhead_s() const = 0;
  // SM contention (RooflineConstants::comm_compute_slowdown): seconds of
  // compute slowdown per second of a collective hidden under compute.
  virtual double comm_compute_slowdown() const { return kDefaultCommComputeSlowdown; }
  static constexpr double kDefaultCommComputeSlowdown = 0.12;
  // A short description for reports ("roofline a100-80gb", "profile h100.json").
  virtual std::string describe() const = 0;
};

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_COST_MODEL_H_

// Lowering: from a model chunk and a plan to the kernels and tensor-parallel
// collectives one device runs for one micro-batch, with durations from a
// CostModel. The op graph of DESIGN.md section 4, per layer:
//   forward  LN, [SP all-gather], QKV GEMM, attention (QK^T, softmax,
//            dropout, AV -- or one flash-attention kernel), output GEMM, TP
//            all-reduce (SP: reduce-scatter), dropout+residual, LN, [SP
//            all-gather], FC1, activation, FC2, TP collective, dropout+residual
//   backward the same in reverse with data- and weight-gradient GEMMs and the
//            TP collectives of the input gradients; full recomputation
//            re-runs the layer's forward first, selective recomputation the
//            attention core (not needed with flash attention)
// plus the embedding on the first chunk and the final norm, logits and loss
// on the last.
//
// FP8 (precision kFp8): the four linear GEMMs (QKV, output projection, FC1,
// FC2; forward, data and weight gradient) run as FP8 GEMMs; attention,
// logits, norms and activations stay bf16. Each linear GEMM's input is cast
// to fp8 (fp8_cast_transpose) before its forward GEMM, and the gradient of
// its output before its backward GEMMs (4 casts per layer each way). Layer
// weights are cast once per step after the optimizer (their fp8 copies are
// cached over the micro-batches), at ZeRO-3 per layer after each gather
// (forward and backward). Tensor-parallel collectives stay bf16.
//
// Overlap, done analytically here so that a pass stays one task (the
// planner runs ~10^5 simulations; splitting passes per layer would multiply
// the task graph). What cannot be hidden becomes ops on the pass; what is
// hidden is accounted in ChunkProgram, and costs the compute it overlaps
// cost.comm_compute_slowdown() x the hidden time (SM contention, added to
// the overlapped kernel and recorded in its LoweredOp::slowdown_s).
//  - tp_comm_overlap (Megatron-Core / Transformer Engine userbuffers): each
//    TP all-gather is pipelined with the GEMM that consumes it, each
//    reduce-scatter / all-reduce with the GEMM that produces it, in t chunks.
//    A two-stage pipeline of n = t equal chunks leaves exposed
//      comm / n + (n - 1) / n x max(0, comm - gemm)
//    (the first chunk's transfer cannot overlap anything, the rest only as
//    far as the GEMM is longer). Collectives next to no GEMM (embedding,
//    cross-entropy) stay exposed.
//  - ZeRO-2/3 (sharding_stage() >= 2 with a shard group of S > 1 ranks):
//    the pass is cut into units (embedding, each layer, head; in backward
//    order for the backward). Stage 3 all-gathers each unit's bf16
//    parameters (2 bytes per parameter of this TP rank, over the shard
//    group) before its forward and again before its backward (with full
//    recomputation that gather serves the recomputed forward too); stages 2
//    and 3 reduce-scatter each unit's gradients (grad_reduce_bytes() per
//    parameter) after its backward, every micro-batch. With
//    overlap_param_gather the gather of unit i+1 is prefetched during unit
//    i's compute; with overlap_grad_reduce the reduce-scatter of unit i runs
//    during unit i+1's backward. The collectives running during a unit share
//    one network and run back to back: exposed = max(0, their sum - the
//    unit's compute), the rest hidden. Unit 0's gather, the last unit's
//    reduce-scatter and every collective whose overlap is off are exposed
//    in full. Units of a chunk are equal layers, so this per-unit rule is
//    the steady state of FSDP's prefetch (one unit ahead).
//
// Context parallelism (cp > 1; Megatron-Core / Transformer Engine): every
// per-token op (LN, GEMMs, activations, TP collectives, embedding, logits,
// the pipeline message) runs on the rank's b * s / cp tokens. Attention is
// cp flash-attention blocks, each of the rank's s/cp queries (its chunks i
// and 2cp-1-i of 2cp) against one s/cp-token KV chunk: with the load-
// balanced chunks every block does the work of causal attention over s/cp
// tokens, so a block is the kernel of shape {s/cp, s/cp, d, b*a/t} and the
// rank's attention FLOPs are the full sequence's / cp (FLOPs counted as for
// cp = 1: every query-key pair, as the model-FLOPs formula does). The cp
// blocks are one op, followed by one kContextComm op with the exchange's
// exposed time:
//  - kP2p (ring attention): transfer i of the rank's KV chunk to the next CP
//    rank (send_recv of b * s/cp * 2 * g * d / t * 2 bytes; over the NIC when
//    the CP group spans nodes) runs during block i. Forward: cp - 1 transfers
//    of KV; backward (Transformer Engine): KV with block 0, KV + dKV (twice
//    the bytes) with blocks 1 .. cp-2, dKV with block cp-1. Exposed =
//    sum over transfers of max(0, transfer - block) (so the forward takes
//    the first block + sum over the next cp-1 of max(transfer, block));
//    the hidden rest is ChunkProgram::cp_hidden_s and costs
//    comm_compute_slowdown() x itself on the attention op.
//  - kAllGather: the KV all-gathered over the CP group (cp x the chunk)
//    before the blocks, in the forward and again in the backward, and the
//    dKV reduce-scattered after the backward blocks; all exposed.
// Split backward (zb-h1, schedule.h): the backward is also lowered as two
// passes. B, the input gradient, is the backward without the parameters'
// weight-gradient kernels (LoweredOp::weight_grad: the weight-gradient GEMMs
// of QKV, output projection, FC1, FC2 and the logits, and the embedding's
// gradient scatter); W is those kernels, unit by unit. LayerNorm weight
// gradients stay fused in B's LayerNorm kernels. Each pass is lowered as
// above on its own: tp_comm_overlap pairs B's collectives with the GEMMs of
// B (a reduction of a data-gradient GEMM's output with that GEMM, which
// produces it, rather than with the weight-gradient GEMM Megatron overlaps it
// with under 1F1B); W has no TP collectives. ZeRO-3 gathers each unit's
// parameters before its B (W = X^T dY reads no parameters); ZeRO-2/3
// reduce-scatter each unit's gradients after its W (the gradient is final
// only then), overlapped with the next unit's W. A unit's data-parallel
// gradient bytes (grad_ready_bytes) are ready after its last W kernel. The
// host's per-micro-batch overhead stays with B (one per backward, as 1F1B).
//
// Sliding-window attention (Model::attention_span): a windowed layer's
// flash-attention kernel is {s, span, d, b*a/t} with 4 (b*a/t) s span d
// forward FLOPs; with cp > 1 each of the cp blocks gets span/cp keys (the
// window spread evenly over the blocks; the ring still runs every block).
// The non-flash path ignores windows (it computes the full s x s scores).
//
// Mixture of experts (Model::is_moe_layer; Megatron-Core's MoE layer with
// the alltoall token dispatcher). An MoE layer is the dense layer's
// attention, then, per rank: LN; the shared experts (if any) as a dense
// TP-sharded MLP of width shared x f_e; the router GEMM [T_moe, h] x [h, E]
// (bf16, never fp8) on T_moe = b s/cp / t tokens (Megatron-Core runs MoE
// with TP under sequence parallelism: each TP rank routes its 1/t slice;
// T_moe = b s/cp for t = 1); moe_routing (softmax/sigmoid, top-k, aux loss;
// 17 B per fp32 score + 8 B per chosen expert forward, 16 B per score
// backward); moe_permute (2 T_moe k h x 2 bytes); the dispatch all-to-all
// over Placement::expert (CollectiveDesc::bytes S = T_moe k h x 2, x
// moe_imbalance for the busiest rank's receive side); with etp > 1 an
// all-gather of the local experts' rows over Placement::expert_tensor; the
// grouped expert GEMMs, batch E/ep local experts of m_e x etp rows, m_e =
// T_moe k ep / E x moe_imbalance (with a capacity factor c > 0: ep x
// ceil(c T_moe k / E), padded, and the all-to-all carries the padded
// buffers, E x ceil(c T_moe k / E) rows; no imbalance beyond capacity):
// fc1 [m_e etp, h] x [h, (2 for SwiGLU) f_e/etp], activation, fc2; with
// etp > 1 the reduce-scatter; the combine all-to-all; unpermute (the k rows
// of each token read and summed, (k + 1) T_moe h x 2 bytes); residual. In
// FP8 the expert GEMMs run in FP8 (Transformer Engine's grouped linear)
// with their input and output-gradient casts; the router stays bf16. The
// backward mirrors it (data- and weight-gradient GEMMs, the weight ones
// marked weight_grad; two all-to-alls); recomputation as for dense layers
// (full recomputation re-runs the all-to-alls too). With moe_imbalance > 1
// the simulated device is the busiest one (its expert GEMMs and receives
// scaled); the hardware FLOPs count it for every rank. The expert-TP
// collectives are exposed (tp_comm_overlap does not cover them). MoE with
// t > 1 and no sequence parallelism is lowered as if each TP rank routed
// its 1/t slice (Megatron-Core requires SP there).
//  - moe_a2a_overlap (Megatron-Core's EP communication overlap, which runs
//    one micro-batch's dispatch/combine under another micro-batch's
//    compute): per MoE layer and pass, the layer's all-to-alls (sum A) are
//    hidden under the layer's compute kernels (sum C, recomputation and
//    casts included): exposed max(0, A - C), split over the all-to-alls in
//    proportion; hidden min(A, C) goes to ChunkProgram::moe_a2a_hidden_s and
//    costs comm_compute_slowdown() x itself on the layer's last kernel. The
//    layer's own compute stands for the other micro-batch's, which is the
//    same layer's in the steady state.
//  - Parameters: the routed experts of an MoE layer are split over ep x etp
//    ranks (ChunkProgram::expert_parameters), the rest of the layer over t.
//    Their gradients are reduced (ZeRO: sharded) over Placement::expert_data
//    (edp ranks), the others over `data` / `shard` as for dense models; the
//    ZeRO-2/3 collectives of a unit carry both, back to back.
#ifndef LLMPLAN_SIMULATOR_LOWERING_H_
#define LLMPLAN_SIMULATOR_LOWERING_H_

#include <cstdint>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/cost_model.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::simulator {

// Streams of one device.
enum class StreamKind : int {
  kCompute = 0,
  kTensorComm,
  kPipeForward,
  kPipeBackward,
  kDataComm,
  kContextComm,  // context-parallel KV exchange (ring send_recv, all-gather)
  kExpertComm,   // MoE dispatch / combine all-to-all over the expert-parallel group
};
constexpr int kStreamsPerDevice = 7;
const char* to_string(StreamKind s);

enum class OpCategory : uint8_t {
  kCompute,
  kRecompute,
  kTensorComm,
  kHostOverhead,
  kFsdpGather,         // exposed part of ZeRO-3 parameter all-gathers
  kFsdpReduceScatter,  // exposed part of ZeRO-2/3 per-micro-batch gradient reduce-scatters
  kFp8Cast,            // FP8 training: casts of GEMM operands to fp8 (not recomputed ones)
  kContextComm,        // exposed part of the context-parallel KV exchange
  kMoeA2a,             // exposed part of the MoE dispatch / combine all-to-alls
};

// One kernel or TP collective of a micro-batch pass.
struct LoweredOp {
  StreamKind stream = StreamKind::kCompute;  // kCompute or kTensorComm
  OpCategory category = OpCategory::kCompute;
  double duration_s = 0;
  double flops = 0;            // hardware FLOPs on this device
  const char* name = "";       // kernel kind or collective name
  // Backward only: gradient bytes of this chunk that are final once this op
  // has run (the data-parallel buckets fill from these).
  double grad_ready_bytes = 0;
  // Part of duration_s that is SM contention from a collective overlapped
  // with this kernel (see the header comment); 0 without overlap.
  double slowdown_s = 0;
  bool gemm = false;  // a GEMM kernel (tp_comm_overlap pairs collectives with GEMMs)
  // Backward only: a kernel computing parameters' gradients, which a split
  // backward runs in its W pass (see the header comment).
  bool weight_grad = false;
  // TP collectives: +1 pairs with the next op (an all-gather feeding a
  // GEMM), -1 with the previous one (a reduction of a GEMM's output).
  int8_t tp_pair = 0;
  // An MoE kernel (router GEMM, routing, permutation, expert GEMMs), counted
  // in StageBreakdown::expert_compute_s.
  bool expert = false;
  // Backward only: routed-expert gradient bytes final once this op has run
  // (reduced over Placement::expert_data, not `data`).
  double expert_grad_ready_bytes = 0;
};

// One data-parallel collective a pass issues (ZeRO-2/3), hidden or not.
struct PassCollective {
  CollectiveKind kind = CollectiveKind::kAllGather;
  double bytes = 0;   // CollectiveDesc::bytes
  double time_s = 0;  // its full duration
};

// Where the ranks of each communicator sit. Ranks are ordered TP fastest,
// then CP, then DP, then PP (Megatron-Core's tp-cp-ep-dp-pp), so a CP group
// sits inside a node when t * cp <= GPUs per node. With cp > 1 the groups
// that reduce or shard the training state (`data`, `shard`) take in the CP
// ranks: a CP rank computes gradients of the same parameters from other
// tokens. `tensor`, `replica`, `embedding` and the pipeline keep their
// members (the pipeline's stages are t * cp * d ranks apart).
struct Placement {
  CommGroup tensor;              // t ranks
  CommGroup context;             // cp ranks, stride t
  CommGroup data;                // the gradient reduction: d * cp ranks, stride t
  // The sharded state's group: shard_ranks() = S * cp consecutive ranks
  // (stride t; S = shard_group_size()). Equals `data` when S = d.
  CommGroup shard;
  // Hybrid sharding: the d / S ranks holding the same shard (stride S * cp * t).
  CommGroup replica;
  // Per stage boundary r -> r+1 (r = 0..p-1; p-1 -> 0 for the interleaved
  // wrap-around): whether any rank pair crosses a node.
  std::vector<bool> pipe_crosses_node;
  CommGroup embedding;           // first and last stage (tied embeddings)
  // Expert layers (MoE parallel folding, Plan::expert_parallel): the t*cp*d
  // ranks of a stage as etp x ep x edp, etp fastest.
  CommGroup expert_tensor;       // etp ranks (consecutive)
  CommGroup expert;              // ep ranks, stride etp: the all-to-all group
  CommGroup expert_data;         // edp ranks, stride etp * ep: expert gradients
};

// FP8 training (Plan::precision kFp8, Transformer Engine's recipes): HBM
// bytes per element of one fp8_cast_transpose (the profile's convention):
// 4 with delayed scaling (read bf16, write the fp8 copy and its fp8
// transpose, amax fused), 6 with current scaling (one more read of the
// tensor for its amax before the cast), 4 + 2/32 with MXFP8 (a 1-byte scale
// per 32 elements of each copy).
double fp8_cast_bytes_per_element(Fp8Recipe recipe);

// REQUIRES: validate(model, plan).ok() and cluster.gpus_per_node >= 1.
Placement place(const Plan& plan, const Cluster& cluster);

// The per-micro-batch work of one model chunk on one device.
struct ChunkProgram {
  int chunk = 0;              // model chunk index, 0 .. p*v-1
  int layers = 0;
  std::vector<LoweredOp> forward;
  std::vector<LoweredOp> backward;  // includes recomputation
  double forward_s = 0, backward_s = 0;
  // Schedules with split backward steps (zb-h1; empty otherwise): the
  // backward as its B pass (input gradient, with recomputation) and its W
  // pass (weight gradients), see the header comment. `backward` is still the
  // whole pass; the engine runs these two instead.
  bool split_backward = false;
  std::vector<LoweredOp> backward_input, backward_weight;
  double backward_input_s = 0, backward_weight_s = 0;
  double parameters = 0;      // parameters held by one device for this chunk
  // Gradient bytes in the DP reduction over Placement::data: those of the
  // parameters outside the routed experts (all of them for a dense model).
  double grad_bytes = 0;
  // Routed-expert gradient bytes, reduced over Placement::expert_data.
  double expert_grad_bytes = 0;
  // The transformer layers' share of `parameters` (the fp8 weight casts).
  double layer_parameters = 0;
  double activation_send_bytes = 0;  // pipeline message per micro-batch
  // Per micro-batch (forward + backward pass, or forward + B + W when split):
  // collective time hidden under compute (tp_comm_overlap; ZeRO-2/3 gathers
  // and reduce-scatters).
  double tp_hidden_s = 0;
  double fsdp_hidden_s = 0;
  double cp_hidden_s = 0;  // context-parallel ring transfers under attention blocks
  double moe_a2a_hidden_s = 0;  // MoE all-to-alls hidden under compute (moe_a2a_overlap)
  // Routed-expert parameters among `parameters` (their gradients reduce over
  // Placement::expert_data, the rest over Placement::data).
  double expert_parameters = 0;
  // ZeRO-2/3: the data-parallel collectives each forward / backward pass
  // issues over the shard group, in order (a split backward issues the same
  // ones, the gathers in B and the reduce-scatters in W).
  std::vector<PassCollective> forward_collectives, backward_collectives;
};

// The launch queue of one pass (see lower_chunk): replaces each op's GPU
// duration_s by the time it adds to the pass when the host launches kernels
// and collectives `launch_interval_s` apart, never more than `run_ahead_s`
// ahead of the GPU's finished work, and runs kHostOverhead ops itself (host
// and GPU start together). With launch_interval_s = 0 and host ops only at
// the start (as lower_chunk emits them) durations are unchanged.
//
// REQUIRES: launch_interval_s >= 0, run_ahead_s >= 0 (may be infinity).
void apply_launch_queue(double launch_interval_s, double run_ahead_s,
                        std::vector<LoweredOp>* ops);

// The ops of a pass run back to back on the compute path, but the host
// issues them: each kernel or collective is launched cost.launch_interval_s()
// after the previous launch, and host-overhead ops occupy the host only. The
// GPU starts an op when it has been launched and the previous op has
// finished (host and GPU start a pass together). Each op's duration_s is the
// time it adds to its pass: its GPU time plus any wait for its launch. A
// long kernel thus lets the host run ahead, and short kernels after it cost
// only their GPU time until that lead is spent; a pass of kernels shorter
// than the interval is launch-bound (interval x kernels). The lead is capped
// at cost.host_run_ahead_s(): the host's issue point never gets further than
// that ahead of the GPU's finished work. A real framework's host is not a
// uniform stream of launches (per-op dispatch costs differ, and some ops wait
// on the device), so the lead it banks during long kernels is bounded; the
// calibrated window stands for that.
//
// REQUIRES: validate(model, plan).ok(); 0 <= chunk < p*v.
ChunkProgram lower_chunk(const Model& model, const Plan& plan, const Placement& placement,
                         const CostModel& cost, int chunk);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_LOWERING_H_

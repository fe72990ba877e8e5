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
// lower_chunk (lowering.cc) is a small driver: it walks the chunk's layers
// in pass order and asks each layer kind's part for each block's ops, then
// applies the whole-pass transforms. The layer kinds' kernels live with the
// rest of each kind in simulator/layers/ (layers/layer_kind.h lists them,
// and says how to add one); each header holds its modelling notes:
//   layers/layer_part.h    what a layer part is; which parts a layer has
//   layers/attention.h     attention: dense, GQA, sliding window, context
//                          parallelism (ring and all-gather KV exchange)
//   layers/mla.h           multi-head latent attention
//   layers/mlp.h           the dense MLP (GeLU, SwiGLU)
//   layers/moe.h           mixture of experts: router, routing, permutation,
//                          dispatch/combine all-to-all, grouped expert GEMMs,
//                          shared experts, moe_a2a_overlap, expert parameters
//   layers/mamba.h         the Mamba-2 mixer of hybrid models
//   layers/embedding.h     the embedding and the head (logits, loss)
// and the whole-pass parts of the lowering:
//   precision.h            number formats and FP8 / NVFP4 casts
//   lowering/sharding.h    ZeRO-2/3 gathers and reduce-scatters in the passes
//   lowering/passes.h      tp_comm_overlap and the zb-h1 split backward
//   lowering/emitter.h     the shapes and emit helpers the parts share
//
// Adding a layer kind: see simulator/layers/layer_kind.h.
//
// Overlap is done analytically in the lowering so that a pass stays one
// task (the planner runs ~10^5 simulations; splitting passes per layer would
// multiply the task graph): what cannot be hidden stays an op on the pass,
// what is hidden is accounted in ChunkProgram (the *_hidden_s fields) and
// costs the compute it overlaps cost.comm_compute_slowdown() x the hidden
// time (LoweredOp::slowdown_s). The rules are in lowering/passes.h
// (tp_comm_overlap), lowering/sharding.h (ZeRO-2/3), layers/attention.h
// (context-parallel ring) and layers/moe.h (moe_a2a_overlap).
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
  kCpuOffload,         // exposed part of activation CPU offload / reload copies
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
  // backward runs in its W pass (lowering/passes.h).
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
// sits inside a node when t * cp <= GPUs per node. "Node" here and in each
// CommGroup's ranks_per_node is the NVLink domain (Cluster::nvlink_domain():
// the node on HGX/DGX, 72 GPUs on an NVL72 rack). With cp > 1 the groups
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
  // wrap-around): whether any rank pair crosses an NVLink domain.
  std::vector<bool> pipe_crosses_node;
  CommGroup embedding;           // first and last stage (tied embeddings)
  // Expert layers (MoE parallel folding, Plan::expert_parallel): the t*cp*d
  // ranks of a stage as etp x ep x edp, etp fastest.
  CommGroup expert_tensor;       // etp ranks (consecutive)
  CommGroup expert;              // ep ranks, stride etp: the all-to-all group
  CommGroup expert_data;         // edp ranks, stride etp * ep: expert gradients
  // Cluster::host_link_bytes_per_s: activation CPU offloading's copies.
  double host_link_bytes_per_s = 0;
};

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
  // pass (weight gradients), see lowering/passes.h. `backward` is still the
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
  // The low-precision transformer layers' share of `parameters` (the fp8 /
  // nvfp4 weight casts; not the bf16 layers of Plan::bf16_layers_at_*).
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

// Lowers the p * v chunks of `plan` into `*unique` and returns each chunk's
// program by model chunk (pointers into `*unique`, valid while it is not
// changed). Chunks with the same role (first / middle / last), layer count
// and, with MoE, windowed or chunked attention or bf16 layers in a
// low-precision plan, the same layer kinds layer by layer run the same
// kernels: each such kind is lowered once (lower_chunk), so `*unique` holds
// a few programs (first, middle(s), last) whatever p and v are. simulate()
// and the search's lowered bound (planner/search/prune.h) use it. Pure;
// thread-safe when `cost` is.
//
// REQUIRES: validate(model, plan).ok(); unique->empty().
std::vector<const ChunkProgram*> lower_plan_chunks(const Model& model, const Plan& plan,
                                                   const Placement& placement,
                                                   const CostModel& cost,
                                                   std::vector<ChunkProgram>* unique);

// The time of one pipeline transfer of `prog`'s per-micro-batch message
// (ChunkProgram::activation_send_bytes) across stage boundary `boundary`
// (stage r -> r + 1 forward or r + 1 -> r backward; p - 1 -> 0 for the
// interleaved wrap-around): a send/recv between two ranks, inside one NVLink
// domain or across domains (Placement::pipe_crosses_node). The simulator's
// engine runs each such transfer after the pass that produces it and before
// the pass that consumes it (simulate_internal.h).
//
// REQUIRES: 0 <= boundary < plan.pipeline_parallel of `placement`'s plan.
double pipeline_transfer_s(const ChunkProgram& prog, const Placement& placement,
                           const CostModel& cost, int boundary);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_LOWERING_H_

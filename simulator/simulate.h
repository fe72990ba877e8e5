// The simulator's entry point: one training iteration of a model, laid out by
// a plan on a cluster, replayed by the event engine.
#ifndef LLMPLAN_SIMULATOR_SIMULATE_H_
#define LLMPLAN_SIMULATOR_SIMULATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "simulator/caveats.h"
#include "simulator/cluster.h"
#include "simulator/cost_model.h"
#include "simulator/memory.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "base/status.h"

namespace llmplan::simulator {

// Most tasks one simulated iteration may have (kernels or collapsed passes,
// transfers, collectives): about 30 bytes each in the task graph, so about
// 250 MB at the limit. With a timeline kept (a name and times per task, and
// later a trace file of ~150 bytes per task) the limit is kMaxTimelineTasks.
// simulate() returns InvalidArgument instead of building a larger graph.
inline constexpr double kMaxSimulatedTasks = 8388608;  // 2^23
inline constexpr double kMaxTimelineTasks = 1048576;   // 2^20

struct SimOptions {
  // Source of durations; null means Roofline on the cluster's GPU.
  std::shared_ptr<const CostModel> cost_model;
  // Collapse each micro-batch pass into one task (exactly equal results, see
  // simulate_test.cc); false simulates every kernel and collective as a task.
  bool collapse_chains = true;
  // Keep every task's start/end for a trace (costs memory).
  bool keep_timeline = false;
  // Replay the iteration with the reference event engine (every edge stored,
  // start times computed in a separate pass: TaskGraph, Replay::kDeferred)
  // instead of the fast path. Results are bit-identical (simulate_fast_test.cc
  // checks it on hundreds of plans); for tests and benchmarks.
  bool reference_engine = false;
  // Extra memory to keep free per device, on top of the modelled CUDA
  // context, library buffers and allocator fragmentation (memory.h).
  double reserved_bytes = 0;
};

// Time one device of a stage spent, by cause, over one iteration. The parts
// (every field but end_s and the *_hidden_s ones) add up to the stage's end
// time. Overlap semantics are in lowering.h and the lowering/ headers it
// lists (tp_comm_overlap, ZeRO-2/3, context parallelism, MoE all-to-alls) and
// below (gradient buckets, hybrid all-reduce, post-optimizer gather).
struct StageBreakdown {
  double compute_s = 0;       // forward + backward kernels (recompute and fp8 casts excluded)
  double recompute_s = 0;     // recomputed forward kernels
  double tp_comm_s = 0;       // tensor-parallel collectives, exposed (all without tp_comm_overlap)
  double host_overhead_s = 0; // per-micro-batch host time
  double pp_exposed_s = 0;    // waiting for pipeline transfers
  double bubble_s = 0;        // waiting for other stages' compute (pipeline fill/drain)
  double dp_exposed_s = 0;    // waiting for per-step gradient reduction / parameter gather
  double optimizer_s = 0;     // optimizer step (fp8: with the weights' cast to fp8)
  double fp8_cast_s = 0;      // fp8: casts of the linear GEMMs' inputs and output gradients
  // ZeRO-3 per-layer parameter all-gathers, exposed part (on the compute path).
  double fsdp_gather_exposed_s = 0;
  // ZeRO-2/3 per-micro-batch gradient reduce-scatters, exposed part.
  double fsdp_reduce_scatter_exposed_s = 0;
  // Context-parallel KV exchange (ring send_recv or all-gather /
  // reduce-scatter), exposed part (layers/attention.h).
  double cp_comm_s = 0;
  // MoE dispatch and combine all-to-alls over the expert-parallel group,
  // exposed part (layers/moe.h).
  double moe_a2a_s = 0;
  // Activation CPU offloading (Plan::cpu_offload_layers): the offload and
  // reload copies' time beyond the layer compute they overlap, exposed.
  double cpu_offload_s = 0;
  // SM contention: compute slowed by collectives overlapped with it
  // (CostModel::comm_compute_slowdown() x the hidden time of the new overlaps).
  double overlap_slowdown_s = 0;
  double end_s = 0;           // when this stage finishes the iteration
  // Not parts of end_s: collective time hidden under compute.
  double tp_comm_hidden_s = 0;  // tp_comm_overlap
  double dp_comm_hidden_s = 0;  // per-step DP collectives (buckets, post-optimizer gather)
  double fsdp_hidden_s = 0;     // ZeRO-2/3 per-layer gathers and reduce-scatters
  double cp_comm_hidden_s = 0;  // context-parallel ring transfers under attention blocks
  double moe_a2a_hidden_s = 0;  // MoE all-to-alls hidden under compute (moe_a2a_overlap)
  // Informational, a subset of compute_s + recompute_s (not a separate part):
  // the MoE kernels (router GEMM, routing, permutation, expert GEMMs).
  double expert_compute_s = 0;
};

struct StageReport {
  int stage = 0;
  int layers = 0;
  StageBreakdown time;
  MemoryBreakdown memory;
};

// One task of the simulated timeline (for --trace).
struct TimelineEvent {
  int stage = 0;
  int stream = 0;        // StreamKind
  double start_s = 0, end_s = 0;
  std::string name;      // "F mb3 c0", "qkv_gemm.fwd", "all_reduce dp bucket 2", ...
};

struct StepReport {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double model_flops = 0;       // per iteration, all GPUs (no recompute)
  double hardware_flops = 0;    // per iteration, all GPUs (what ran)
  double mfu = 0;               // model FLOPs / (time * GPUs * peak)
  double hfu = 0;               // hardware FLOPs / (time * GPUs * peak)
  double peak_memory_bytes = 0; // max over stages
  double memory_capacity_bytes = 0;
  bool fits_in_memory = true;
  double memory_overflow_bytes = 0;  // peak - capacity when it does not fit
  int critical_stage = 0;       // the stage that finishes last
  StageBreakdown breakdown;     // of the critical stage
  std::vector<StageReport> stages;
  int num_gpus = 0;
  // Model::parameter_count() and active_parameter_count() (equal for a dense model).
  double total_params = 0;
  double active_params = 0;
  int num_tasks = 0;
  std::string cost_model;
  // Bitmask of CaveatBit (caveats.h): where this result lies outside what the
  // Roofline constants were calibrated on. Set for the Roofline cost model
  // (SimOptions::cost_model null) only: a measured profile has no such
  // calibration, so other cost models leave it 0. Render with caveat_list().
  uint32_t caveats = 0;
  std::vector<TimelineEvent> timeline;  // only with keep_timeline
};

// Runs one training step of `model`, laid out by `plan`, on `cluster`.
//
// Data parallelism by ZeRO stage (Plan::sharding_stage(); S =
// shard_ranks(), the shard group being S consecutive DP x CP ranks, so S * t
// <= gpus_per_node stays on NVLink; with context parallelism every group
// below that reduces or shards the state spans the d * cp ranks, see
// Placement in lowering.h):
//  - stage 0: gradients all-reduced over the d * cp ranks; stage 1: reduce-
//    scattered over the shard group. Both once per step, in buckets
//    (grad_bucket_bytes) after each chunk's last micro-batch backward (zb-h1:
//    its last W step, which computes the weight gradients),
//    overlapping it when overlap_grad_reduce (no SM contention charged: the
//    A100 calibration absorbs it).
//  - zb-h1 (schedule.h): each backward is a B step, after which the input
//    gradient is sent upstream at once, and a W step at its place in the
//    stage's order on the compute stream (lowering/passes.h, split backward).
//  - stages 2 and 3: reduce-scattered after every micro-batch's backward,
//    per layer, inside the pass (lowering/sharding.h, with stage 3's per-layer
//    parameter all-gathers).
//  - hybrid (S < d, stage >= 1): the 1/S gradient shard is also all-reduced
//    across the d / S replicas (ranks S * t apart), once per step after the
//    stage's last pass and its reduce-scatters, before the optimizer.
//  - the optimizer updates params / S on stages >= 1. Stages 1 and 2 then
//    all-gather the bf16 parameters over the shard group (stage 1, dense, FP8
//    delayed/current: layer weights at 1 byte, fp8_param_gather); stage 3 does
//    not. With overlap_param_gather that gather runs under the next
//    iteration's forward: only max(0, gather - the stage's first forward pass
//    of each of its chunks) is exposed, plus comm_compute_slowdown() x the
//    hidden part, both counted at the end of this iteration. An approximation
//    (steady state of consecutive iterations) that ignores that the pipeline
//    fill may leave a stage idle (and the gather free) before its first forward.
//  - MoE models (layers/moe.h): the routed experts' gradients are reduced
//    over Placement::expert_data (the edp = t*cp*d / (etp*ep) ranks holding
//    the same experts; nothing when edp = 1) in their own buckets (a
//    bucket cut flushes the dense and the expert bytes, each to its group),
//    the rest over the groups above. With stages >= 1 the expert state is
//    sharded over the whole expert-data group (fsdp_group does not apply to
//    it): the optimizer updates dense / S + experts / edp parameters, and
//    the stage 1/2 parameter all-gather adds the experts' over expert_data.
//
// Pure and re-entrant: reads only its arguments and may run on many threads
// at once. The same inputs always give an identical report. Each thread
// keeps its working buffers (the task graph, transfer times) for its next
// simulation, so a planner's thousands of simulations do not allocate and
// page in fresh memory each time; every buffer is reset before use, so no
// result depends on an earlier call (buffers of more than 2^18 tasks are
// freed after use).
//
// How an iteration is replayed: with collapsed passes and no timeline (the
// default), the pipeline passes and transfers are timed directly as they
// are emitted (start = max(end of the stream's previous task, end of the
// transfer it consumes)), 1F1B pipelines in a fixed order in which nothing
// waits, and only the per-step data-parallel work (gradient buckets,
// optimizer, parameter gather) goes through the event engine's TaskGraph.
// SimOptions::reference_engine replays everything through the TaskGraph;
// both give bit-identical reports (simulate_fast_test.cc).
//
// InvalidArgument if the plan does not divide the model, a field is out of
// range, the plan needs more GPUs than the cluster has (when its node count
// is set), the iteration would need more than kMaxSimulatedTasks tasks, or
// the cost model gives a duration that is negative or not finite (or the
// iteration time overflows), naming the kernel or collective. A plan that
// runs out of memory is a result, not an error: fits_in_memory is false and
// memory_overflow_bytes says by how much.
Result<StepReport> simulate(const Model& model, const Plan& plan, const Cluster& cluster,
                            const SimOptions& options = {});

// What simulate() derives from the cluster and the cost model alone: the
// cluster validated, the cost model (SimOptions::cost_model, or the Roofline
// of the cluster's GPU, built once) and its description. A search builds one
// and shares it, read-only, by every simulation on every thread, instead of
// validating the cluster and building a Roofline (a copy of the GPU's
// constants and measured collective curves) for each plan.
class SimSetup {
 public:
  // InvalidArgument as simulate() gives it for an invalid cluster. Keeps a
  // reference to `cluster`, which must outlive the setup.
  static Result<SimSetup> make(const Cluster& cluster,
                               std::shared_ptr<const CostModel> cost_model = nullptr);
  const Cluster& cluster() const { return *cluster_; }
  const CostModel& cost() const { return *cost_; }
  const std::string& cost_description() const { return cost_description_; }
  // The Roofline of the cluster's GPU (no cost model given): results carry caveats.
  bool roofline() const { return roofline_; }

 private:
  SimSetup() = default;
  const Cluster* cluster_ = nullptr;
  std::shared_ptr<const CostModel> cost_;
  std::string cost_description_;
  bool roofline_ = true;
};

// simulate() with the cluster and cost model of `setup` (options.cost_model
// is not read): the same report, bit for bit, as simulate(model, plan,
// setup.cluster(), options with setup's cost model).
Result<StepReport> simulate(const Model& model, const Plan& plan, const SimSetup& setup,
                            const SimOptions& options = {});

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_SIMULATE_H_

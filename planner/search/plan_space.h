// The space of parallel plans the planner, `sweep` and `schedule` search: one
// value with a list per axis. An empty list means "the planner chooses" (its
// automatic rule, documented per field); a non-empty list is exactly the
// values tried. New axes (ZeRO stage, context parallelism, FP8, experts) are
// new fields here, read by enumerate_plans().
#ifndef LLMPLAN_PLANNER_SEARCH_PLAN_SPACE_H_
#define LLMPLAN_PLANNER_SEARCH_PLAN_SPACE_H_

#include <array>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "base/status.h"

namespace llmplan::planner {

// A yes/no axis: fixed, or both values tried.
enum class Choice { kAuto, kOn, kOff, kBoth };

// "on", "off", "both" (flags) ; InvalidArgument naming `flag` otherwise.
Result<Choice> parse_choice(const std::string& text, const std::string& flag);
const char* to_string(Choice c);

// The default global-batch ladder in tokens: powers of two from 1 Mi to
// kBatchLadderTopTokens = 64 Mi, reaching what the largest published runs
// use: Llama 3 405B ended pre-training at 16M tokens per step on 16K H100s
// (Dubey et al. 2024, "The Llama 3 Herd of Models", section 3.4.1: 4M, then
// 8M, then 16M tokens); DeepSeek-V3 trained with 15,360 sequences of 4,096
// tokens, about 63M tokens (DeepSeek-AI 2024, arXiv 2412.19437, section
// 4.2). No published run used more, so the ladder stops at the first rung
// above 63M. The global batch bounds the GPUs a layout can use: every
// replica runs at least one micro-batch (p of them with a pipeline), so
// GPUs <= t x cp x B / b.
inline constexpr double kBatchLadderTopTokens = 67108864.0;  // 2^26
std::vector<double> default_batch_ladder_tokens();

// The compute-optimal global batch in tokens for a training run of `flops`
// model FLOPs: DeepSeek LLM (arXiv 2401.02954, section 3.1) fit
// B_opt = 0.2920 * C^0.3271. The planner's automatic ladder stops at the
// first rung at or above it (the top rung when it is above the ladder), so
// small models are not given batches far beyond what they train well with.
double compute_optimal_batch_tokens(double flops);

struct PlanSpace {
  // Global batch per optimizer step. In sequences when `global_batch` is
  // non-empty; otherwise in tokens (`global_batch_tokens`, divided by the
  // model's sequence length and rounded); both empty: the default ladder
  // (enumerate_plans tries all of it; the planner narrows it per model with
  // auto_batch_ladder). Each value is rounded to the nearest multiple of
  // d*b (at least one micro-batch per replica).
  std::vector<double> global_batch_tokens;
  std::vector<int> global_batch;
  // Tensor-parallel sizes; empty: powers of two up to the GPUs per node (and 8).
// Sizes that do not divide the GPUs per node are skipped: a group of t
// consecutive ranks would straddle nodes, where the simulator prices TP
// collectives over NVLink.
  std::vector<int> tp;
  // Pipeline sizes; empty: the divisors of the layer count and the powers of
  // two, up to min(layers, 128).
  std::vector<int> pp;
  // Context-parallel sizes (simulator/plan.h: GPUs = t * cp * p * d); empty:
  // auto_context_parallel(model), 1 only for sequences up to 8192 tokens.
  // Sizes that do not split the sequence into 2 * cp chunks are skipped.
  std::vector<int> context_parallel;
  // Micro-batch sizes; empty: 1, 2, 4.
  std::vector<int> micro_batch;
  // Interleaving (virtual stages per pipeline rank); empty: 1 and 2.
  std::vector<int> virtual_stages;
  // Schedules of pipelines without interleaving (p > 1, v = 1): kOneFOneB
  // and/or kZbH1 (schedule.h); empty: kAutoSchedules. Interleaved plans
  // (v > 1) always run interleaved 1F1B; p = 1 has no pipeline schedule.
  std::vector<simulator::Schedule> schedule;
  // Activation recomputation; empty: none, or full where the analytic
  // memory estimate says none does not fit.
  std::vector<simulator::Recompute> recompute;
  Choice sequence_parallel = Choice::kAuto;      // auto: on when t > 1
  Choice distributed_optimizer = Choice::kAuto;  // auto: on when d * cp > 1
  // ZeRO stages (0..3, simulator/plan.h); empty: from distributed_optimizer
  // (auto: 1 when d > 1). With d = 1 every stage is stage 0.
  std::vector<int> zero_stage;
  // Hybrid-sharding group sizes S (FSDP HYBRID_SHARD) tried for sharded
  // plans where S divides d and is smaller than it; empty, or no listed S
  // applying: the whole data-parallel group.
  std::vector<int> fsdp_group;
  // The overlaps. Automatic in the planner (enumerate_plans) = what the
  // Megatron-Core / NeMo recipes run: NeMo's llama3_70b recipe
  // (nemo/collections/llm/recipes/llama3_70b.py, NVIDIA/NeMo 0189a3b) sets
  // DistributedDataParallelConfig(overlap_grad_reduce=True,
  // overlap_param_gather=True) with the distributed optimizer, and its
  // performance recipe adds MegatronCommOverlapCallback(tp_comm_overlap=True)
  // (Megatron-Core overlaps TP communication only with sequence parallelism).
  // In `sweep` (expand_sharding_axes on a config's plan) automatic keeps the
  // config's values.
  Choice tp_comm_overlap = Choice::kAuto;       // auto: on when t > 1 with SP (meaningful when t > 1)
  Choice overlap_grad_reduce = Choice::kAuto;   // auto: on (meaningful when d * cp > 1)
  Choice overlap_param_gather = Choice::kAuto;  // auto: on when sharded (ZeRO 1-3; meaningful
                                                // when sharded, d * cp > 1)
  // Training precisions (simulator::Precision); empty: bf16, and fp8 too
  // where the GPU has FP8 tensor cores (GpuSpec::peak_fp8_flops > 0). fp8 is
  // skipped on GPUs without FP8, nvfp4 (listed only, never by default) on
  // GPUs without FP4 (peak_fp4_flops 0). FP8 plans use fp8_recipe.
  std::vector<simulator::Precision> precision;
  simulator::Fp8Recipe fp8_recipe = simulator::Fp8Recipe::kDelayed;
  // Expert-parallel sizes for MoE models (simulator/plan.h: ep ranks within
  // the t * cp * d ranks of a stage, etp = 1); a size must divide the
  // model's experts and t * cp * d. Empty: auto_expert_parallel(). Dense
  // models always get ep = 1.
  std::vector<int> expert_parallel;
  // Dispatch/combine all-to-all overlapped with another micro-batch's compute
  // (Plan::moe_a2a_overlap); auto: both off and on where ep > 1. Dense
  // models and ep = 1: off.
  Choice moe_a2a_overlap = Choice::kAuto;
  int max_model_parallel = 0;  // t * p at most this; 0: no limit
  // Only plans that use as many of the GPUs as the layout allows (d the
  // most that fits); otherwise also the widths of every G / 2^k GPUs
  // (data_parallel_widths).
  bool all_gpus_only = false;
  // Every width of data_parallel_widths (Widths::kEvery): the planner sets
  // it under a budget, where a narrower, cheaper layout may be the answer.
  bool every_width = false;
};

// OK when every list value is in its domain (t, p, b, v >= 1 and within the
// simulator's bounds, batch tokens finite and positive, sequences within
// Plan::kMaxGlobalBatch, max_model_parallel >= 0). InvalidArgument naming the
// flag ("--tp: 0 is not a positive size") otherwise.
Status validate(const PlanSpace& space);

// Contradictions between a space and a model: OK when at least one listed
// t divides the heads, KV heads and FFN size, one listed p is at most
// the layers, and a listed ep applies (an MoE model with an ep dividing its
// experts; a dense model only with ep 1). InvalidArgument naming the flag and the model otherwise
// ("--tp 3: divides none of llama3-70b's 64 heads").
Status check_against_model(const PlanSpace& space, const simulator::Model& model);

// Contradictions between a space and the cluster it plans for, found before
// any search: OK unless a fixed axis leaves no plan on any model of `gpus`
// GPUs of `cluster` -- listed precisions the GPU cannot run (fp8 without FP8
// tensor cores, the mxfp8 recipe without block scaling), or listed tp sizes
// none of which forms a tensor-parallel group within an NVLink domain (t must
// divide Cluster::nvlink_domain(), the node on HGX/DGX, and be at most `gpus`;
// gpus <= 0: not checked). InvalidArgument naming the flag,
// the GPU or cluster and the reason otherwise ("--precision fp8: GPU
// a100-80gb has no FP8 tensor cores ...").
Status check_against_cluster(const PlanSpace& space, const simulator::Cluster& cluster, int gpus);

// The axes of `space` the user fixed, as flags ("--tp 3 --precision fp8"), for
// messages about a space that leaves no layout; "" when all are automatic.
std::string fixed_axes(const PlanSpace& space);

// Why enumerate_plans() kept or dropped layouts.
struct EnumerationStats {
  long layouts = 0;        // (t, p, v, d, b, B) combinations valid for the model
  long most_gpus = 0;      // the most GPUs one of those layouts uses
  long memory_pruned = 0;  // of those, dropped: weights/activations overflow memory
  long kept = 0;
};

// The automatic expert-parallel sizes of an MoE model with `experts` experts
// on a stage of `stage_ranks` = t * cp * d ranks (ranks of a stage are
// numbered t fastest, then cp, then d, so ep consecutive ranks share an
// NVLink domain when ep <= its GPUs): the largest power of two dividing both
// that fits the domain (`domain_gpus` = Cluster::nvlink_domain(): the node on
// HGX/DGX, 72 on NVL72; NVLink all-to-all), and the largest up to
// kMaxAutoExpertParallel (across domains, as the published 64-way EP runs)
// when larger. When the domain is larger than a node (`gpus_per_node`: a
// rack-scale domain) and already holds that largest size, half of it too
// (NVL72: 32 and 64). Two values at most, so MoE shapes cost the search at
// most twice (four times with the a2a overlap axis) a dense shape's plans;
// ep = 1 (every expert on every GPU) is tried only when nothing larger
// divides. Ascending; never empty.
inline constexpr int kMaxAutoExpertParallel = 64;
std::vector<int> auto_expert_parallel(int experts, int stage_ranks, int domain_gpus,
                                      int gpus_per_node);

// The automatic context-parallel sizes for `model`: {1} for sequences of at
// most 8192 tokens; beyond, also 2, 4 and 8 where 2 * cp divides the sequence
// (long-context training splits sequences over CP ranks: Llama 3 405B used
// CP 16 at 128K).
std::vector<int> auto_context_parallel(const simulator::Model& model);

// The data-parallel widths tried for a layout of model-parallel size
// t * cp * p on G GPUs (d_max = G / (t cp p)), global batch `target`
// sequences and micro-batch b: the widest layout of G / 2^k GPUs,
// w_k = min(d_max / 2^k, cap) for k = 0, 1, ..., where cap = target / (b p)
// is the widest d whose pipeline still fills (at least p micro-batches per
// replica; target / b for p = 1). Descending, no duplicates:
//  - kWidest: w_0 alone (PlanSpace::all_gpus_only);
//  - kFloor (the default): w_0, w_1, and the further w_k while at least
//    cap / kNarrowestWidthDivisor (about 8p micro-batches per replica,
//    bubble under 11 %);
//  - kEvery: every w_k down to 1 (PlanSpace::every_width).
// Because d_max(2G) / 2 = d_max(G), the widths for 2G include every width
// for G of kEvery, and of kFloor every one at least the G-independent
// floor: the plan space of a shape grows with the GPUs, which keeps the
// planner's answer from shrinking when GPUs are added (issue 25: 65,536
// GPUs once lost every layout with more than two stages, as d = B / b left
// one micro-batch per replica). A width below the floor runs more than 8p
// micro-batches per replica; for the time the widest layout on 2G GPUs
// beats it (half the passes per replica, the same memory or less), so only
// a budget, which may prefer fewer GPUs, needs kEvery, and narrower widths
// would otherwise only add passes to simulate (m p v of them per plan).
inline constexpr int kNarrowestWidthDivisor = 8;
enum class Widths { kWidest, kFloor, kEvery };
std::vector<int> data_parallel_widths(int d_max, int target, int b, int p, Widths widths);

// The plans worth simulating for `model` on at most `gpus` GPUs of
// `cluster` within `space`: t | heads, kv heads and FFN; t <= GPUs per node;
// cp from the space (2 * cp dividing the sequence); p with every chunk
// getting layers; d from data_parallel_widths();
// the global batch rounded to a multiple of d*b;
// v > 1 only with p > 1 and p*v dividing the layers; for MoE models ep from
// the space (dividing the experts and t * cp * d) and the a2a-overlap axis;
// pipelines that never
// fill (fewer micro-batches than stages) dropped; plans whose analytic peak
// memory overflows the GPU dropped. Deterministic order; no duplicates.
//
// With a `memo`, what is learnt about each layout (t, cp, p, d, b, B, v, sp:
// whether it is valid and fills, its plans with the recompute that fits, and
// their counts in EnumerationStats) is kept and reused by the calls at other
// GPU counts: a layout's plans do not depend on the count, and a layout
// whose width is capped by its batch (d = B / (b p)) recurs at every larger
// count. The result and *stats are identical with or without a memo.
class LayoutMemo;
std::vector<simulator::Plan> enumerate_plans(const simulator::Model& model,
                                             const simulator::Cluster& cluster, int gpus,
                                             const PlanSpace& space,
                                             EnumerationStats* stats = nullptr,
                                             LayoutMemo* memo = nullptr);

// enumerate_plans()'s layouts of one model, one cluster and one PlanSpace,
// shared by its calls at different GPU counts. `schedule`'s throughput
// curves enumerate 18,724 counts per model at 149,792 GPUs, where most
// layouts recur; the memo computes each layout's validity checks, plan
// expansion and memory estimates once. A memo belongs to the first model and
// cluster it is used with (a call with another is a checked bug) and to one
// PlanSpace (the caller's contract, as EnumerationCache's). Not thread-safe:
// one memo per thread.
class LayoutMemo {
 public:
  // (t, cp, p, d, b, global batch, v, sequence parallel).
  using Key = std::array<int, 8>;
  struct Layout {
    std::vector<simulator::Plan> plans;  // in enumeration order
    EnumerationStats stats;              // what listing the layout adds
  };
  // The layout under `key`, or nullptr when it was never listed.
  const Layout* find(const Key& key) const;
  // Stores `layout` under `key` (not yet present); the stored value.
  const Layout& insert(const Key& key, Layout layout);
  // Checks that the memo is used with one model and cluster only.
  void bind(const simulator::Model& model, const simulator::Cluster& cluster);
  long layouts() const { return static_cast<long>(layouts_.size()); }

 private:
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  std::unordered_map<Key, Layout, KeyHash> layouts_;
  bool bound_ = false;
  simulator::Model model_;
  simulator::Cluster cluster_;
};

// The schedules the automatic schedule axis tries for p > 1, v = 1: 1F1B
// and zb-h1. A zb-h1 plan once cost 7-10x a 1F1B plan to simulate (its
// steps listed and replayed through the work list), so zb-h1 was searched
// only when asked for; since issue 30 the fast path replays it in 1F1B's
// ordered loop (simulate_fast.cc) at about 1.3x a 1F1B plan's cost (llmplan
// --gpus 3360 --days 30, one thread: 3,367 zb-h1 plans add 0.41 s of CPU to
// the 5,447 1F1B plans' 0.52 s), and its plans (less bubble) are part of the
// automatic space.
inline const std::vector<simulator::Schedule> kAutoSchedules = {
    simulator::Schedule::kOneFOneB, simulator::Schedule::kZbH1};

// The plans `base` becomes along the schedule axis: for p > 1 and v = 1 one
// plan per schedule of space.schedule (kAutoSchedules when empty); otherwise
// base alone. Shared by the planner and `sweep`.
std::vector<simulator::Plan> expand_schedule_axis(const PlanSpace& space,
                                                  const simulator::Plan& base);

// The plans `base` becomes along the expert axes of `space` for an MoE
// `model`: one per ep (listed sizes dividing the experts and t * cp * d, or
// auto_expert_parallel) and a2a overlap (see PlanSpace), etp = 1; a dense
// model: base alone. Possibly empty (no listed ep applies). Shared by the
// planner and `sweep`.
std::vector<simulator::Plan> expand_expert_axes(const PlanSpace& space,
                                                const simulator::Model& model,
                                                const simulator::Plan& base, int domain_gpus,
                                                int gpus_per_node);

// The plans `base` becomes along the sharding and overlap axes of `space`:
// ZeRO stage (zero_stage, or distributed_optimizer), FSDP group, tensor-
// parallel overlap, gradient-reduce overlap, parameter-gather overlap. An
// automatic axis keeps base's value; values without meaning for base's
// layout collapse (no sharding or overlaps with d * cp = 1, no TP overlap
// with t = 1). Fixed order, no duplicates; shared by the planner and `sweep`.
std::vector<simulator::Plan> expand_sharding_axes(const PlanSpace& space,
                                                  const simulator::Plan& base);

// The precisions `space` tries on `gpu` (see PlanSpace::precision), in
// order: bf16 first. Never empty unless every listed one needs FP8 and the
// GPU has none.
std::vector<simulator::Precision> precisions_for(const PlanSpace& space,
                                                 const simulator::GpuSpec& gpu);

// `plan` with fewer micro-batches where that cannot change its memory
// (simulator::stage_memory): the planner's memory estimate of every
// enumerated plan runs on it (issue 30: walking an interleaved schedule of
// m micro-batches for each of p stages was 29 % of the MoE search's CPU).
// stage_memory reads the global batch only through the in-flight counts of
// simulator/schedule.h (peak_in_flight, peak_in_flight_split); with
// m = num_micro_batches() they stop depending on m at
//  - 1F1B (v = 1), m >= p: stage s holds its p - s - 1 warm-up forwards
//    plus one (the closed form in peak_in_flight);
//  - zb-h1 (v = 1), m > p: every stage walks the same kinds of steps
//    (w = p - s - 1 forwards, L = s (F, B) pairs, one (F, B, W), w (B, W)
//    pairs, L W's; the repeated steady (F, B, W) iterations between are
//    skipped by peak_in_flight_split and leave the counts unchanged);
//  - interleaved (v > 1), m != p and m v > W = 2 (p - 1) + (v - 1) p (the
//    largest warm-up, stage 0): the first peak comes with the forward after
//    each stage's warm-up, and which chunks those warm-up + 1 forwards
//    belong to depends on p and v only (F, B pairs then hold the total, the
//    cool-down lowers it);
// so the plan returned has min(m, M) micro-batches with M = p, p + 1, and
// the least multiple of p that is >= 2p and > W / v (a valid interleaved
// count) for the three; any other schedule, or m <= M: `plan` unchanged.
// tests/planner/memory_canonical_test.cc checks stage_memory(plan) ==
// stage_memory(memory_canonical_plan(plan)) byte for byte on every
// schedule, p, v and m up to beyond M.
simulator::Plan memory_canonical_plan(const simulator::Plan& plan);

// The automatic batch for a run of `flops` model FLOPs: the first rung of
// the default ladder at or above compute_optimal_batch_tokens(flops) (the
// top rung when none is). One rung: a larger batch of the same layout is
// never slower per token, so lower rungs would only add smaller
// data-parallel widths, which data_parallel_widths() already tries.
std::vector<double> auto_batch_ladder(double flops);

// Human-readable summary of the space for reports ("tp auto, pp auto, batch
// ladder 1M..16M tokens (capped per model), ...").
std::string describe(const PlanSpace& space);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SEARCH_PLAN_SPACE_H_

#include "planner/search/plan_space.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <tuple>
#include <utility>

#include "simulator/memory.h"

namespace llmplan::planner {

using simulator::Model;
using simulator::Plan;
using simulator::Recompute;

Result<Choice> parse_choice(const std::string& text, const std::string& flag) {
  if (text == "on") return Choice::kOn;
  if (text == "off") return Choice::kOff;
  if (text == "both") return Choice::kBoth;
  return Status::invalid_argument(flag + ": expected on, off or both, got '" + text + "'");
}

const char* to_string(Choice c) {
  switch (c) {
    case Choice::kAuto: return "auto";
    case Choice::kOn: return "on";
    case Choice::kOff: return "off";
    case Choice::kBoth: return "both";
  }
  return "auto";
}

std::vector<double> default_batch_ladder_tokens() {
  std::vector<double> out;
  for (double t = 1048576.0; t <= kBatchLadderTopTokens; t *= 2) out.push_back(t);
  return out;
}

double compute_optimal_batch_tokens(double flops) {
  if (!(flops > 0) || !std::isfinite(flops)) return 0;
  return 0.2920 * std::pow(flops, 0.3271);
}

std::vector<double> auto_batch_ladder(double flops) {
  const std::vector<double> ladder = default_batch_ladder_tokens();
  const double best = compute_optimal_batch_tokens(flops);
  size_t top = 0;
  while (top + 1 < ladder.size() && ladder[top] < best) ++top;
  return {ladder[top]};
}

namespace {

// Analytic peak memory of the worst stage, bytes (weights, optimizer state,
// activations); the simulator's figure decides in the end.
double estimate_peak_bytes(const Model& model, const Plan& plan) {
  std::vector<double> params;
  if (model.is_moe()) {
    // As the lowering counts them: each MoE layer's routed experts over
    // ep x etp, the rest over t (memory.h).
    params = simulator::stage_parameters_per_device(model, plan);
  } else {
    const int p = plan.pipeline_parallel, v = plan.virtual_stages, t = plan.tensor_parallel;
    params.assign(p, 0.0);
    const double layer = static_cast<double>(model.layer_parameters()) / t;
    for (int c = 0; c < p * v; ++c) {
      params[c % p] += layer * simulator::layers_in_chunk(model, plan, c);
    }
    params[0] += static_cast<double>(model.embedding_parameters()) / t;
    params[p - 1] += static_cast<double>(model.head_parameters()) / t;
    if (p > 1 && model.tied_embeddings) {
      params[p - 1] += static_cast<double>(model.embedding_parameters()) / t;
    }
  }
  double peak = 0;
  for (const auto& m : simulator::stage_memory(model, memory_canonical_plan(plan), params, 0.0)) {
    peak = std::max(peak, m.total_bytes());
  }
  return peak;
}

}  // namespace

simulator::Plan memory_canonical_plan(const Plan& plan) {
  const int p = plan.pipeline_parallel, v = plan.virtual_stages;
  const long m = plan.num_micro_batches();
  long most = 0;  // M of plan_space.h
  if (v == 1 && plan.schedule == simulator::Schedule::kOneFOneB) {
    most = p;
  } else if (v == 1 && plan.schedule == simulator::Schedule::kZbH1) {
    most = static_cast<long>(p) + 1;
  } else if (v > 1 && plan.schedule == simulator::Schedule::kInterleaved) {
    const long warmup = 2L * (p - 1) + static_cast<long>(v - 1) * p;
    const long pv = static_cast<long>(p) * v;
    most = static_cast<long>(p) * std::max(2L, (warmup + pv) / pv);  // p x ceil((W + 1) / pv)
  }
  if (most <= 0 || m <= most) return plan;
  Plan out = plan;
  out.global_batch_size = static_cast<int>(most * plan.data_parallel * plan.micro_batch_size);
  return out;
}

namespace {

std::vector<int> auto_pipeline_degrees(int layers) {
  std::vector<int> out;
  for (int p = 1; p <= std::min(layers, 128); ++p) {
    const bool pow2 = (p & (p - 1)) == 0;
    if (layers % p == 0 || pow2) out.push_back(p);
  }
  return out;
}

}  // namespace

std::vector<int> data_parallel_widths(int d_max, int target, int b, int p, Widths widths) {
  // Pipelines need at least p micro-batches of b per replica (1F1B fills):
  // a wider d only drops the layout.
  const int cap = std::max(1, target / b / std::max(1, p));
  const int narrowest = widths == Widths::kEvery ? 1 : std::max(1, cap / kNarrowestWidthDivisor);
  std::vector<int> out;
  int k = 0;
  for (int d = d_max; d >= 1; d /= 2, ++k) {
    const int w = std::min(d, cap);
    if (k > 0 && widths == Widths::kWidest) break;
    if (k > 1 && w < narrowest) break;
    if (out.empty() || out.back() != w) out.push_back(w);
  }
  return out;
}

namespace {

std::vector<bool> choice_values(Choice c, bool auto_value, bool meaningful) {
  if (!meaningful) return {false};
  switch (c) {
    case Choice::kAuto: return {auto_value};
    case Choice::kOn: return {true};
    case Choice::kOff: return {false};
    case Choice::kBoth: return {false, true};
  }
  return {auto_value};
}

// The fields the planner's axes set, as a tuple: the duplicate check's
// order (PlanLess).
auto plan_key(const Plan& p) {
  return std::make_tuple(p.tensor_parallel, p.context_parallel, p.pipeline_parallel, p.data_parallel,
                         p.micro_batch_size, p.global_batch_size, p.virtual_stages,
                         p.sequence_parallel, p.distributed_optimizer, p.zero_stage,
                         p.fsdp_group, p.tp_comm_overlap, p.overlap_grad_reduce,
                         p.overlap_param_gather, static_cast<int>(p.recompute),
                         static_cast<int>(p.precision), static_cast<int>(p.fp8_recipe),
                         static_cast<int>(p.schedule), p.expert_parallel,
                         p.expert_tensor_parallel, p.moe_a2a_overlap);
}

// A strict order on plans for the duplicate check.
using PlanLess = decltype([](const Plan& a, const Plan& b) { return plan_key(a) < plan_key(b); });

}  // namespace

std::vector<int> auto_expert_parallel(int experts, int stage_ranks, int domain_gpus,
                                      int gpus_per_node) {
  auto largest = [&](int cap) {
    int best = 1;
    for (int e = 2; e <= cap; e *= 2) {
      if (experts % e == 0 && stage_ranks % e == 0) best = e;
    }
    return best;
  };
  const int in_domain = largest(std::max(1, domain_gpus));
  const int across = largest(kMaxAutoExpertParallel);
  if (across > in_domain) return {in_domain, across};
  // A rack-scale domain (NVL72) holds the whole range: the next size down
  // as well, so the search weighs two in-domain sizes (the published GB200
  // recipes run EP 32 and 64). HGX/DGX keep one value here.
  if (domain_gpus > gpus_per_node && in_domain >= 4) return {in_domain / 2, in_domain};
  return {in_domain};
}

std::vector<int> auto_context_parallel(const Model& model) {
  std::vector<int> out = {1};
  if (model.seq_length <= 8192) return out;
  for (int cp : {2, 4, 8}) {
    if (model.seq_length % (2 * cp) == 0) out.push_back(cp);
  }
  return out;
}

std::vector<Plan> expand_schedule_axis(const PlanSpace& space, const Plan& base) {
  if (base.pipeline_parallel <= 1 || base.virtual_stages > 1) return {base};
  std::vector<Plan> out;
  for (simulator::Schedule s : space.schedule.empty() ? kAutoSchedules : space.schedule) {
    Plan plan = base;
    plan.schedule = s;
    out.push_back(plan);
  }
  return out;
}

std::vector<Plan> expand_expert_axes(const PlanSpace& space, const Model& model, const Plan& base,
                                     int domain_gpus, int gpus_per_node) {
  if (!model.is_moe()) return {base};
  const int64_t stage_ranks =
      static_cast<int64_t>(base.tensor_parallel) * base.context_parallel * base.data_parallel;
  std::vector<int> eps;
  if (space.expert_parallel.empty()) {
    eps = auto_expert_parallel(model.num_experts, static_cast<int>(std::min<int64_t>(
                                                      stage_ranks, Plan::kMaxGpus)),
                               domain_gpus, gpus_per_node);
  } else {
    for (int ep : space.expert_parallel) {
      if (model.num_experts % ep == 0 && stage_ranks % ep == 0) eps.push_back(ep);
    }
  }
  std::vector<Plan> out;
  for (int ep : eps) {
    // Automatic overlap: both off and on; the simulator says which is faster.
    const std::vector<bool> overlaps =
        ep <= 1 ? std::vector<bool>{false}
        : space.moe_a2a_overlap == Choice::kAuto ? std::vector<bool>{false, true}
                                                 : choice_values(space.moe_a2a_overlap, false, true);
    for (bool overlap : overlaps) {
      Plan plan = base;
      plan.expert_parallel = ep;
      plan.expert_tensor_parallel = 1;
      plan.moe_a2a_overlap = overlap;
      out.push_back(plan);
    }
  }
  return out;
}

std::vector<Plan> expand_sharding_axes(const PlanSpace& space, const Plan& base) {
  const int d = base.data_parallel;
  // The ranks sharing the gradients: d * cp (simulator/plan.h).
  const int64_t ranks = static_cast<int64_t>(d) * base.context_parallel;
  // ZeRO stages as (distributed_optimizer, zero_stage) pairs, stage 1 being
  // the distributed optimizer as the existing flag and JSON spell it.
  std::vector<int> stages;
  if (!space.zero_stage.empty()) {
    stages = space.zero_stage;
  } else {
    for (bool on : choice_values(space.distributed_optimizer, base.sharding_stage() >= 1, true)) {
      stages.push_back(on ? std::max(1, base.sharding_stage()) : 0);
    }
  }
  std::vector<Plan> out;
  std::vector<int> done;
  for (int stage : stages) {
    if (ranks == 1) stage = 0;  // nothing to shard over
    if (std::find(done.begin(), done.end(), stage) != done.end()) continue;
    done.push_back(stage);
    std::vector<int> groups;
    if (stage >= 1) {
      for (int g : space.fsdp_group) {
        if (g < d && d % g == 0) groups.push_back(g);
      }
    }
    if (groups.empty()) groups.push_back(0);
    for (int group : groups) {
      for (bool tpo : choice_values(space.tp_comm_overlap, base.tp_comm_overlap,
                                    base.tensor_parallel > 1)) {
        for (bool grad :
             choice_values(space.overlap_grad_reduce, base.overlap_grad_reduce, ranks > 1)) {
          // Automatic: FSDP (stage 3) prefetches its gathers; stages 1-2 keep base's.
          const bool auto_param = stage == 3 || base.overlap_param_gather;
          for (bool param : choice_values(space.overlap_param_gather, auto_param,
                                          ranks > 1 && stage >= 1)) {
            Plan plan = base;
            plan.distributed_optimizer = stage >= 1;
            plan.zero_stage = stage;
            plan.fsdp_group = group;
            plan.tp_comm_overlap = tpo;
            // Without data parallelism the flag has no effect: keep the default.
            plan.overlap_grad_reduce = ranks > 1 ? grad : base.overlap_grad_reduce;
            plan.overlap_param_gather = param;
            out.push_back(plan);
          }
        }
      }
    }
  }
  return out;
}

std::vector<simulator::Precision> precisions_for(const PlanSpace& space,
                                                 const simulator::GpuSpec& gpu) {
  using simulator::Precision;
  std::vector<Precision> listed = space.precision;
  if (listed.empty()) listed = {Precision::kBf16, Precision::kFp8};
  std::vector<Precision> out;
  for (Precision p : listed) {
    if (p == Precision::kFp8 && !(gpu.peak_fp8_flops > 0)) continue;
    if (p == Precision::kNvfp4 && !(gpu.peak_fp4_flops > 0)) continue;
    if (p == Precision::kFp8 && space.fp8_recipe == simulator::Fp8Recipe::kMxfp8 &&
        !gpu.fp8_block_scaling) {
      continue;
    }
    out.push_back(p);
  }
  return out;
}

namespace {

// The axes of enumerate_plans before the data-parallel widths: the (t, cp)
// pairs (t divides the heads and fits an NVLink domain; t * cp fits the
// GPUs), pipeline degrees, micro-batches, virtual stages and global batches
// in sequences (sorted, unique).
struct EnumerationAxes {
  std::vector<std::pair<int, int>> t_cps;
  std::vector<int> pps, bs, vs, batches;
};

EnumerationAxes enumeration_axes(const Model& model, const simulator::Cluster& cluster, int gpus,
                                 const PlanSpace& space) {
  EnumerationAxes ax;
  std::vector<int> tps = space.tp;
  if (tps.empty()) {
    // Powers of two up to the NVLink domain, at most 8: beyond 8 the
    // per-GPU GEMMs thin out and each layer's TP all-reduces grow, so no
    // published recipe (H100 or GB200 NVL72, which runs TP 1-4 with EP) uses
    // more; --tp takes larger sizes that divide the domain.
    for (int t = 1; t <= std::min(cluster.nvlink_domain(), 8); t *= 2) tps.push_back(t);
  }
  ax.pps = space.pp.empty() ? auto_pipeline_degrees(model.num_layers) : space.pp;
  std::vector<int> cps;
  for (int cp : space.context_parallel.empty() ? auto_context_parallel(model)
                                               : space.context_parallel) {
    if (model.seq_length % (2 * static_cast<int64_t>(cp)) == 0 || cp == 1) cps.push_back(cp);
  }
  ax.bs = space.micro_batch.empty() ? std::vector<int>{1, 2, 4} : space.micro_batch;
  ax.vs = space.virtual_stages.empty() ? std::vector<int>{1, 2} : space.virtual_stages;
  // Global batches in sequences.
  if (!space.global_batch.empty()) {
    ax.batches = space.global_batch;
  } else {
    const std::vector<double> tokens =
        space.global_batch_tokens.empty() ? default_batch_ladder_tokens() : space.global_batch_tokens;
    for (double t : tokens) {
      const double seqs = std::round(t / model.seq_length);
      ax.batches.push_back(static_cast<int>(std::clamp(seqs, 1.0, double{Plan::kMaxGlobalBatch})));
    }
  }
  std::sort(ax.batches.begin(), ax.batches.end());
  ax.batches.erase(std::unique(ax.batches.begin(), ax.batches.end()), ax.batches.end());
  for (int t : tps) {
    if (model.num_heads % t != 0 || model.kv_heads() % t != 0 || model.ffn_hidden() % t != 0) continue;
    // Within an NVLink domain: t consecutive ranks must not straddle two
    // (PlanSpace::tp).
    const int domain = cluster.nvlink_domain();
    if (t > domain || domain % t != 0 || t > gpus) continue;
    for (int cp : cps) {
      if (static_cast<long>(t) * cp <= gpus) ax.t_cps.emplace_back(t, cp);
    }
  }
  return ax;
}

// The layout (t, cp, p, d, b, B, v, sp) with the automatic rules: the
// schedule, the distributed optimizer over the d * cp ranks sharing the
// gradients, and the recipes' overlaps.
Plan base_plan(int t, int cp, int p, int d, int b, long global, int v, bool sp) {
  Plan base;
  base.tensor_parallel = t;
  base.context_parallel = cp;
  base.pipeline_parallel = p;
  base.data_parallel = d;
  base.micro_batch_size = b;
  base.global_batch_size = static_cast<int>(global);
  base.virtual_stages = v;
  base.schedule = v > 1 ? simulator::Schedule::kInterleaved
                        : simulator::Schedule::kOneFOneB;
  base.sequence_parallel = sp;
  // The automatic rule: shard over the d * cp ranks sharing the gradients.
  base.distributed_optimizer = static_cast<long>(d) * cp > 1;
  // The recipes' overlaps (PlanSpace): TP communication with SP,
  // the parameter all-gather with the distributed optimizer
  // (gradient-reduce overlap is on in Plan already).
  base.tp_comm_overlap = sp && t > 1;
  base.overlap_param_gather = base.distributed_optimizer;
  return base;
}

// Appends the plans of layout `base` (its expert, schedule, sharding and
// precision axes, each with the first recompute that fits, or every listed
// one) to *out, skipping those already in *seen; counts into *st.
void add_layout_plans(const Model& model, const simulator::Cluster& cluster,
                      const PlanSpace& space, const std::vector<simulator::Precision>& precisions,
                      const Plan& base, std::set<Plan, PlanLess>* seen, EnumerationStats* st,
                      std::vector<Plan>* out) {
  const double capacity = cluster.gpu.hbm_bytes;
  std::vector<Plan> expanded;
  for (const Plan& experts :
       expand_expert_axes(space, model, base, cluster.nvlink_domain(), cluster.gpus_per_node)) {
    for (const Plan& scheduled : expand_schedule_axis(space, experts)) {
      for (const Plan& q : expand_sharding_axes(space, scheduled)) expanded.push_back(q);
    }
  }
  for (const Plan& sharded : expanded) {
    for (simulator::Precision precision : precisions) {
      Plan plan = sharded;
      plan.precision = precision;
      if (precision == simulator::Precision::kFp8) plan.fp8_recipe = space.fp8_recipe;
      if (!seen->insert(plan).second) continue;
      ++st->layouts;
      st->most_gpus = std::max<long>(st->most_gpus, plan.world_size());
      std::vector<Recompute> rcs = space.recompute;
      const bool auto_rc = rcs.empty();
      if (auto_rc) rcs = {Recompute::kNone, Recompute::kFull};
      bool kept_one = false;
      for (Recompute rc : rcs) {
        plan.recompute = rc;
        if (estimate_peak_bytes(model, plan) > capacity) continue;
        out->push_back(plan);
        ++st->kept;
        kept_one = true;
        if (auto_rc) break;  // full only when none does not fit
      }
      if (!kept_one) ++st->memory_pruned;
    }
  }
}

}  // namespace

const LayoutMemo::Layout* LayoutMemo::find(const Key& key) const {
  const auto it = layouts_.find(key);
  return it == layouts_.end() ? nullptr : &it->second;
}

const LayoutMemo::Layout& LayoutMemo::insert(const Key& key, Layout layout) {
  const auto [it, added] = layouts_.emplace(key, std::move(layout));
  LLMPLAN_CHECK(added);
  return it->second;  // a node: stays where it is when the table grows
}

void LayoutMemo::bind(const Model& model, const simulator::Cluster& cluster) {
  if (!bound_) {
    model_ = model;
    cluster_ = cluster;
    bound_ = true;
    return;
  }
  LLMPLAN_CHECK(model == model_ && cluster == cluster_);
}

size_t LayoutMemo::KeyHash::operator()(const Key& key) const {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over the eight fields
  for (int field : key) {
    h ^= static_cast<uint32_t>(field);
    h *= 1099511628211ULL;
  }
  return static_cast<size_t>(h);
}

namespace {

// Whether layout `base` is worth listing at all: valid for the model, its
// pipeline fills, and its passes are within Plan::kMaxMicroBatchPasses.
bool layout_worth_listing(const Model& model, const Plan& base) {
  if (!simulator::validate(base).ok() || !simulator::validate(model, base).ok()) return false;
  const int p = base.pipeline_parallel;
  if (p > 1 && base.num_micro_batches() < p) return false;  // pipeline never fills
  return static_cast<long>(base.num_micro_batches()) * p * base.virtual_stages <=
         Plan::kMaxMicroBatchPasses;
}

// enumerate_plans' step for one layout through `memo`: its plans appended to
// *out and its counts added to *st, computed on the first listing. Each
// layout is listed once per call (*listed: the layouts of the current
// (t, cp, p, v, b), the only ones two batch targets can both give), as the
// plan-level `seen` set does without a memo: plans of different layouts
// differ in a layout field, which no expansion axis changes.
void add_memoized_layout(const Model& model, const simulator::Cluster& cluster,
                         const PlanSpace& space,
                         const std::vector<simulator::Precision>& precisions,
                         const LayoutMemo::Key& key, LayoutMemo* memo,
                         std::vector<LayoutMemo::Key>* listed, EnumerationStats* st,
                         std::vector<Plan>* out) {
  if (std::find(listed->begin(), listed->end(), key) != listed->end()) return;
  listed->push_back(key);
  const LayoutMemo::Layout* layout = memo->find(key);
  if (layout == nullptr) {
    LayoutMemo::Layout fresh;
    const Plan base = base_plan(key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7] != 0);
    if (layout_worth_listing(model, base)) {
      std::set<Plan, PlanLess> seen;
      add_layout_plans(model, cluster, space, precisions, base, &seen, &fresh.stats, &fresh.plans);
    }
    layout = &memo->insert(key, std::move(fresh));
  }
  out->insert(out->end(), layout->plans.begin(), layout->plans.end());
  st->layouts += layout->stats.layouts;
  st->most_gpus = std::max(st->most_gpus, layout->stats.most_gpus);
  st->memory_pruned += layout->stats.memory_pruned;
  st->kept += layout->stats.kept;
}

}  // namespace

std::vector<Plan> enumerate_plans(const Model& model, const simulator::Cluster& cluster, int gpus,
                                  const PlanSpace& space, EnumerationStats* stats,
                                  LayoutMemo* memo) {
  const std::vector<simulator::Precision> precisions = precisions_for(space, cluster.gpu);
  EnumerationStats local;
  EnumerationStats& st = stats ? *stats : local;
  std::vector<Plan> out;
  if (memo != nullptr) memo->bind(model, cluster);
  const EnumerationAxes ax = enumeration_axes(model, cluster, gpus, space);
  // Plans already listed (recompute is still none when inserted); with a
  // memo, the layouts of the current (t, cp, p, v, b).
  std::set<Plan, PlanLess> seen;
  std::vector<LayoutMemo::Key> listed;
  const Widths widths = space.all_gpus_only ? Widths::kWidest
                        : space.every_width ? Widths::kEvery
                                            : Widths::kFloor;
  for (const auto& [t, cp] : ax.t_cps) {
    const long tc = static_cast<long>(t) * cp;
    for (int p : ax.pps) {
      if (tc * p > gpus) continue;
      if (space.max_model_parallel > 0 && static_cast<long>(t) * p > space.max_model_parallel) continue;
      if (p > model.num_layers) continue;
      const int d_max = static_cast<int>(gpus / (tc * p));
      for (int v : ax.vs) {
        if (v > 1 && (p == 1 || model.num_layers % (p * v) != 0)) continue;
        for (int b : ax.bs) {
          listed.clear();
          for (int target : ax.batches) {
            if (target < b) continue;
            for (int d : data_parallel_widths(d_max, target, b, p, widths)) {
              const long per = static_cast<long>(d) * b;
              const long global = std::max(1L, std::lround(static_cast<double>(target) / per)) * per;
              if (global > Plan::kMaxGlobalBatch) continue;
              for (bool sp : choice_values(space.sequence_parallel, t > 1, t > 1)) {
                if (memo != nullptr) {
                  const LayoutMemo::Key key{t, cp, p, d, b, static_cast<int>(global), v, sp ? 1 : 0};
                  add_memoized_layout(model, cluster, space, precisions, key, memo, &listed, &st,
                                      &out);
                  continue;
                }
                const Plan base = base_plan(t, cp, p, d, b, global, v, sp);
                if (!layout_worth_listing(model, base)) continue;
                add_layout_plans(model, cluster, space, precisions, base, &seen, &st, &out);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace llmplan::planner

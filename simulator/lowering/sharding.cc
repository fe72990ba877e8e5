#include "simulator/lowering/sharding.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace llmplan::simulator::lowering {
namespace {

// One collective of `bytes` over `over`.
double collective_s(const CostModel& cost, const CommGroup& over, CollectiveKind kind,
                    double bytes) {
  CollectiveDesc c;
  c.kind = kind;
  c.bytes = bytes;
  c.group = over;
  return cost.collective_time_s(c);
}

// Each unit's parameter all-gather (`gather`) and gradient reduce-scatter
// (`scatter`) time into (*gather_s)[u], (*scatter_s)[u]; a unit's
// routed-expert parameters go over the expert-data group, back to back with
// the rest on the network. Appends what is issued to `issued` (when not
// null).
void unit_collective_times(const Plan& plan, const CommGroup& group,
                           const CommGroup& expert_group, const CostModel& cost, bool gather,
                           bool scatter, const std::vector<Unit>& units,
                           std::vector<double>* gather_s, std::vector<double>* scatter_s,
                           std::vector<PassCollective>* issued) {
  for (size_t u = 0; u < units.size(); ++u) {
    const double experts = units[u].expert_parameters;
    if (gather) {
      const double bytes = units[u].parameters * 2.0;
      (*gather_s)[u] = collective_s(cost, group, CollectiveKind::kAllGather, bytes);
      if (issued != nullptr) issued->push_back({CollectiveKind::kAllGather, bytes, (*gather_s)[u]});
      if (experts > 0) {
        const double s = collective_s(cost, expert_group, CollectiveKind::kAllGather, experts * 2.0);
        (*gather_s)[u] += s;
        if (issued != nullptr) issued->push_back({CollectiveKind::kAllGather, experts * 2.0, s});
      }
    }
    if (scatter) {
      const double bytes = units[u].parameters * plan.grad_reduce_bytes();
      (*scatter_s)[u] = collective_s(cost, group, CollectiveKind::kReduceScatter, bytes);
      if (issued != nullptr) {
        issued->push_back({CollectiveKind::kReduceScatter, bytes, (*scatter_s)[u]});
      }
      if (experts > 0) {
        const double eb = experts * plan.grad_reduce_bytes();
        const double s = collective_s(cost, expert_group, CollectiveKind::kReduceScatter, eb);
        (*scatter_s)[u] += s;
        if (issued != nullptr) issued->push_back({CollectiveKind::kReduceScatter, eb, s});
      }
    }
  }
}

// An exposed data-parallel collective of `s` seconds on the pass.
LoweredOp exposed_op(OpCategory cat, double s, const char* name) {
  LoweredOp op;
  op.stream = StreamKind::kDataComm;
  op.category = cat;
  op.duration_s = s;
  op.name = name;
  return op;
}

// SM contention: `slowdown` x `hid` on the last compute kernel of out[first, end).
void add_slowdown(double slowdown, double hid, size_t first, std::vector<LoweredOp>* out) {
  for (size_t k = out->size(); k > first; --k) {
    LoweredOp& op = (*out)[k - 1];
    if (op.stream != StreamKind::kCompute || op.category == OpCategory::kHostOverhead) continue;
    op.duration_s += slowdown * hid;
    op.slowdown_s += slowdown * hid;
    break;
  }
}

// ZeRO-2/3 data-parallel collectives of one pass (see sharding.h): each
// unit's parameter all-gather before it (`gather`), its gradient
// reduce-scatter after it (`scatter`). Rebuilds `ops` with the exposed parts
// inserted between units, appends what the pass issues to `issued` (when not
// null), and returns the time hidden.
double shard_pass(const Plan& plan, const CommGroup& group, const CommGroup& expert_group,
                  const CostModel& cost, bool gather, bool scatter, const std::vector<Unit>& units,
                  std::vector<LoweredOp>* ops, std::vector<PassCollective>* issued) {
  const bool prefetch = plan.overlap_param_gather;
  const bool overlap_rs = plan.overlap_grad_reduce;
  if (!gather && !scatter) return 0;
  const double slowdown = cost.comm_compute_slowdown();
  const size_t n = units.size();
  std::vector<double> gather_s(n, 0.0), scatter_s(n, 0.0);
  unit_collective_times(plan, group, expert_group, cost, gather, scatter, units, &gather_s,
                        &scatter_s, issued);
  std::vector<LoweredOp> out;
  out.reserve(ops->size() + 3 * n + 2);
  out.insert(out.end(), ops->begin(), ops->begin() + static_cast<int64_t>(units[0].begin));
  double hidden = 0;
  for (size_t u = 0; u < n; ++u) {
    // Before the unit: its gather when not prefetched (always for unit 0),
    // and the previous unit's reduce-scatter when it does not overlap.
    if (gather_s[u] > 0 && (u == 0 || !prefetch)) {
      out.push_back(exposed_op(OpCategory::kFsdpGather, gather_s[u], "fsdp all_gather"));
    }
    if (u > 0 && scatter_s[u - 1] > 0 && !overlap_rs) {
      out.push_back(
          exposed_op(OpCategory::kFsdpReduceScatter, scatter_s[u - 1], "fsdp reduce_scatter"));
    }
    // During the unit: the next unit's gather and the previous unit's
    // reduce-scatter, back to back on the network.
    const double g = u + 1 < n && prefetch ? gather_s[u + 1] : 0.0;
    const double r = u > 0 && overlap_rs ? scatter_s[u - 1] : 0.0;
    double compute = 0;
    for (size_t k = units[u].begin; k < units[u].end; ++k) compute += (*ops)[k].duration_s;
    const double concurrent = g + r;
    const double hid = std::min(concurrent, compute);
    const size_t first = out.size();
    out.insert(out.end(), ops->begin() + static_cast<int64_t>(units[u].begin),
               ops->begin() + static_cast<int64_t>(units[u].end));
    if (hid > 0) {
      add_slowdown(slowdown, hid, first, &out);
      hidden += hid;
    }
    const double exposed = concurrent - hid;
    if (exposed > 0) {
      // Split in proportion to what was queued.
      if (g > 0) {
        out.push_back(exposed_op(OpCategory::kFsdpGather, exposed * g / concurrent,
                                 "fsdp all_gather (prefetch not hidden)"));
      }
      if (r > 0) {
        out.push_back(exposed_op(OpCategory::kFsdpReduceScatter, exposed * r / concurrent,
                                 "fsdp reduce_scatter (not hidden)"));
      }
    }
  }
  // After the last unit: its reduce-scatter.
  if (scatter_s[n - 1] > 0) {
    out.push_back(
        exposed_op(OpCategory::kFsdpReduceScatter, scatter_s[n - 1], "fsdp reduce_scatter"));
  }
  out.insert(out.end(), ops->begin() + static_cast<int64_t>(units[n - 1].end), ops->end());
  *ops = std::move(out);
  return hidden;
}

}  // namespace

void shard_passes(const Plan& plan, const Placement& placement, const CostModel& cost,
                  const PassUnits& units, ChunkProgram* prog) {
  const bool shard_experts = prog->expert_parameters > 0 && placement.expert_data.size > 1;
  if (plan.sharding_stage() < 2 || (placement.shard.size <= 1 && !shard_experts)) return;
  const bool gather = plan.sharding_stage() >= 3;
  const CommGroup& group = placement.shard;
  const CommGroup& experts = placement.expert_data;
  const double forward = shard_pass(plan, group, experts, cost, gather, false, units.forward,
                                    &prog->forward, &prog->forward_collectives);
  const double backward = shard_pass(plan, group, experts, cost, gather, true, units.backward,
                                     &prog->backward, &prog->backward_collectives);
  prog->fsdp_hidden_s = forward + backward;
  if (prog->split_backward) {
    prog->fsdp_hidden_s = forward +
                          shard_pass(plan, group, experts, cost, gather, false, units.input,
                                     &prog->backward_input, nullptr) +
                          shard_pass(plan, group, experts, cost, false, true, units.weight,
                                     &prog->backward_weight, nullptr);
  }
}

}  // namespace llmplan::simulator::lowering

#include "planner/study/schedule/policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace llmplan::planner::schedule {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Jobs' indices by deadline, ties in the given (arrival) order.
std::vector<int> by_deadline(const std::vector<JobView>& jobs) {
  std::vector<int> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return jobs[a].job->deadline_s < jobs[b].job->deadline_s;
  });
  return order;
}

// fifo and edf: fixed sizes, no preemption, head-of-line blocking.
class FixedSizePolicy : public Policy {
 public:
  explicit FixedSizePolicy(bool edf) : edf_(edf) {}
  std::string name() const override { return edf_ ? "edf" : "fifo"; }

  Decision decide(const PolicyContext& ctx, const std::vector<JobView>& jobs) const override {
    Decision d;
    d.gpus.resize(jobs.size());
    d.refused.resize(jobs.size());
    int free = ctx.total_gpus;
    for (size_t i = 0; i < jobs.size(); ++i) {
      d.gpus[i] = jobs[i].gpus;
      free -= jobs[i].gpus;
    }
    std::vector<int> order(jobs.size());
    std::iota(order.begin(), order.end(), 0);
    if (edf_) order = by_deadline(jobs);
    for (int i : order) {
      if (jobs[i].gpus > 0) continue;  // running: never preempted
      const int want =
          requested_gpus(*jobs[i].job, *jobs[i].curve, ctx.total_gpus, ctx.rescale_cost_s);
      if (want > free) break;  // the head waits, and so does everyone behind it
      d.gpus[i] = want;
      free -= want;
    }
    return d;
  }

 private:
  bool edf_;
};

// ElasticFlow-style admission control and minimum-share allocation.
class ElasticPolicy : public Policy {
 public:
  explicit ElasticPolicy(bool linear) : linear_(linear) {}
  std::string name() const override {
    return linear_ ? "elasticflow-linear" : "elasticflow-simulated";
  }

  Decision decide(const PolicyContext& ctx, const std::vector<JobView>& jobs) const override {
    const int n = static_cast<int>(jobs.size());
    const int step = ctx.step_gpus;
    Decision d;
    d.gpus.assign(n, 0);
    d.refused.assign(n, "");
    std::vector<int> lo(n), hi(n), share(n);
    for (int i = 0; i < n; ++i) {
      const GpuRange r = gpu_range(*jobs[i].job, *jobs[i].curve, ctx.total_gpus);
      lo[i] = r.lo;
      hi[i] = r.hi;
      share[i] = min_share(ctx, jobs[i], lo[i], hi[i]);
    }
    // Admission: the guaranteed shares of admitted jobs, then new arrivals in order.
    int guaranteed = 0;
    for (int i = 0; i < n; ++i) {
      if (jobs[i].admitted) guaranteed += share[i];
    }
    for (int i = 0; i < n; ++i) {
      if (jobs[i].admitted) continue;
      if (share[i] == 0) {
        d.refused[i] = "admission control: cannot meet its deadline even on " +
                       std::to_string(hi[i]) + " GPUs (" + estimate_name() + " throughput)";
      } else if (guaranteed + share[i] > ctx.total_gpus) {
        d.refused[i] = "admission control: needs " + std::to_string(share[i]) +
                       " GPUs to meet its deadline, " +
                       std::to_string(ctx.total_gpus - guaranteed) +
                       " left beside the admitted jobs' shares (" + estimate_name() +
                       " throughput)";
      } else {
        guaranteed += share[i];
      }
    }
    // Minimum shares, earliest deadline first.
    const std::vector<int> order = by_deadline(jobs);
    int free = ctx.total_gpus;
    for (int i : order) {
      if (!d.refused[i].empty() || share[i] == 0) continue;
      const int g = std::min(share[i], free / step * step);
      if (g >= lo[i]) {
        d.gpus[i] = g;
        free -= g;
      }
    }
    // Spare GPUs: one increment at a time to the job whose estimated finish
    // time improves most per GPU added (a waiting job first: any progress
    // beats none); ties to the earlier deadline.
    while (free >= step) {
      int best = -1, best_next = 0;
      double best_gain = 0;
      for (int i : order) {
        if (!d.refused[i].empty()) continue;
        const int next = next_better(jobs[i], d.gpus[i], lo[i], hi[i], free, step);
        if (next == 0) continue;
        const double before = d.gpus[i] == 0 ? kInf : jobs[i].remaining_tokens / estimate(jobs[i], d.gpus[i]);
        const double after = jobs[i].remaining_tokens / estimate(jobs[i], next);
        const double gain = before == kInf ? kInf : (before - after) / (next - d.gpus[i]);
        if (best < 0 || gain > best_gain) {
          best = i;
          best_next = next;
          best_gain = gain;
        }
      }
      if (best < 0 || !(best_gain > 0)) break;
      free -= best_next - d.gpus[best];
      d.gpus[best] = best_next;
    }
    return d;
  }

 private:
  std::string estimate_name() const { return linear_ ? "linear-scaling" : "simulated"; }

  // Estimated tokens/s of a job on g GPUs.
  double estimate(const JobView& j, int g) const {
    if (!linear_) return j.curve->tokens_per_s(g);
    const int g0 = j.curve->min_feasible_gpus();
    if (g < g0) return 0;
    return j.curve->tokens_per_s(g0) * static_cast<double>(g) / g0;
  }

  // The smallest count in [lo, hi] meeting the deadline; 0 if none.
  int min_share(const PolicyContext& ctx, const JobView& j, int lo, int hi) const {
    for (int g = lo; g <= hi && lo > 0; g += ctx.step_gpus) {
      const double window =
          j.job->deadline_s - ctx.now_s - (g == j.gpus ? 0.0 : ctx.rescale_cost_s);
      if (window > 0 && estimate(j, g) * window >= j.remaining_tokens) return g;
    }
    return 0;
  }

  // The smallest count above `g` (within bounds and free GPUs) whose estimate
  // is strictly higher; 0 if none.
  int next_better(const JobView& j, int g, int lo, int hi, int free, int step) const {
    if (lo == 0) return 0;
    const double now = g == 0 ? 0 : estimate(j, g);
    for (int c = std::max(lo, g + step); c <= hi && c - g <= free; c += step) {
      if (estimate(j, c) > now) return c;
    }
    return 0;
  }

  bool linear_;
};

}  // namespace

std::vector<std::string> policy_names() {
  return {"fifo", "edf", "elasticflow-linear", "elasticflow-simulated"};
}

Result<std::unique_ptr<Policy>> make_policy(std::string_view name) {
  if (name == "fifo") return std::unique_ptr<Policy>(new FixedSizePolicy(false));
  if (name == "edf") return std::unique_ptr<Policy>(new FixedSizePolicy(true));
  if (name == "elasticflow-linear") return std::unique_ptr<Policy>(new ElasticPolicy(true));
  if (name == "elasticflow-simulated") return std::unique_ptr<Policy>(new ElasticPolicy(false));
  std::string known;
  for (const std::string& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
  return Status::not_found("unknown policy \"" + std::string(name) + "\" (known: " + known + ", all)");
}

GpuRange gpu_range(const Job& job, const ThroughputCurve& curve, int total_gpus) {
  const int step = curve.step_gpus();
  const int feasible = curve.min_feasible_gpus();
  GpuRange r;
  if (feasible == 0) return r;
  int hi = std::min(total_gpus, curve.max_gpus());
  if (job.max_gpus > 0) hi = std::min(hi, job.max_gpus);
  hi = hi / step * step;
  const int lo = (std::max(job.min_gpus, feasible) + step - 1) / step * step;
  if (lo > hi) return r;
  r.lo = lo;
  r.hi = hi;
  return r;
}

int requested_gpus(const Job& job, const ThroughputCurve& curve, int total_gpus,
                   double rescale_cost_s) {
  const GpuRange r = gpu_range(job, curve, total_gpus);
  if (r.lo == 0) return 0;
  const int step = curve.step_gpus();
  if (job.gpus > 0) {
    const int want = (job.gpus + step - 1) / step * step;
    return std::clamp(want, r.lo, r.hi);
  }
  for (int g = r.lo; g <= r.hi; g += step) {
    const double rate = curve.tokens_per_s(g);
    if (rate > 0 && job.arrival_s + rescale_cost_s + job.tokens / rate <= job.deadline_s) {
      return std::max(r.lo, curve.useful_gpus(g));
    }
  }
  return std::max(r.lo, curve.useful_gpus(r.hi));
}

}  // namespace llmplan::planner::schedule

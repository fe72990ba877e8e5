#include "planner/study/schedule/policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace llmplan::planner::schedule {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The first of the counts first, first + step, ..., up to `last` at which
// `holds` is true, for a `holds` that is false and then true along the
// counts (monotone); 0 when it holds at none. A bisection: the policies ask
// this of every job at every event, over up to 18,724 counts of a curve at
// 149,792 GPUs, and a job's estimate never falls as GPUs are added
// (ThroughputCurve::tokens_per_s is the best at most g GPUs; the linear
// estimate is a product with g), so a scan and the bisection agree exactly.
template <typename Holds>
int first_count(int first, int last, int step, const Holds& holds) {
  if (first > last) return 0;
  // Most often the first count holds already (a linear estimate grows at
  // every count: the spare-GPU rounds ask this once per increment).
  if (holds(first)) return first;
  int lo = 1, hi = (last - first) / step;
  if (hi < 1 || !holds(first + hi * step)) return 0;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (holds(first + mid * step)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return first + lo * step;
}

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
    // beats none); ties to the earlier deadline. A job's next count and its
    // gain change only when the job is given GPUs, and a job whose next
    // count no longer fits in the free GPUs never fits again (they only
    // shrink): a heap of (gain, deadline rank) picks the job a scan of all
    // of them would, in O(log jobs) per increment instead of O(jobs).
    struct Offer {
      double gain;
      int rank, job, version;
    };
    const auto lower = [](const Offer& a, const Offer& b) {
      return a.gain < b.gain || (a.gain == b.gain && a.rank > b.rank);
    };
    std::vector<Offer> heap;
    std::vector<int> up(n, 0), version(n, 0);
    const auto offer = [&](int i, int rank) {
      up[i] = next_better(jobs[i], d.gpus[i], lo[i], hi[i], step);
      if (up[i] == 0) return;
      const double before = d.gpus[i] == 0 ? kInf : jobs[i].remaining_tokens / estimate(jobs[i], d.gpus[i]);
      const double after = jobs[i].remaining_tokens / estimate(jobs[i], up[i]);
      const double gain = before == kInf ? kInf : (before - after) / (up[i] - d.gpus[i]);
      LLMPLAN_CHECK(!std::isnan(gain));  // remaining tokens are finite and >= 0
      heap.push_back({gain, rank, i, ++version[i]});
      std::push_heap(heap.begin(), heap.end(), lower);
    };
    for (int r = 0; r < n; ++r) {
      if (d.refused[order[r]].empty()) offer(order[r], r);
    }
    while (free >= step && !heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), lower);
      const Offer top = heap.back();
      heap.pop_back();
      if (top.version != version[top.job]) continue;           // the job has moved since
      if (up[top.job] - d.gpus[top.job] > free) continue;      // and never fits again
      if (!(top.gain > 0)) break;
      free -= up[top.job] - d.gpus[top.job];
      d.gpus[top.job] = up[top.job];
      offer(top.job, top.rank);
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

  // The smallest count in lo, lo + step, ..., hi meeting the deadline; 0 if
  // none. A count other than the job's own pays the re-scale cost: past its
  // own count the test is monotone (first_count), and its own count, where
  // the window is longer, is tried apart.
  int min_share(const PolicyContext& ctx, const JobView& j, int lo, int hi) const {
    if (lo <= 0) return 0;
    const int step = ctx.step_gpus;
    const double window_moved = j.job->deadline_s - ctx.now_s - ctx.rescale_cost_s;
    const double window_kept = j.job->deadline_s - ctx.now_s - 0.0;
    const int moved = window_moved > 0 ? first_count(lo, hi, step, [&](int g) {
      return estimate(j, g) * window_moved >= j.remaining_tokens;
    }) : 0;
    const bool own_listed = j.gpus >= lo && j.gpus <= hi && (j.gpus - lo) % step == 0;
    if (own_listed && (moved == 0 || j.gpus < moved) && window_kept > 0 &&
        estimate(j, j.gpus) * window_kept >= j.remaining_tokens) {
      return j.gpus;
    }
    return moved;  // at the job's own count the kept window holds too (rescale cost >= 0)
  }

  // The smallest count above `g` (within bounds) whose estimate is strictly
  // higher; 0 if none.
  int next_better(const JobView& j, int g, int lo, int hi, int step) const {
    if (lo == 0) return 0;
    const double now = g == 0 ? 0 : estimate(j, g);
    return first_count(std::max(lo, g + step), hi, step,
                       [&](int c) { return estimate(j, c) > now; });
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
  // The first count meeting the deadline (monotone in the count: first_count).
  const int g = first_count(r.lo, r.hi, step, [&](int c) {
    const double rate = curve.tokens_per_s(c);
    return rate > 0 && job.arrival_s + rescale_cost_s + job.tokens / rate <= job.deadline_s;
  });
  return std::max(r.lo, curve.useful_gpus(g > 0 ? g : r.hi));
}

}  // namespace llmplan::planner::schedule

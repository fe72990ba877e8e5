#include "planner/study/schedule/cluster_sim.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "planner/search/gpu_count.h"

namespace llmplan::planner::schedule {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class State { kPending, kActive, kDone, kRefused };

struct Running {
  State state = State::kPending;
  double remaining = 0;
  int gpus = 0;
  double pause_until_s = 0;
  bool admitted = false;
  GpuRange range;
};


// Job i's tokens per second at its current GPUs.
double rate_of(const std::vector<const ThroughputCurve*>& curves, const std::vector<Running>& st,
               int i) {
  return curves[i]->tokens_per_s(st[i].gpus);
}

// simulate_cluster's checks of its inputs; the node size (GPUs per step).
Result<int> check_cluster_inputs(const std::vector<Job>& jobs,
                                 const std::vector<const ThroughputCurve*>& curves,
                                 const ClusterSimOptions& options) {
  const int n = static_cast<int>(jobs.size());
  if (curves.size() != jobs.size()) {
    return Status::invalid_argument("simulate_cluster: " + std::to_string(curves.size()) +
                                    " curves for " + std::to_string(n) + " jobs");
  }
  if (!(options.rescale_cost_s >= 0) || !std::isfinite(options.rescale_cost_s)) {
    return Status::invalid_argument("--rescale-cost-s: must be finite and >= 0");
  }
  int step = 1;
  for (int i = 0; i < n; ++i) {
    if (curves[i] == nullptr) return Status::invalid_argument("simulate_cluster: missing curve");
    step = curves[i]->step_gpus();
    if (i > 0 && jobs[i].arrival_s < jobs[i - 1].arrival_s) {
      return Status::invalid_argument("simulate_cluster: jobs not sorted by arrival");
    }
  }
  // step >= 1 (ThroughputCurve), so a count below one is below one node too.
  const GpuCountError gpus = check_gpu_count(options.total_gpus, {step, false, 0});
  if (gpus == GpuCountError::kNotPositive || gpus == GpuCountError::kBelowOneNode) {
    return Status::invalid_argument("--gpus: " + std::to_string(options.total_gpus) +
                                    " is less than one node (" + std::to_string(step) + " GPUs)");
  }
  return step;
}

// The next event: an arrival or the earliest completion (kInf: none);
// *active: whether a job is still active.
double next_event_s(const std::vector<Job>& jobs, const std::vector<const ThroughputCurve*>& curves,
                    const std::vector<Running>& st, int next_arrival, double now, bool* active) {
  const int n = static_cast<int>(jobs.size());
  double t = next_arrival < n ? jobs[next_arrival].arrival_s : kInf;
  *active = false;
  for (int i = 0; i < n; ++i) {
    if (st[i].state != State::kActive) continue;
    *active = true;
    if (st[i].gpus == 0) continue;
    t = std::min(t, std::max(now, st[i].pause_until_s) + st[i].remaining / rate_of(curves, st, i));
  }
  return t;
}

// Every running job advanced from `now` to t; the finished retired.
void advance_jobs(const std::vector<Job>& jobs, const std::vector<const ThroughputCurve*>& curves,
                  double now, double t, std::vector<Running>* st_out, ScheduleResult* result) {
  const int n = static_cast<int>(jobs.size());
  std::vector<Running>& st = *st_out;
  for (int i = 0; i < n; ++i) {
    if (st[i].state != State::kActive || st[i].gpus == 0) continue;
    const double start = std::max(now, st[i].pause_until_s);
    const double rate = rate_of(curves, st, i);
    // The same expression as next_event_s's: a job whose completion is the
    // event finishes at it even when its work left is below the clock's
    // resolution (start + remaining / rate == start at a late start).
    const bool reached = start + st[i].remaining / rate <= t;
    const double busy = t - start;
    if (busy > 0) st[i].remaining -= rate * busy;
    result->jobs[i].gpu_seconds += st[i].gpus * (t - now);
    if (reached || st[i].remaining <= jobs[i].tokens * 1e-9) {
      st[i].state = State::kDone;
      st[i].remaining = 0;
      st[i].gpus = 0;
      JobOutcome& o = result->jobs[i];
      o.finished = true;
      o.finish_s = t;
      o.jct_s = t - jobs[i].arrival_s;
      o.met_deadline = t <= jobs[i].deadline_s * (1 + 1e-12);
    }
  }
}

// Arrivals up to `now`; a job no count can run is refused here, whatever
// the policy.
void admit_arrivals(const std::vector<Job>& jobs, const std::vector<const ThroughputCurve*>& curves,
                    const ClusterSimOptions& options, double now, int* next_arrival_io,
                    std::vector<Running>* st_out, ScheduleResult* result) {
  const int n = static_cast<int>(jobs.size());
  std::vector<Running>& st = *st_out;
  int& next_arrival = *next_arrival_io;
  for (; next_arrival < n && jobs[next_arrival].arrival_s <= now; ++next_arrival) {
    const int i = next_arrival;
    st[i].range = gpu_range(jobs[i], *curves[i], options.total_gpus);
    if (st[i].range.lo > 0) {
      st[i].state = State::kActive;
      continue;
    }
    st[i].state = State::kRefused;
    result->jobs[i].refused =
        curves[i]->min_feasible_gpus() == 0
            ? "no plan fits in memory on up to " + std::to_string(curves[i]->max_gpus()) + " GPUs"
            : "needs at least " + std::to_string(curves[i]->min_feasible_gpus()) +
                  " GPUs to fit; its bounds and the cluster allow none";
  }
}

// Asks the policy and applies its decision; the GPUs it allocates in all.
Result<int> apply_decision(const std::vector<Job>& jobs,
                           const std::vector<const ThroughputCurve*>& curves,
                           const Policy& policy, const ClusterSimOptions& options,
                           const std::string& who, int step, double now, PolicyContext* ctx,
                           std::vector<Running>* st_out, ScheduleResult* result) {
  const int n = static_cast<int>(jobs.size());
  std::vector<Running>& st = *st_out;
  std::vector<int> index;
  std::vector<JobView> views;
  for (int i = 0; i < n; ++i) {
    if (st[i].state != State::kActive) continue;
    index.push_back(i);
    views.push_back({&jobs[i], curves[i], st[i].remaining, st[i].gpus, st[i].admitted});
  }
  ctx->now_s = now;
  const Decision d = policy.decide(*ctx, views);
  if (d.gpus.size() != views.size() || d.refused.size() != views.size()) {
    return Status::internal(who + "decision size differs from the active jobs");
  }
  int total = 0;
  for (size_t k = 0; k < views.size(); ++k) {
    const int i = index[k];
    const std::string where = who + "job " + jobs[i].name + ": ";
    if (!d.refused[k].empty()) {
      if (st[i].admitted) return Status::internal(where + "refused after admission");
      st[i].state = State::kRefused;
      result->jobs[i].refused = d.refused[k];
      continue;
    }
    st[i].admitted = true;
    const int g = d.gpus[k];
    if (g != 0 && (g % step != 0 || g < st[i].range.lo || g > st[i].range.hi)) {
      return Status::internal(where + std::to_string(g) + " GPUs is outside its range " +
                              std::to_string(st[i].range.lo) + ".." +
                              std::to_string(st[i].range.hi) + " in steps of " +
                              std::to_string(step));
    }
    total += g;
    if (g == st[i].gpus) continue;
    JobOutcome& o = result->jobs[i];
    if (g > 0) {
      st[i].pause_until_s = now + options.rescale_cost_s;
      ++o.rescales;
      if (o.start_s < 0) o.start_s = now;
      o.max_gpus = std::max(o.max_gpus, g);
    }
    st[i].gpus = g;
  }
  return total;
}

}  // namespace

ScheduleMetrics summarise(const std::vector<Job>& jobs, const std::vector<JobOutcome>& outcomes,
                          int total_gpus) {
  ScheduleMetrics m;
  m.jobs = static_cast<int>(jobs.size());
  std::vector<double> jct;
  double first_arrival = kInf, last_finish = -kInf, gpu_seconds = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    first_arrival = std::min(first_arrival, jobs[i].arrival_s);
    gpu_seconds += o.gpu_seconds;
    if (!o.refused.empty()) ++m.refused;
    if (!o.finished) continue;
    ++m.finished;
    if (o.met_deadline) ++m.met;
    jct.push_back(o.jct_s);
    last_finish = std::max(last_finish, o.finish_s);
  }
  if (m.jobs > 0) m.deadline_ratio = static_cast<double>(m.met) / m.jobs;
  if (!jct.empty()) {
    double sum = 0;
    for (double j : jct) sum += j;
    m.avg_jct_s = sum / static_cast<double>(jct.size());
    std::sort(jct.begin(), jct.end());
    const size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(jct.size())));
    m.p95_jct_s = jct[std::max<size_t>(rank, 1) - 1];
    m.makespan_s = last_finish - first_arrival;
    if (m.makespan_s > 0 && total_gpus > 0) m.utilisation = gpu_seconds / (total_gpus * m.makespan_s);
  }
  return m;
}

Result<ScheduleResult> simulate_cluster(const std::vector<Job>& jobs,
                                        const std::vector<const ThroughputCurve*>& curves,
                                        const Policy& policy, const ClusterSimOptions& options) {
  const int n = static_cast<int>(jobs.size());
  LLMPLAN_ASSIGN_OR_RETURN(const int step, check_cluster_inputs(jobs, curves, options));
  const std::string who = "policy " + policy.name() + ": ";

  ScheduleResult result;
  result.policy = policy.name();
  result.jobs.resize(n);
  std::vector<Running> st(n);
  for (int i = 0; i < n; ++i) st[i].remaining = jobs[i].tokens;
  PolicyContext ctx;
  ctx.total_gpus = options.total_gpus;
  ctx.step_gpus = step;
  ctx.rescale_cost_s = options.rescale_cost_s;
  double now = n > 0 ? jobs[0].arrival_s : 0;
  int next_arrival = 0, held = 0;
  const long max_events = 50L * n + 1000;

  while (true) {
    bool active = false;
    double t = next_event_s(jobs, curves, st, next_arrival, now, &active);
    if (t == kInf) {
      if (active) return Status::internal(who + "left jobs waiting on an idle cluster");
      break;
    }
    if (++result.events > max_events) {
      std::string still;
      for (int i = 0; i < n && still.size() < 200; ++i) {
        if (st[i].state == State::kActive) still += (still.empty() ? "" : ", ") + jobs[i].name;
      }
      return Status::internal(who + "no end after " + std::to_string(max_events) +
                              " events; jobs still running: " + still);
    }
    t = std::max(t, now);
    advance_jobs(jobs, curves, now, t, &st, &result);
    now = t;
    admit_arrivals(jobs, curves, options, now, &next_arrival, &st, &result);
    LLMPLAN_ASSIGN_OR_RETURN(const int total, apply_decision(jobs, curves, policy, options, who,
                                                             step, now, &ctx, &st, &result));
    if (total > options.total_gpus) {
      return Status::internal(who + "allocated " + std::to_string(total) + " of " +
                              std::to_string(options.total_gpus) + " GPUs");
    }
    if (result.timeline.empty() || total != held) {
      if (!result.timeline.empty() && result.timeline.back().time_s == now) {
        result.timeline.back().gpus = total;
      } else {
        result.timeline.push_back({now, total});
      }
      held = total;
    }
  }
  result.metrics = summarise(jobs, result.jobs, options.total_gpus);
  return result;
}

}  // namespace llmplan::planner::schedule

#include "planner/study/schedule/throughput.h"

#include <omp.h>

#include <map>
#include <tuple>
#include <utility>

#include "planner/search/search.h"
#include "base/threads.h"
#include "simulator/simulate.h"

namespace llmplan::planner::schedule {

ThroughputCurve::ThroughputCurve(simulator::Model model, int step_gpus,
                                 std::vector<CurvePoint> points)
    : model_(std::move(model)), step_(step_gpus), points_(std::move(points)) {
  LLMPLAN_CHECK(step_ >= 1);
  best_.resize(points_.size());
  useful_.resize(points_.size());
  double best = 0;
  int useful = 0;
  for (size_t k = 0; k < points_.size(); ++k) {
    LLMPLAN_CHECK(points_[k].gpus == static_cast<int>(k + 1) * step_);
    if (points_[k].tokens_per_s > best) {
      best = points_[k].tokens_per_s;
      useful = points_[k].gpus;
    }
    if (min_feasible_ == 0 && points_[k].tokens_per_s > 0) min_feasible_ = points_[k].gpus;
    best_[k] = best;
    useful_[k] = useful;
  }
}

double ThroughputCurve::tokens_per_s(int gpus) const {
  const int k = gpus / step_ - 1;
  if (k < 0 || points_.empty()) return 0;
  return best_[std::min<size_t>(static_cast<size_t>(k), best_.size() - 1)];
}

int ThroughputCurve::useful_gpus(int gpus) const {
  const int k = gpus / step_ - 1;
  if (k < 0 || points_.empty()) return 0;
  return useful_[std::min<size_t>(static_cast<size_t>(k), useful_.size() - 1)];
}

namespace {

// The distinct plans of one model over the curve's counts, and for each
// count's listing which of them it offers.
struct ModelPlans {
  std::vector<simulator::Plan> unique;
  std::vector<std::pair<int, int>> tasks;  // (count index, index in unique)
};

ModelPlans enumerate_model(const simulator::Model& model, const simulator::Cluster& cluster,
                           const PlanSpace& space, int counts, int step) {
  using Key = std::tuple<int, int, int, int, int, int, int, bool, bool, bool, int, int, bool, bool,
                         bool, int, int, int, int, int, int, bool>;
  std::map<Key, int> index;
  ModelPlans out;
  // Most layouts recur from count to count (a width capped by the batch is
  // the same at every larger count): each is expanded and its memory
  // estimated once (LayoutMemo).
  LayoutMemo memo;
  for (int k = 0; k < counts; ++k) {
    for (const simulator::Plan& p :
         enumerate_plans(model, cluster, (k + 1) * step, space, nullptr, &memo)) {
      const Key key{p.tensor_parallel, p.pipeline_parallel, p.data_parallel,
                    p.micro_batch_size, p.global_batch_size, p.virtual_stages,
                    static_cast<int>(p.recompute), p.sequence_parallel,
                    p.distributed_optimizer, p.flash_attention, p.zero_stage, p.fsdp_group,
                    p.tp_comm_overlap, p.overlap_grad_reduce, p.overlap_param_gather,
                    p.context_parallel, static_cast<int>(p.schedule),
                    static_cast<int>(p.precision), static_cast<int>(p.fp8_recipe),
                    p.expert_parallel, p.expert_tensor_parallel, p.moe_a2a_overlap};
      auto [it, added] = index.emplace(key, static_cast<int>(out.unique.size()));
      if (added) {
        out.unique.push_back(p);
      } else {
        LLMPLAN_CHECK(out.unique[it->second] == p);
      }
      out.tasks.emplace_back(k, it->second);
    }
  }
  return out;
}

}  // namespace

std::vector<ThroughputCurve> compute_curves(const std::vector<simulator::Model>& models,
                                            const simulator::Cluster& cluster,
                                            const CurveOptions& options,
                                            long* distinct_plans) {
  const int step = cluster.gpus_per_node;
  LLMPLAN_CHECK(step >= 1 && options.max_gpus >= step);
  const int counts = options.max_gpus / step;
  // A plan that uses t*p*d GPUs is offered at every count from t*p*d up to
  // the next multiple of t*p: simulate each distinct (model, plan) once.
  struct Task {
    int model, count, unique;
  };
  PlanSpace space = options.space;
  if (space.global_batch.empty() && space.global_batch_tokens.empty()) {
    space.global_batch_tokens = {options.target_batch_tokens};
  }
  space.all_gpus_only = true;
  // The models enumerate in parallel, each on its own; merged in model
  // order, the plans and tasks are those of one thread's loop.
  const int n_models = static_cast<int>(models.size());
  std::vector<ModelPlans> per_model(models.size());
  const int enum_threads = loop_threads(options.threads, omp_get_max_threads(), n_models);
#pragma omp parallel for schedule(dynamic, 1) num_threads(enum_threads)
  for (int m = 0; m < n_models; ++m) {
    per_model[m] = enumerate_model(models[m], cluster, space, counts, step);
  }
  std::vector<std::pair<int, simulator::Plan>> unique;  // (model, plan)
  std::vector<Task> tasks;
  for (int m = 0; m < n_models; ++m) {
    const int offset = static_cast<int>(unique.size());
    for (simulator::Plan& p : per_model[m].unique) unique.emplace_back(m, std::move(p));
    for (const auto& [k, u] : per_model[m].tasks) tasks.push_back({m, k, offset + u});
    per_model[m] = ModelPlans();
  }
  const long n = static_cast<long>(unique.size());
  if (distinct_plans != nullptr) *distinct_plans = n;
  std::vector<PlanResult> results(unique.size());
  simulator::SimOptions sim;
  sim.cost_model = options.cost_model;
  const int threads = loop_threads(options.threads, omp_get_max_threads(), n);
  long done = 0;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    PlanResult& r = results[i];
    r.plan = unique[i].second;
    r.gpus_used = r.plan.world_size();
    auto rep = simulator::simulate(models[unique[i].first], r.plan, cluster, sim);
    if (rep.ok()) record_simulation(rep.value(), &r);
    if (options.progress) {
#pragma omp critical(llmplan_curve_progress)
      {
        ++done;
        if (done % 64 == 0 || done == n) options.progress(done, n);
      }
    }
  }
  // Reduce in task order: the first of equally fast plans wins.
  std::vector<std::vector<CurvePoint>> points(models.size(), std::vector<CurvePoint>(counts));
  for (size_t m = 0; m < models.size(); ++m) {
    for (int k = 0; k < counts; ++k) points[m][k].gpus = (k + 1) * step;
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    CurvePoint& pt = points[tasks[i].model][tasks[i].count];
    ++pt.plans_simulated;
    const PlanResult& r = results[tasks[i].unique];
    if (!r.fits || !(r.tokens_per_s > pt.tokens_per_s)) continue;
    pt.tokens_per_s = r.tokens_per_s;
    pt.mfu = r.mfu;
    pt.gpus_used = r.gpus_used;
    pt.plan = r.plan;
  }
  std::vector<ThroughputCurve> curves;
  for (size_t m = 0; m < models.size(); ++m) {
    curves.emplace_back(models[m], step, std::move(points[m]));
  }
  return curves;
}

}  // namespace llmplan::planner::schedule

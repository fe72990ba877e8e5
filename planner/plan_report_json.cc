#include "planner/plan_report_json.h"

namespace llmplan::planner {

boost::json::object plan_report_to_json(const PlanReportView& v) {
  const SearchResult& r = v.result;
  boost::json::object o;
  if (r.best >= 0) {
    const Candidate& c = r.candidates[r.best];
    const PlanResult& p = r.plans[c.best_plan];
    boost::json::object plan;
    plan["tp"] = p.plan.tensor_parallel;
    plan["pp"] = p.plan.pipeline_parallel;
    plan["dp"] = p.plan.data_parallel;
    plan["micro_batch"] = p.plan.micro_batch_size;
    plan["global_batch"] = p.plan.global_batch_size;
    plan["virtual_stages"] = p.plan.virtual_stages;
    plan["schedule"] = simulator::to_string(p.plan.schedule);
    plan["recompute"] = simulator::to_string(p.plan.recompute);
    plan["sequence_parallel"] = p.plan.sequence_parallel;
    plan["distributed_optimizer"] = p.plan.distributed_optimizer;
    plan["gpus_used"] = p.gpus_used;
    plan["iteration_time_s"] = p.iteration_time_s;
    boost::json::object best;
    best["params"] = c.params;
    best["tokens"] = c.tokens;
    best["layers"] = c.model.num_layers;
    best["hidden"] = c.model.hidden_size;
    best["heads"] = c.model.num_heads;
    best["plan"] = plan;
    best["days"] = c.days;
    best["mfu"] = p.mfu;
    best["cost_usd"] = c.cost_usd;
    best["loss"] = c.loss;
    o["best"] = best;
  } else {
    o["best"] = nullptr;
  }
  boost::json::object naive;
  naive["params"] = r.naive_params;
  naive["tokens"] = r.naive_tokens;
  naive["flops"] = r.naive_flops;
  naive["simulated_days"] = r.naive_days;
  o["naive"] = naive;
  o["candidates_evaluated"] = static_cast<int64_t>(r.candidates.size());
  o["plans_evaluated"] = r.plans_evaluated;
  o["gpus"] = v.options.gpus;
  o["days"] = v.options.days;
  o["cluster"] = v.cluster.name;
  o["objective"] = v.options.objective == Objective::kLargest ? "largest" : "loss";
  return o;
}

}  // namespace llmplan::planner

#include <boost/json.hpp>

#include "planner/study/schedule/schedule_report.h"
#include "simulator/model_json.h"
#include "base/strict_json.h"

namespace llmplan::planner::schedule {

Result<std::string> schedule_to_json(const ScheduleStudy& study) {
  boost::json::object o;
  o["cluster"] = study.cluster;
  o["gpus"] = study.total_gpus;
  o["rescale_cost_s"] = study.rescale_cost_s;
  o["trace"] = study.trace;
  boost::json::array policies;
  for (const ScheduleResult& r : study.results) {
    const ScheduleMetrics& m = r.metrics;
    boost::json::object metrics{{"jobs", m.jobs},
                                {"finished", m.finished},
                                {"met", m.met},
                                {"refused", m.refused},
                                {"deadline_ratio", m.deadline_ratio},
                                {"avg_jct_s", m.avg_jct_s},
                                {"p95_jct_s", m.p95_jct_s},
                                {"makespan_s", m.makespan_s},
                                {"utilisation", m.utilisation}};
    boost::json::array jobs;
    for (size_t i = 0; i < study.jobs.size(); ++i) {
      const Job& j = study.jobs[i];
      const JobOutcome& x = r.jobs[i];
      boost::json::object e{{"name", j.name},
                            {"model", j.model_name},
                            {"params", j.model.parameter_count()},
                            {"tokens", j.tokens},
                            {"arrival_s", j.arrival_s},
                            {"deadline_s", j.deadline_s},
                            {"finished", x.finished},
                            {"met_deadline", x.met_deadline},
                            {"max_gpus", x.max_gpus},
                            {"rescales", x.rescales},
                            {"gpu_seconds", x.gpu_seconds}};
      e["start_s"] = x.start_s >= 0 ? boost::json::value(x.start_s) : nullptr;
      e["finish_s"] = x.finished ? boost::json::value(x.finish_s) : nullptr;
      e["jct_s"] = x.finished ? boost::json::value(x.jct_s) : nullptr;
      if (!x.refused.empty()) e["refused"] = x.refused;
      jobs.push_back(std::move(e));
    }
    boost::json::array timeline;
    for (const AllocationSample& a : r.timeline) timeline.push_back({a.time_s, a.gpus});
    policies.push_back(boost::json::object{{"name", r.policy},
                                           {"metrics", std::move(metrics)},
                                           {"events", r.events},
                                           {"jobs", std::move(jobs)},
                                           {"allocation", std::move(timeline)}});
  }
  o["policies"] = std::move(policies);
  boost::json::array curves;
  for (const ThroughputCurve& c : study.curves) {
    boost::json::array points;
    for (const CurvePoint& p : c.points()) {
      boost::json::object pt{{"gpus", p.gpus}, {"tokens_per_s", p.tokens_per_s}};
      if (p.tokens_per_s > 0) {
        pt["gpus_used"] = p.gpus_used;
        pt["mfu"] = p.mfu;
        pt["tp"] = p.plan.tensor_parallel;
        pt["pp"] = p.plan.pipeline_parallel;
        pt["dp"] = p.plan.data_parallel;
        pt["micro_batch"] = p.plan.micro_batch_size;
        pt["global_batch"] = p.plan.global_batch_size;
        pt["virtual_stages"] = p.plan.virtual_stages;
        pt["recompute"] = simulator::to_string(p.plan.recompute);
      }
      points.push_back(std::move(pt));
    }
    curves.push_back(boost::json::object{{"model", simulator::model_to_json(c.model())},
                                         {"min_feasible_gpus", c.min_feasible_gpus()},
                                         {"points", std::move(points)}});
  }
  o["curves"] = std::move(curves);
  o["plans_simulated"] = study.plans_simulated;
  o["timings"] = boost::json::object{{"curves_wall_s", study.curves_wall_s},
                                     {"policies_wall_s", study.policies_wall_s}};
  boost::json::array notes;
  for (const std::string& n : study.notes) notes.push_back(boost::json::string(n));
  o["notes"] = std::move(notes);
  return json::pretty_finite(o, "schedule JSON");
}

}  // namespace llmplan::planner::schedule

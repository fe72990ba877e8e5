// The planner report's writers on tables filled by hand: reports/ writes
// what it is given (plan_report_table.h), without a search.
#include "reports/plan_report.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "reports/plan_report_json.h"

namespace llmplan::reports {
namespace {

// One model, two plans of it (the answer's and a slower one), one answer.
PlanReport sample_report() {
  PlanReport v;
  v.cluster.name = "toy-cluster";
  v.cluster.gpus_per_node = 8;
  v.cluster.gpu.name = "toy-gpu";
  v.cluster.gpu.peak_bf16_flops = 1e15;
  v.cluster.gpu.hbm_bytes = 80e9;
  v.cluster.usd_per_gpu_hour = 2.0;
  v.options.gpus = 16;
  v.options.days = 30;
  v.options.family = "llama";
  v.options.plan_space = "toy space";
  v.options.law.name = "toy-law";
  v.law_name = "toy-law";

  CandidateRow c;
  c.model.name = "toy-model";
  c.model.num_layers = 4;
  c.model.hidden_size = 512;
  c.model.num_heads = 8;
  c.params = 2.5e9;
  c.active_params = 2.5e9;
  c.tokens = 5e10;
  c.best_plan = 0;
  c.days = 10.0;
  c.compute_days = 10.0;
  c.cost_usd = 7680;
  c.loss = 2.345;
  c.feasible = true;
  c.band.known = true;
  c.band.low_ratio = 0.9;
  c.band.high_ratio = 1.2;
  c.loss_vs_answer = "answer";
  v.result.candidates = {c};

  PlanRow fast;
  fast.plan.tensor_parallel = 2;
  fast.plan.pipeline_parallel = 1;
  fast.plan.data_parallel = 8;
  fast.plan.micro_batch_size = 1;
  fast.plan.global_batch_size = 64;
  fast.iteration_time_s = 1.5;
  fast.mfu = 0.42;
  fast.fits = true;
  fast.tokens_per_s = 1e5;
  fast.gpus_used = 16;
  fast.days = 10.0;
  PlanRow slow = fast;
  slow.plan.data_parallel = 4;
  slow.gpus_used = 8;
  slow.days = 18.0;
  v.result.plans = {fast, slow};
  v.result.best = 0;
  v.result.pareto = {0, 1};
  return v;
}

TEST(PlanReportWriters, TheAnswerLineReadsTheRowAndItsBand) {
  const std::string md = plan_report_markdown(sample_report());
  EXPECT_NE(md.find("**2.5B parameters** (toy-model) trained on **50.0B tokens** in **10.0 days** "
                    "(P10–P90 9.0–12.0 days) with plan **t2 p1 d8 b1 B64**"),
            std::string::npos)
      << md;
  // The Pareto table takes each plan's own days: 18 days x 24 h x 8 GPUs
  // = 3,456 GPU-hours at $2.
  EXPECT_NE(md.find("| t2 p1 d4 b1 B64 | 8 | 1.500 s | 18.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 3K | $6.9K |"), std::string::npos) << md;
  EXPECT_NE(md.find("toy space"), std::string::npos);
}

TEST(PlanReportWriters, CsvAndJsonCarryTheFilledFigures) {
  const PlanReport v = sample_report();
  const std::string csv = candidates_csv(v);
  EXPECT_EQ(csv.rfind("name,params,layers", 0), 0u);
  EXPECT_NE(csv.find(",9,12,"), std::string::npos) << csv;  // days_low, days_high
  const boost::json::object j = plan_report_to_json(v);
  EXPECT_EQ(j.at("schema_version").as_int64(), kResultSchemaVersion);
  const boost::json::object& best = j.at("best").as_object();
  EXPECT_DOUBLE_EQ(best.at("params").to_number<double>(), 2.5e9);
  EXPECT_EQ(best.at("loss_vs_answer").as_string(), "answer");
  const boost::json::array& front = j.at("pareto_front").as_array();
  ASSERT_EQ(front.size(), 2u);
  EXPECT_DOUBLE_EQ(front[1].as_object().at("gpu_hours").to_number<double>(), 18.0 * 24 * 8);
  EXPECT_DOUBLE_EQ(front[1].as_object().at("cost_usd").to_number<double>(), 18.0 * 24 * 8 * 2.0);
}

TEST(PlanReportWriters, NoAnswerSaysSo) {
  PlanReport v = sample_report();
  v.result.best = -1;
  v.result.pareto.clear();
  v.result.candidates[0].feasible = false;
  v.result.candidates[0].why = "deadline";
  const std::string md = plan_report_markdown(v);
  EXPECT_NE(md.find("**No feasible model**"), std::string::npos);
  EXPECT_NE(md.find("(no chosen model)"), std::string::npos);
  EXPECT_TRUE(plan_report_to_json(v).at("best").is_null());
}

}  // namespace
}  // namespace llmplan::reports

// The planner's report: Markdown, CSV tables of candidates and plans, JSON,
// and SVG plots (days vs parameters with the deadline; the time-cost Pareto
// front of the chosen model's plans). Pure functions of the search result.
#ifndef LLMPLAN_PLANNER_REPORT_PLAN_REPORT_H_
#define LLMPLAN_PLANNER_REPORT_PLAN_REPORT_H_

#include <string>
#include <vector>

#include "planner/search/search.h"
#include "simulator/caveats.h"
#include "simulator/cluster.h"
#include "simulator/simulate.h"

namespace llmplan::planner {

struct PlanReportView {
  const simulator::Cluster& cluster;
  const SearchOptions& options;
  const SearchResult& result;
  std::string law_name;
  std::vector<std::string> notes;
  // The answer's plan simulated again in full (time and memory breakdown);
  // null when there is no answer.
  const simulator::StepReport* best_report = nullptr;
  // Caveats on the answer (plausibility, calibration: simulator/caveats.h).
  std::vector<simulator::Caveat> caveats;
  // How the planner was invoked (argv, for the report and result.json).
  std::vector<std::string> command_line;
  // SVG files written beside the report (--out): linked from the Markdown.
  bool plots_written = false;
  // --family moe: the dense (llama family) search for the same budget, for
  // the comparison table; null otherwise.
  const SearchOptions* dense_options = nullptr;
  const SearchResult* dense_result = nullptr;
};

// The MoE law's caveat for `m` (one line), or "" when the law has no MoE
// term, the model is dense, or it lies within the range the term was fitted
// on (active parameters, expansion experts / top_k).
std::string moe_law_caveat(const scaling::LossLaw& law, const simulator::Model& m);

// result.json's schema version (planner/report/schema/result.schema.json).
inline constexpr int kResultSchemaVersion = 2;

// "t8 p4 d105 b1 B2100 v2 full SP ZeRO-1".
std::string plan_label(const simulator::Plan& plan);
// A plan's MFU (PlanResult::mfu, against the 16-bit peak as simulate()
// reports it, fp8 plans included) against the peak of the precision it
// computes in (fp8 plans: the FP8 dense peak): `mfu_precision_peak` in the
// CSVs and JSON.
double mfu_precision_peak(const PlanResult& p, const simulator::GpuSpec& gpu);
// The same as model TFLOP/s per GPU (NVIDIA's and Meta's published tables):
// `model_tflops_per_gpu`.
double model_tflops_per_gpu(const PlanResult& p, const simulator::GpuSpec& gpu);
// "MFU 60.4 % of the BF16 peak (30.2 % of the FP8 peak; 597 model TFLOP/s
// per GPU)": the report's labelled MFU of a plan.
std::string mfu_text(const PlanResult& p, const simulator::GpuSpec& gpu);
// The assumptions line of --cost-model (and, for owned, every number of the
// owned cost with its source, one per line).
std::string pricing_markdown(const Pricing& p);
std::string plan_report_markdown(const PlanReportView& v);
// The training objective (--tokens, --unique-tokens, --inference-tokens:
// planner/search/objective.h): whether one is set, and its report section
// ("" when none). Implemented in plan_report_objective.cc.
bool has_training_objective(const SearchOptions& o);
std::string training_objective_markdown(const PlanReportView& v);
// Raw numbers, units in the header (params, iteration_s, days, cost_usd,
// mfu, ...), the full architecture, one row per candidate.
std::string candidates_csv(const PlanReportView& v);
// Every simulated plan, raw numbers, units in the header.
std::string plans_csv(const PlanReportView& v);
// Days of `p` (a plan of v.result) to train `tokens`: expected wall-clock
// days with failures (deadline_days), compute days with --no-interruptions.
double plan_days(const PlanReportView& v, const PlanResult& p, double tokens);
// Training days at the band's low and high quantiles (the point estimate
// when the band is unknown).
double days_at_low(const PlanReportView& v, const Candidate& c);
double days_at_high(const PlanReportView& v, const Candidate& c);
// The error band of candidate `c`'s best plan (TimeBand::of); the pooled
// band when it has none.
const TimeBand& candidate_band(const PlanReportView& v, const Candidate& c);
// The band of the answer (candidate_band of the best candidate); the pooled
// band when there is no answer.
const TimeBand& answer_band(const PlanReportView& v);
// One-line description of a model's architecture ("llama: 80 layers, hidden
// 8192, 64 heads (8 KV), FFN 28672 SwiGLU, RoPE, untied, seq 8192, vocab
// 128256").
std::string architecture_line(const simulator::Model& m);
// The shell-quoted command line.
std::string command_line_text(const std::vector<std::string>& argv);
// Indices into result.plans of the time-cost Pareto front of the best
// candidate's fitting plans (its tokens), sorted by time.
std::vector<int> best_pareto(const PlanReportView& v);
std::string days_vs_params_svg(const PlanReportView& v);
std::string pareto_svg(const PlanReportView& v);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_REPORT_PLAN_REPORT_H_

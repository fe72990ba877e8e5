// The planner's report: Markdown, CSV tables of candidates and plans, and
// SVG plots (days vs parameters with the deadline; the time-cost Pareto
// front of the chosen model's plans); result.json is plan_report_json.h's.
// Pure functions of the tables the planner fills (plan_report_table.h).
#ifndef LLMPLAN_REPORTS_PLAN_REPORT_H_
#define LLMPLAN_REPORTS_PLAN_REPORT_H_

#include <string>
#include <vector>

#include "reports/plan_report_table.h"
#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"

namespace llmplan::reports {

// "t8 p4 d105 b1 B2100 v2 full SP ZeRO-1".
std::string plan_label(const simulator::Plan& plan);
// A plan's MFU (of the 16-bit peak, as simulate() reports it, fp8 plans
// included) against the peak of the precision it computes in (fp8 plans:
// the FP8 dense peak): `mfu_precision_peak` in the CSVs and JSON.
double mfu_precision_peak(const PlanRow& p, const simulator::GpuSpec& gpu);
// The same as model TFLOP/s per GPU (NVIDIA's and Meta's published tables):
// `model_tflops_per_gpu`.
double model_tflops_per_gpu(const PlanRow& p, const simulator::GpuSpec& gpu);
// "MFU 60.4 % of the BF16 peak (30.2 % of the FP8 peak; 597 model TFLOP/s
// per GPU)": the report's labelled MFU of a plan.
std::string mfu_text(const PlanRow& p, const simulator::GpuSpec& gpu);
// The assumptions line of --cost-model (and, for owned, every number of the
// owned cost with its source, one per line).
std::string pricing_markdown(const presets::Pricing& p);
std::string plan_report_markdown(const PlanReport& v);
// The training objective (--tokens, --unique-tokens, --inference-tokens):
// whether one is set, and its report section ("" when none). Implemented in
// plan_report_objective.cc.
bool has_training_objective(const TrainingInputs& t);
std::string training_objective_markdown(const PlanReport& v);
// Raw numbers, units in the header (params, iteration_s, days, cost_usd,
// mfu, ...), the full architecture, one row per candidate.
std::string candidates_csv(const PlanReport& v);
// Every simulated plan, raw numbers, units in the header.
std::string plans_csv(const PlanReport& v);
// Training days at the band's low and high quantiles (the point estimate
// when the band is unknown).
double days_at_low(const CandidateRow& c);
double days_at_high(const CandidateRow& c);
// The band of the answer; the pooled band when there is no answer.
const BandRow& answer_band(const PlanReport& v);
// One-line description of a model's architecture ("llama: 80 layers, hidden
// 8192, 64 heads (8 KV), FFN 28672 SwiGLU, RoPE, untied, seq 8192, vocab
// 128256").
std::string architecture_line(const simulator::Model& m);
// The shell-quoted command line.
std::string command_line_text(const std::vector<std::string>& argv);
std::string days_vs_params_svg(const PlanReport& v);
std::string pareto_svg(const PlanReport& v);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_PLAN_REPORT_H_

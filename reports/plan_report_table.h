// The tables of the planner's report (report.md, candidates.csv, plans.csv,
// result.json, the plots: plan_report.h writes them). The planner fills
// them from a search (planner/search/report_tables.h): every figure a
// writer prints is here, computed, so the writers only format. Plain values.
#ifndef LLMPLAN_REPORTS_PLAN_REPORT_TABLE_H_
#define LLMPLAN_REPORTS_PLAN_REPORT_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "presets/interruptions.h"
#include "presets/ownership.h"
#include "reports/failures_table.h"
#include "scaling/law.h"
#include "scaling/loss_interval.h"
#include "simulator/caveats.h"
#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/plan.h"
#include "simulator/simulate.h"

namespace llmplan::reports {

// result.json's schema version (reports/schema/result.schema.json).
inline constexpr int kResultSchemaVersion = 2;

// The training-time band of one plan: measured/predicted iteration-time
// ratios at two probabilities from held-out runs (the planner's TimeBand
// without its cells). Unknown: no validation data.
struct BandRow {
  bool known = false;
  double p_low = 0.1, p_high = 0.9;
  double low_ratio = 1.0, high_ratio = 1.0;
  double confidence = 0, confidence_ratio = 1.0;
  int samples = 0;
  std::string source;
  std::string group;  // the runs the ratios come from (simulator::kPooledBandKey: all)
};

// One simulated plan of one model.
struct PlanRow {
  int shape = 0;  // index into ResultTable::candidates
  simulator::Plan plan;
  double iteration_time_s = 0;
  double mfu = 0;  // of the 16-bit peak, FP8 plans included
  double peak_memory_bytes = 0;
  bool fits = false;
  double tokens_per_s = 0;
  int gpus_used = 0;
  uint32_t caveats = 0;  // simulator caveat bits
  // Days to train its model's tokens (the candidate's, or the token rule's
  // when the candidate has none): expected wall-clock days with failures,
  // compute days without the failure model.
  double days = 0;
};

// One candidate model and its best plan.
struct CandidateRow {
  simulator::Model model;
  double params = 0;         // all parameters (every expert)
  double active_params = 0;  // per token
  double tokens = 0;
  int best_plan = -1;        // index into ResultTable::plans; -1: none fits
  double days = 0;           // wall-clock days with its best plan
  double compute_days = 0;   // the same without interruptions
  double cost_usd = 0;
  double loss = 0;
  bool feasible = false;
  std::string why;  // "", "no-layout", "memory", "deadline", "budget"
  int plans_evaluated = 0;
  long layouts = 0;
  long most_layout_gpus = 0;
  double batch_tokens = 0;   // the automatic ladder's rung (0: listed batches)
  long memory_pruned = 0;
  int plans_fit = 0, plans_in_time = 0, plans_in_budget = 0;
  bool optimised = true;     // false: stopped at its first feasible plan
  double epochs = 0, repeat_penalty = 0, lifetime_flops = 0;
  // The report's figures beyond the search's:
  BandRow band;  // its best plan's band (the pooled band without a plan)
  // The compute-optimal global batch of its FLOPs at the rule's tokens.
  double optimal_batch_tokens = 0;
  scaling::LossInterval loss_interval;  // unknown (default) without a plan
  // Against the answer by predicted loss: "answer", "indistinguishable",
  // "higher", "lower", "unjudged", "" (no plan or no answer).
  std::string loss_vs_answer;
  Goodput goodput;  // its best plan's failure figures (failure model on)
};

// The compute-optimal answer the inference search matched.
struct InferenceReference {
  bool present = false;
  double params = 0, active_params = 0, tokens = 0, loss = 0, days = 0, cost_usd = 0;
  double lifetime_flops = 0;        // 6 N D + 2 N T of the reference
  // scaling::lifetime_optimal for the same loss and T (the law alone).
  double formula_params = 0, formula_tokens = 0, formula_flops = 0;
};

// A search's candidates and plans.
struct ResultTable {
  std::vector<CandidateRow> candidates;  // ascending params
  std::vector<PlanRow> plans;
  int best = -1;
  long plans_evaluated = 0;
  double naive_flops = 0, naive_params = 0, naive_tokens = 0, naive_days = 0;
  int naive_candidate = -1;
  bool pinned = false;
  InferenceReference inference_reference;
  std::string pruning_off;
  long plans_pruned_deadline = 0, plans_pruned_incumbent = 0, plans_pruned_answer = 0;
  bool failures = false;  // the failure model was on (CandidateRow::goodput)
  // The answer's Monte Carlo of wall time (failures on and an answer).
  WallDistribution answer_distribution;
  // Indices into plans of the time-cost Pareto front of the answer's
  // fitting plans, sorted by time.
  std::vector<int> pareto;
};

// --tokens, --unique-tokens, --inference-tokens; zero: off.
struct TrainingInputs {
  double tokens = 0, unique_tokens = 0, inference_tokens = 0, serving_mfu = 0, target_loss = 0;
};

// An expert layout of the MoE grid.
struct MoeLayout {
  int experts = 0, top_k = 0;
  double expert_ffn_per_hidden = 0;
  int shared_experts = 0;
};

// What the search was asked.
struct SearchInputs {
  int gpus = 0;
  double days = 0;
  double budget_usd = 0;
  bool loss_objective = false;     // --objective loss (else largest)
  bool tokens_use_law = false;     // D = the law's compute-optimal D for N
  double tokens_per_param = 20.0;  // otherwise D = tokens_per_param N
  bool trains_to_deadline = false; // tokens: as many as finish in time
  scaling::LossLaw law;
  std::string family;              // "gpt", "llama", "moe"
  simulator::Model shape_template;
  std::vector<simulator::Model> shapes;  // --shapes, --model
  std::vector<MoeLayout> moe_layouts;    // the moe family's grid
  double moe_grid_step = 2.0;
  std::string plan_space;                // its description
  std::vector<double> global_batch_tokens;  // listed (empty: the automatic ladder)
  std::vector<int> global_batch;
  std::vector<double> default_batch_ladder_tokens;
  double batch_ladder_top_tokens = 0;
  BandRow band;                // the pooled band
  bool band_has_cells = false; // per plan-kind bands exist
  presets::Pricing pricing;
  TrainingInputs training;
  presets::Reliability reliability;
};

// --family moe's dense-vs-MoE verdict: both answers' predicted losses under
// the same law, compared with paired draws.
struct DenseVerdict {
  bool available = false;  // both searches have an answer
  std::string objective;   // "largest" or "loss"
  std::string law;
  double moe_loss = 0, dense_loss = 0;
  scaling::LossInterval moe_interval, dense_interval;
  scaling::LossComparison comparison;  // MoE minus dense, paired
  std::string headline;  // "moe" or "dense": the lower predicted loss
  std::string sentence;  // one paragraph naming objective, law, losses, verdict
};

// The whole report.
struct PlanReport {
  simulator::Cluster cluster;
  SearchInputs options;
  ResultTable result;
  std::string law_name;
  std::vector<std::string> notes;
  // The answer's plan simulated again in full (time and memory breakdown);
  // null without an answer. Not owned.
  const simulator::StepReport* best_report = nullptr;
  std::vector<simulator::Caveat> caveats;
  std::vector<std::string> command_line;  // argv
  bool plots_written = false;             // SVGs beside the report (--out)
  // --family moe: the dense (llama family) search for the same budget.
  bool has_dense = false;
  std::string dense_law;
  ResultTable dense;
  DenseVerdict verdict;
};

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_PLAN_REPORT_TABLE_H_

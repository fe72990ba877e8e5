// The outputs of `llmplan frontier`: one planner answer per cell of a grid
// (hardware x GPU count x deadline x budget), as a CSV and a JSON table for
// machines, and a Markdown report with SVG heatmaps for people.
//
// Every function is pure: the same FrontierTable always gives byte-identical
// text, whatever the thread or process count that computed it (nothing here
// may print a time, a thread count or a rank count).
#ifndef LLMPLAN_REPORTS_FRONTIER_REPORT_H_
#define LLMPLAN_REPORTS_FRONTIER_REPORT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "presets/ownership.h"

namespace llmplan::reports {

// The planner's answer for one cell. `found` is false when no model is
// feasible there (then only the grid coordinates and `why` are meaningful).
struct FrontierCell {
  // Grid coordinates.
  std::string hardware;        // the cluster preset's name ("dgx-h100")
  std::string gpu;             // its GPU's name ("h100-sxm")
  int gpus = 0;                // GPUs available (--gpus entry)
  double days = 0;             // deadline (--days entry)
  double budget_usd = 0;       // --budget-usd entry; 0: no budget
  // The answer.
  bool found = false;
  std::string why;             // !found: "no-layout", "memory", "deadline", "budget"
  std::string model;           // shape name ("llama-l80-h8192")
  std::string architecture;    // one line: layers, hidden, heads, experts ...
  double params = 0;           // all parameters
  double active_params = 0;    // per token (= params for a dense model)
  double tokens = 0;           // training tokens
  double loss = 0;             // predicted final loss (the law below)
  std::string plan;            // plan label ("t8 p12 d32 b1 B1536 SP ZeRO-1 ...")
  int gpus_used = 0;           // GPUs the plan uses (<= gpus)
  double train_days = 0;       // simulated days to train `tokens`
  double mfu = 0;              // 0..1, of the 16-bit (bf16) peak, FP8 plans included
  double mfu_precision_peak = 0;    // 0..1, of the peak of the plan's precision (FP8: FP8 peak)
  double model_tflops_per_gpu = 0;  // model TFLOP/s per GPU (NVIDIA's and Meta's tables)
  std::string precision;       // the plan's precision: "bf16", "fp16", "fp8"
  int cp = 0;                  // context-parallel size
  int ep = 0;                  // expert-parallel size (1: dense)
  int etp = 0;                 // expert tensor-parallel size
  int experts = 0;             // routed experts per MoE layer (0: dense)
  double cost_usd = 0;         // gpus_used x hours x the GPU's price
  double gpu_days = 0;         // gpus_used x train_days
  std::vector<std::string> caveats;  // caveat names (simulator/caveats.h), sorted
  // --cost-model given: the cost under each of FrontierTable::cost_models,
  // in that order (gpus_used x train_days x 24 h x that model's price; the
  // first equals cost_usd). Empty otherwise.
  std::vector<double> costs_usd;
  // Failures (issue 28; unless --no-interruptions): train_days are expected
  // wall-clock days, compute_days the same without interruptions.
  bool failures = false;
  double compute_days = 0;
  double expected_interruptions = 0;
  double goodput = 1;             // compute_days / train_days
  double checkpoint_interval_s = 0;
};

// How one hardware entry's GPU-hour is priced under one cost model
// (--cost-model): "cloud" (its price preset) or "owned" (capex amortised +
// power; the owned-cost figures and their sources, presets/ownership.h,
// zero under cloud). usd_per_gpu_hour is the price under the model (0:
// unknown, cloud without a price).
struct FrontierPricing : presets::OwnedCost {
  std::string cost_model;         // "cloud" or "owned"
};

// A whole study. Cells are in grid order: hardware (outermost, as listed),
// then gpus, then days, then budget (innermost), every combination present.
struct FrontierTable {
  std::vector<std::string> hardware;  // cluster preset names, as listed
  std::vector<std::string> gpu_names; // the GPU of each hardware entry
  std::vector<double> gpu_price_usd_per_hour;  // per hardware entry (0: unknown)
  std::vector<int> gpus;
  std::vector<double> days;
  std::vector<double> budgets_usd;    // {0} when no --budget-usd was given
  std::vector<FrontierCell> cells;
  // How the answers were chosen.
  std::string objective;              // "largest" or "loss"
  std::string law;                    // loss-law name
  std::string family;                 // "gpt", "llama", "moe" or "shapes"
  // Reuse: distinct (hardware, shape, plan) simulations run, and how many
  // plan evaluations the cells' searches asked for in all (>= simulations;
  // the difference was served from the shared results).
  long simulations = 0;
  long plan_lookups = 0;
  std::vector<std::string> command_line;  // argv, as in the planner's report
  // --cost-model as given ("cloud", "owned" or both, in order; the first
  // priced cost_usd and the budgets); empty when not given, and then none of
  // the outputs mention cost models (the cloud price is used).
  std::vector<std::string> cost_models;
  // [hardware][cost model], when cost_models is not empty.
  std::vector<std::vector<FrontierPricing>> pricing;
  // Failures modelled (issue 28): the CSV gains compute_days,
  // expected_interruptions, goodput and checkpoint_interval_s columns.
  bool failures = false;
};

// The metric a heatmap colours.
enum class FrontierMetric {
  kParams,           // largest model (total parameters; log scale)
  kLoss,             // predicted loss (lower is better)
  kCostPerLossPoint, // dollars per 0.01 of loss gained over the previous deadline
};

// One row per cell, in grid order, with a header; numbers in full precision
// ("%.17g" style round-trip or fixed decimals, always the same for the same
// value), empty fields where !found.
std::string frontier_csv(const FrontierTable& t);
// {"cells": [...], "hardware": [...], "simulations": .., ...}: every field
// of FrontierTable and FrontierCell under its snake_case name. With cost
// models (--cost-model): "cost_models", "pricing" (per hardware
// {"hardware", "by_cost_model": [{"cost_model", "usd_per_gpu_hour",
// "ownership": {...} or null}]}) and per cell "costs_usd" {"cloud": ..,
// "owned": ..} (null where the price is unknown); the CSV then appends one
// column cost_usd_<model> per model, and the Markdown lists the pricing in
// its assumptions and adds "## Hardware comparison" (per GPU count x
// deadline x budget, one row per hardware: model, loss, days, GPUs, and per
// cost model the cost, $ per billion parameters, and $ per 0.01 of loss
// gained over the first hardware listed). Without cost models none of these
// appear (outputs as before).
std::string frontier_json(const FrontierTable& t);
// The report: how it was made (command line, law, objective, reuse line
// "N simulations served M plan evaluations across K cells"), per hardware
// and budget a table gpus x days of the answers, links to the SVGs below
// (by the file names frontier_svg_files() gives), and notes (caveats,
// cells without an answer and why).
std::string frontier_markdown(const FrontierTable& t);

// One SVG file of the study: name ("heatmap-params-dgx-h100.svg") and text.
struct SvgFile {
  std::string name;
  std::string svg;
};
// Every figure of the report: per hardware (and budget, when several) a
// heatmap for each FrontierMetric (rows gpus, columns days, labelled cells,
// a colour scale legend, grey "none" cells), and one plot of params vs
// GPU-days (log-log, one series per hardware).
std::vector<SvgFile> frontier_svg_files(const FrontierTable& t);

// Cost per loss point of t.cells[cell], in US dollars per 0.01 of predicted
// loss: what the extra time of this cell's deadline buys, against the cell
// with the same hardware, GPU count and budget at the previous (next
// shorter) deadline of the study:
//   (cost_usd - cost_usd_prev) / ((loss_prev - loss) / 0.01).
// A low value means the longer deadline buys a better model cheaply; a
// negative one means it is both better and cheaper. NaN (undefined) when
// `cell` is out of range, the cell or the previous one has no answer, the
// cell is at the shortest deadline, the loss did not improve
// (loss_prev - loss <= 0), or a cost or loss is not finite or a cost is not
// positive (no price for the GPU). Pure; O(cells) per call.
double cost_per_loss_point(const FrontierTable& t, size_t cell);

// The file names frontier_svg_files() gives for `t`, in the same order,
// without rendering anything (the Markdown report links them).
std::vector<std::string> frontier_svg_names(const FrontierTable& t);

}  // namespace llmplan::reports

#endif  // LLMPLAN_REPORTS_FRONTIER_REPORT_H_

// `llmplan frontier`: the planner's answer for every cell of a grid of
// hardware x GPU counts x deadlines x budgets, computed as many searches
// that share their simulations.
//
// Reuse. A simulation depends on the hardware, the model shape and the plan
// only: the deadline and the budget change which plan and model win, never a
// plan's iteration time, and the plan space of G GPUs is the same for every
// deadline. Every cell runs the planner's own resumable search (SearchRun,
// planner/search/search.h); the cells advance in lock-step rounds (the coarse size
// grid, then the refinement around each cell's answer), and each round
// simulates only the (hardware, shape, plan) jobs no earlier round or other
// cell has simulated. A cell's answer is therefore exactly what `llmplan
// --gpus G --days D --gpu X` prints for it (same model, plan, days, loss,
// cost): the same code path, fed the same (pure, deterministic) simulations.
//
// Distribution. A round's new jobs are split over the ranks of a process
// group (planner/study/distributed.h) by job index, strided (rank r takes jobs r,
// r + N, r + 2N, ...; a balanced, deterministic partition); each rank
// simulates its share with OpenMP threads, and all_gather gives every rank
// every result (doubles as their exact bytes), so every rank holds the same
// cache and computes the same next round. The table is byte-identical for
// any rank and thread count; a rank without jobs in a round contributes an
// empty blob.
#ifndef LLMPLAN_PLANNER_STUDY_FRONTIER_H_
#define LLMPLAN_PLANNER_STUDY_FRONTIER_H_

#include <functional>
#include <string>
#include <vector>

#include "planner/search/search.h"
#include "planner/study/distributed.h"
#include "reports/frontier_report.h"
#include "simulator/cluster.h"
#include "base/status.h"

namespace llmplan::planner {

// Bounds of a study, so that no grid exhausts memory or time (issue 31: 1,000
// GPU counts x 1,000 deadlines ran 287 s, reached 7.3 GB and aborted). A cell
// is one planner search; docs/frontier.md's 40-cell study takes about 18 s on 2
// cores, so 256 cells stay within minutes. Each list (hardware, GPU counts,
// deadlines, budgets) holds at most kMaxFrontierListLength entries.
inline constexpr long kMaxFrontierCells = 256;
inline constexpr long kMaxFrontierListLength = 64;

// One hardware entry of a study: the cluster and the planner's options on it
// (everything but gpus, days and budget_usd, which each cell sets: objective,
// law, family, tokens rule, shapes, plan space, the GPU's error band, the
// cluster's cost model, threads). Its progress callback is not used.
struct FrontierHardware {
  simulator::Cluster cluster;
  SearchOptions options;
  // --cost-model: the GPU-hour's pricing under each of
  // FrontierStudy::cost_models, in order; the cluster's usd_per_gpu_hour and
  // options.pricing are the first's. Empty when cost_models is.
  std::vector<Pricing> pricings;
};

struct FrontierStudy {
  std::vector<FrontierHardware> hardware;  // as listed
  std::vector<int> gpus;                   // as listed
  std::vector<double> days;                // as listed
  std::vector<double> budgets_usd = {0};   // {0}: no budget
  // FrontierTable::family: "gpt", "llama", "moe", or "shapes" for --shapes
  // and --model.
  std::string family;
  std::vector<std::string> command_line;  // argv, for the report
  // --cost-model as given ("cloud", "owned", or both to compare); empty: not
  // given (cloud prices, and the table says nothing about cost models).
  std::vector<std::string> cost_models;
};

// Where a running study is (for a progress display).
struct FrontierProgress {
  int round = 0;         // 1: coarse grids, 2: refinement, ...
  long round_done = 0;   // this rank's simulations done this round
  long round_total = 0;  // this rank's share of the round's new jobs
  long round_jobs = 0;   // new jobs of the round, all ranks
  long cells_done = 0;   // cells whose search has finished
  long cells = 0;
  long simulations = 0;   // distinct simulations finished before this round
  long plan_lookups = 0;  // plan evaluations the cells asked for so far
};

struct FrontierRunOptions {
  int threads = 0;  // OpenMP threads per rank; 0: OpenMP's default
  // Called on this rank after each batch of its simulations and at the end
  // of each round (one thread at a time). Callers show it on rank 0 only.
  std::function<void(const FrontierProgress&)> progress;
  // The collective that gives every rank every rank's blob, by rank; empty:
  // all_gather(group, blob). Tests run several ranks as threads of one
  // process with an in-process one.
  std::function<Result<std::vector<std::string>>(const std::string& blob)> gather;
};

// The number of cells of `study`: hardware x GPU counts x deadlines x budgets
// (one "no budget" when the list is empty).
long frontier_cell_count(const FrontierStudy& study);

// InvalidArgument naming the flag when a list is longer than
// kMaxFrontierListLength or the grid has more than kMaxFrontierCells cells.
Status check_frontier_bounds(const FrontierStudy& study);

// The cells' search options, in grid order (hardware outermost, then gpus,
// days, budget), each validated as the planner does (SearchRun::start) with
// an error naming the cell ("dgx-h100, 512 GPUs, 14 days: --gpus 512 is
// fewer than one node ..."), and check_frontier_bounds' errors. Pure: the same study gives the same error on
// every rank, so call it before any collective.
Status validate_study(const FrontierStudy& study);

// Runs the study on `group` (every rank calls it, with the same study).
// Returns the same table on every rank (only rank 0 should write it).
// Errors: validate_study's (before any collective), or an Internal error of
// a collective.
Result<reports::FrontierTable> run_frontier(const FrontierStudy& study, const ProcessGroup& group,
                                            const FrontierRunOptions& options);

// One cell of the table from its search: the answer (result.best) with its
// plan, days, loss, cost and caveats, or found = false with the furthest
// stage any candidate reached as `why` ("budget" > "deadline" > "memory" >
// "no-layout"). A pinned model (--model) is found whenever a plan fits;
// its `why` then says whether it misses the deadline or budget.
reports::FrontierCell frontier_cell(const simulator::Cluster& cluster, const SearchOptions& options,
                                    const SearchResult& result);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_STUDY_FRONTIER_H_

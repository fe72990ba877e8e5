#include "planner/study/frontier.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "base/number_text.h"
#include "planner/search/loss_verdict.h"
#include "reports/plan_report.h"
#include "base/threads.h"
#include "simulator/caveats.h"

namespace llmplan::planner {

using simulator::Cluster;
using simulator::Model;
using simulator::Plan;

namespace {

// "dgx-h100, 512 GPUs, 14 days, budget $1e+06".
std::string cell_name(const Cluster& cluster, int gpus, double days, double budget_usd) {
  std::string s =
      cluster.name + ", " + std::to_string(gpus) + " GPUs, " + number_text(days) + " days";
  if (budget_usd > 0) s += ", budget $" + number_text(budget_usd);
  return s;
}

struct CellSpec {
  int hardware = 0;
  SearchOptions options;
};

std::vector<CellSpec> cell_specs(const FrontierStudy& study) {
  std::vector<CellSpec> cells;
  // One enumeration cache per hardware entry (one cluster and plan space):
  // its cells enumerate each (shape, GPU count) once (enumeration_cache.h).
  std::vector<std::shared_ptr<EnumerationCache>> enumerations;
  // And one lowering cache (one cluster and cost model): the cells' bounds
  // lower each chunk once (lowering_cache.h).
  std::vector<std::shared_ptr<simulator::LoweringCache>> lowerings;
  for (size_t h = 0; h < study.hardware.size(); ++h) {
    enumerations.push_back(std::make_shared<EnumerationCache>());
    lowerings.push_back(std::make_shared<simulator::LoweringCache>());
  }
  const std::vector<double> budgets =
      study.budgets_usd.empty() ? std::vector<double>{0} : study.budgets_usd;
  for (int h = 0; h < static_cast<int>(study.hardware.size()); ++h) {
    for (int g : study.gpus) {
      for (double d : study.days) {
        for (double b : budgets) {
          CellSpec c;
          c.hardware = h;
          c.options = study.hardware[h].options;
          c.options.gpus = g;
          c.options.days = d;
          c.options.budget_usd = b;
          c.options.progress = nullptr;
          c.options.enumeration_cache = enumerations[h];
          // A cell reports its answer, the answer's best plan and, without
          // one, the models' reasons (SearchOptions::answer_only).
          c.options.answer_only = true;
          c.options.lowering_cache = lowerings[h];
          cells.push_back(std::move(c));
        }
      }
    }
  }
  return cells;
}

// The simulations of one hardware entry: distinct (shape, plan) pairs and,
// once simulated, their results. Shapes are interned (Model::operator==);
// plans are found by a hash of their main fields and compared in full.
class SimulationCache {
 public:
  int shape_id(const Model& m) {
    std::vector<int>& ids = by_name_[m.name];
    for (int id : ids) {
      if (shapes_[id] == m) return id;
    }
    shapes_.push_back(m);
    ids.push_back(static_cast<int>(shapes_.size()) - 1);
    return ids.back();
  }
  // The entry of (shape, plan); *added says whether it is new.
  int entry(int shape, const Plan& plan, bool* added) {
    std::vector<int>& bucket = index_[hash(shape, plan)];
    for (int e : bucket) {
      if (entries_[e].shape == shape && entries_[e].plan == plan) {
        *added = false;
        return e;
      }
    }
    entries_.push_back({shape, plan, PlanResult{}});
    bucket.push_back(static_cast<int>(entries_.size()) - 1);
    *added = true;
    return bucket.back();
  }
  const Model& shape(int id) const { return shapes_[id]; }
  const Plan& plan(int e) const { return entries_[e].plan; }
  int entry_shape(int e) const { return entries_[e].shape; }
  PlanResult& result(int e) { return entries_[e].result; }
  const PlanResult& result(int e) const { return entries_[e].result; }

 private:
  struct Entry {
    int shape;
    Plan plan;
    PlanResult result;
  };
  static uint64_t hash(int shape, const Plan& p) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](int64_t v) {
      h ^= static_cast<uint64_t>(v);
      h *= 1099511628211ull;
    };
    mix(shape);
    mix(p.tensor_parallel);
    mix(p.pipeline_parallel);
    mix(p.data_parallel);
    mix(p.context_parallel);
    mix(p.micro_batch_size);
    mix(p.global_batch_size);
    mix(p.virtual_stages);
    mix(static_cast<int>(p.schedule));
    mix(static_cast<int>(p.recompute));
    mix(p.sequence_parallel);
    mix(p.distributed_optimizer);
    mix(p.zero_stage);
    mix(p.fsdp_group);
    mix(static_cast<int>(p.precision));
    mix(p.expert_parallel);
    mix(p.expert_tensor_parallel);
    return h;
  }
  std::vector<Model> shapes_;
  std::unordered_map<std::string, std::vector<int>> by_name_;
  std::vector<Entry> entries_;
  std::unordered_map<uint64_t, std::vector<int>> index_;
};

// What a simulation's result needs beyond its plan, as exact bytes.
constexpr size_t kRecordBytes = 4 * sizeof(double) + sizeof(uint32_t) + 1;

void put(std::string* out, const void* p, size_t n) { out->append(static_cast<const char*>(p), n); }

void serialize(const PlanResult& r, std::string* out) {
  put(out, &r.iteration_time_s, sizeof(double));
  put(out, &r.mfu, sizeof(double));
  put(out, &r.peak_memory_bytes, sizeof(double));
  put(out, &r.tokens_per_s, sizeof(double));
  put(out, &r.caveats, sizeof(uint32_t));
  const char fits = r.fits ? 1 : 0;
  put(out, &fits, 1);
}

void deserialize(const char* p, PlanResult* r) {
  std::memcpy(&r->iteration_time_s, p, sizeof(double));
  p += sizeof(double);
  std::memcpy(&r->mfu, p, sizeof(double));
  p += sizeof(double);
  std::memcpy(&r->peak_memory_bytes, p, sizeof(double));
  p += sizeof(double);
  std::memcpy(&r->tokens_per_s, p, sizeof(double));
  p += sizeof(double);
  std::memcpy(&r->caveats, p, sizeof(uint32_t));
  p += sizeof(uint32_t);
  r->fits = *p != 0;
}

// "budget" > "deadline" > "memory" > "no-layout".
int why_rank(const std::string& why) {
  if (why == "budget") return 3;
  if (why == "deadline") return 2;
  if (why == "memory") return 1;
  return 0;
}

}  // namespace

reports::FrontierCell frontier_cell(const Cluster& cluster, const SearchOptions& options,
                                    const SearchResult& result) {
  reports::FrontierCell cell;
  cell.hardware = cluster.name;
  cell.gpu = cluster.gpu.name;
  cell.gpus = options.gpus;
  cell.days = options.days;
  cell.budget_usd = options.budget_usd;
  if (result.best < 0) {
    cell.found = false;
    cell.why = "no-layout";
    for (const Candidate& c : result.candidates) {
      if (why_rank(c.why) > why_rank(cell.why)) cell.why = c.why;
    }
    return cell;
  }
  const Candidate& c = result.candidates[result.best];
  const PlanResult& p = result.plans[c.best_plan];
  cell.found = true;
  cell.why = c.why;
  cell.model = c.model.name;
  cell.architecture = reports::architecture_line(c.model);
  cell.params = c.params;
  cell.active_params = c.active_params;
  cell.tokens = c.tokens;
  cell.loss = c.loss;
  cell.plan = reports::plan_label(p.plan);
  cell.gpus_used = p.gpus_used;
  cell.train_days = c.days;
  cell.mfu = p.mfu;
  cell.mfu_precision_peak = simulator::mfu_of_precision_peak(p.mfu, cluster.gpu, p.plan.precision);
  cell.model_tflops_per_gpu =
      simulator::model_flops_per_gpu(p.mfu, cluster.gpu, p.plan.precision) / 1e12;
  cell.precision = simulator::to_string(p.plan.precision);
  cell.cp = p.plan.context_parallel;
  cell.ep = p.plan.expert_parallel;
  cell.etp = p.plan.expert_tensor_parallel;
  cell.experts = c.model.num_experts;
  cell.cost_usd = c.cost_usd;
  cell.gpu_days = p.gpus_used * c.days;
  if (options.reliability.enabled) {  // issue 28: train_days are wall days
    const Goodput g = goodput(c.model, p.plan, cluster, options.reliability, c.compute_days * 86400.0);
    cell.failures = true;
    cell.compute_days = c.compute_days;
    cell.expected_interruptions = g.interruptions;
    cell.goodput = g.goodput;
    cell.checkpoint_interval_s = g.interval_s;
  }
  for (const simulator::Caveat& cv :
       simulator::caveat_list(p.caveats, cluster.gpu, p.mfu, p.plan.precision)) {
    cell.caveats.push_back(cv.code);
  }
  if (!moe_law_caveat(options.law, c.model).empty()) cell.caveats.push_back("moe-law-extrapolated");
  std::sort(cell.caveats.begin(), cell.caveats.end());
  cell.caveats.erase(std::unique(cell.caveats.begin(), cell.caveats.end()), cell.caveats.end());
  return cell;
}

long frontier_cell_count(const FrontierStudy& study) {
  return static_cast<long>(study.hardware.size()) * static_cast<long>(study.gpus.size()) *
         static_cast<long>(study.days.size()) *
         std::max<long>(1, static_cast<long>(study.budgets_usd.size()));
}

Status check_frontier_bounds(const FrontierStudy& study) {
  for (auto [flag, n] : {std::pair{"--gpu/--cluster", study.hardware.size()},
                         {"--gpus", study.gpus.size()},
                         {"--days", study.days.size()},
                         {"--budget-usd", study.budgets_usd.size()}}) {
    if (static_cast<long>(n) > kMaxFrontierListLength) {
      return Status::invalid_argument(std::string(flag) + ": " + std::to_string(n) +
                                      " entries, more than the limit of " +
                                      std::to_string(kMaxFrontierListLength));
    }
  }
  if (const long cells = frontier_cell_count(study); cells > kMaxFrontierCells) {
    return Status::invalid_argument(
        "frontier: the grid has " + std::to_string(cells) + " cells (" +
        std::to_string(study.hardware.size()) + " hardware x " +
        std::to_string(study.gpus.size()) + " GPU counts x " + std::to_string(study.days.size()) +
        " deadlines" +
        (study.budgets_usd.size() <= 1 ? ""
                                   : " x " + std::to_string(study.budgets_usd.size()) + " budgets") +
        "), more than the limit of " + std::to_string(kMaxFrontierCells) +
        "; split it into several studies");
  }
  return Status();
}

Status validate_study(const FrontierStudy& study) {
  if (study.hardware.empty()) return Status::invalid_argument("frontier: no hardware");
  if (study.gpus.empty()) return Status::invalid_argument("--gpus: empty list");
  if (study.days.empty()) return Status::invalid_argument("--days: empty list");
  LLMPLAN_RETURN_IF_ERROR(check_frontier_bounds(study));
  for (const CellSpec& c : cell_specs(study)) {
    const Cluster& cluster = study.hardware[c.hardware].cluster;
    const Status st = SearchRun::check(cluster, c.options);
    if (!st.ok()) {
      return st.with_prefix(
          cell_name(cluster, c.options.gpus, c.options.days, c.options.budget_usd));
    }
  }
  return Status();
}

namespace {

// Never more threads than a loop has items (base/threads.h).
int frontier_threads(const FrontierRunOptions& options, long items) {
  return loop_threads(options.threads, omp_get_max_threads(), items);
}

// The cells' searches started: each cell's first step (its plan
// enumeration), cells in parallel.
Result<std::vector<SearchRun>> start_runs(const FrontierStudy& study,
                                          const std::vector<CellSpec>& specs,
                                          const FrontierRunOptions& options) {
  // Each cell's first step (its plan enumeration), cells in parallel.
  const long cell_count = static_cast<long>(specs.size());
  std::vector<std::optional<SearchRun>> slots(specs.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(frontier_threads(options, cell_count))
  for (long c = 0; c < cell_count; ++c) {
    Result<SearchRun> run =
        SearchRun::start(study.hardware[specs[c].hardware].cluster, specs[c].options);
    if (run.ok()) slots[c].emplace(std::move(run.value()));
  }
  std::vector<SearchRun> runs;
  runs.reserve(specs.size());
  for (long c = 0; c < cell_count; ++c) {
    if (!slots[c]) return Status::internal("frontier: a validated cell failed to start");
    runs.push_back(std::move(*slots[c]));
  }
  return runs;
}

// One simulation a round needs: a hardware entry's cache entry.
struct FrontierJob {
  int hardware;
  int entry;
};

// The entries each unfinished cell's step needs (into *needs); the new ones
// are the round's jobs. Adds the cells' plan lookups to *lookups.
std::vector<FrontierJob> round_jobs(const std::vector<SearchRun>& runs,
                                    const std::vector<CellSpec>& specs,
                                    std::vector<SimulationCache>* caches,
                                    std::vector<std::vector<int>>* needs, long* lookups) {
  std::vector<FrontierJob> jobs;
  needs->assign(runs.size(), {});
  for (size_t c = 0; c < runs.size(); ++c) {
    if (runs[c].done()) continue;
    SimulationCache& cache = (*caches)[specs[c].hardware];
    std::vector<int> shape_ids;
    for (const Model& m : runs[c].step_shapes()) shape_ids.push_back(cache.shape_id(m));
    for (const PlanTask& t : runs[c].step_tasks()) {
      bool added = false;
      const int e = cache.entry(shape_ids[t.shape], t.plan, &added);
      if (added) jobs.push_back({specs[c].hardware, e});
      (*needs)[c].push_back(e);
    }
    *lookups += static_cast<long>(runs[c].step_tasks().size());
  }
  return jobs;
}

// The simulations of the cluster entries, each hardware's set up once.
struct FrontierSims {
  std::vector<simulator::SimOptions> sims;
  std::vector<Result<simulator::SimSetup>> setups;
};

// This rank's share of the jobs (`mine`) simulated, in parallel, progress
// after every 64.
std::vector<PlanResult> simulate_share(const FrontierStudy& study,
                                       const std::vector<FrontierJob>& jobs,
                                       const std::vector<long>& mine,
                                       const std::vector<SimulationCache>& caches,
                                       const FrontierSims& fs, const FrontierRunOptions& options,
                                       const FrontierProgress& status) {
  const std::vector<simulator::SimOptions>& sims = fs.sims;
  const std::vector<Result<simulator::SimSetup>>& setups = fs.setups;
  std::vector<PlanResult> results(mine.size());
  const long n = static_cast<long>(mine.size());
  long done = 0;
#pragma omp parallel for schedule(dynamic, 4) num_threads(frontier_threads(options, n))
  for (long i = 0; i < n; ++i) {
    const FrontierJob& job = jobs[mine[i]];
    const SimulationCache& cache = caches[job.hardware];
    const Result<simulator::SimSetup>& setup = setups[job.hardware];
    results[i] = setup.ok() ? simulate_task(cache.shape(cache.entry_shape(job.entry)),
                                            cache.plan(job.entry), setup.value(),
                                            sims[job.hardware])
                            : simulate_task(cache.shape(cache.entry_shape(job.entry)),
                                            cache.plan(job.entry),
                                            study.hardware[job.hardware].cluster,
                                            sims[job.hardware]);
    if (options.progress) {
#pragma omp critical(llmplan_frontier_progress)
      {
        ++done;
        if (done % 64 == 0 && done < n) {
          FrontierProgress p = status;
          p.round_done = done;
          options.progress(p);
        }
      }
    }
  }
  return results;
}

// Every rank's results (this one's `results`) gathered into the caches.
Status gather_results(const std::vector<PlanResult>& results,
                      const std::vector<FrontierJob>& jobs, const ProcessGroup& group,
                      const FrontierRunOptions& options, std::vector<SimulationCache>* caches) {
  const int ranks = std::max(1, group.size);
  std::string blob;
  blob.reserve(results.size() * kRecordBytes);
  for (const PlanResult& r : results) serialize(r, &blob);
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<std::string> blobs,
                           options.gather ? options.gather(blob) : all_gather(group, blob));
  if (static_cast<int>(blobs.size()) != ranks) {
    return Status::internal("frontier: all_gather returned " + std::to_string(blobs.size()) +
                            " results for " + std::to_string(ranks) + " ranks");
  }
  for (int r = 0; r < ranks; ++r) {
    const long count = r < static_cast<long>(jobs.size())
                           ? (static_cast<long>(jobs.size()) - r + ranks - 1) / ranks
                           : 0;
    if (blobs[r].size() != static_cast<size_t>(count) * kRecordBytes) {
      return Status::internal("frontier: rank " + std::to_string(r) + " sent " +
                              std::to_string(blobs[r].size()) + " bytes for " +
                              std::to_string(count) + " simulations");
    }
    for (long k = 0; k < count; ++k) {
      const FrontierJob& job = jobs[r + k * ranks];
      PlanResult& out = (*caches)[job.hardware].result(job.entry);
      deserialize(blobs[r].data() + k * kRecordBytes, &out);
      out.plan = (*caches)[job.hardware].plan(job.entry);
      out.gpus_used = out.plan.world_size();
    }
  }
  return Status();
}

// The study's table from the finished searches.
reports::FrontierTable frontier_table(const FrontierStudy& study,
                                      const std::vector<CellSpec>& specs,
                                      const std::vector<SearchRun>& runs, long simulations,
                                      long lookups) {
  reports::FrontierTable t;
  for (const FrontierHardware& h : study.hardware) {
    t.hardware.push_back(h.cluster.name);
    t.gpu_names.push_back(h.cluster.gpu.name);
    t.gpu_price_usd_per_hour.push_back(h.cluster.usd_per_gpu_hour);
  }
  t.gpus = study.gpus;
  t.days = study.days;
  t.budgets_usd = study.budgets_usd.empty() ? std::vector<double>{0} : study.budgets_usd;
  t.cost_models = study.cost_models;
  if (!study.cost_models.empty()) {
    for (const FrontierHardware& h : study.hardware) {
      std::vector<reports::FrontierPricing> row;
      for (const Pricing& p : h.pricings) {
        reports::FrontierPricing f;
        if (p.model == "owned") static_cast<presets::OwnedCost&>(f) = p.owned;
        f.cost_model = p.model;
        f.usd_per_gpu_hour = p.usd_per_gpu_hour();
        row.push_back(std::move(f));
      }
      t.pricing.push_back(std::move(row));
    }
  }
  for (size_t c = 0; c < runs.size(); ++c) {
    const FrontierHardware& h = study.hardware[specs[c].hardware];
    t.failures = t.failures || specs[c].options.reliability.enabled;
    reports::FrontierCell cell = frontier_cell(h.cluster, specs[c].options, runs[c].result());
    if (cell.found) {
      // The first model priced the search: its cost is the cell's own.
      // An unknown price (0) gives NaN: empty in the CSV, null in the JSON.
      for (size_t m = 0; m < h.pricings.size(); ++m) {
        const double price = h.pricings[m].usd_per_gpu_hour();
        cell.costs_usd.push_back(!(price > 0) ? NAN
                                 : m == 0     ? cell.cost_usd
                                              : cell.gpu_days * 24.0 * price);
      }
    }
    t.cells.push_back(std::move(cell));
  }
  const SearchOptions& first = study.hardware.front().options;
  t.objective = first.objective == Objective::kLoss ? "loss" : "largest";
  t.law = first.law.name;
  t.family = study.family;
  t.simulations = simulations;
  t.plan_lookups = lookups;
  t.command_line = study.command_line;
  return t;
}

}  // namespace

Result<reports::FrontierTable> run_frontier(const FrontierStudy& study, const ProcessGroup& group,
                                            const FrontierRunOptions& options) {
  LLMPLAN_RETURN_IF_ERROR(validate_study(study));
  const std::vector<CellSpec> specs = cell_specs(study);
  const long cell_count = static_cast<long>(specs.size());
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<SearchRun> runs, start_runs(study, specs, options));
  const int hw = static_cast<int>(study.hardware.size());
  std::vector<SimulationCache> caches(hw);
  FrontierSims fs;
  fs.sims.resize(hw);
  for (int h = 0; h < hw; ++h) fs.sims[h].cost_model = study.hardware[h].options.cost_model;
  // Each hardware's cluster validated and cost model built once (simulate.h,
  // SimSetup); an invalid cluster: each task fails as simulate() fails it.
  for (int h = 0; h < hw; ++h) {
    fs.setups.push_back(simulator::SimSetup::make(study.hardware[h].cluster, fs.sims[h].cost_model));
  }

  FrontierProgress status;
  status.cells = static_cast<long>(runs.size());
  long simulations = 0, lookups = 0;
  const int ranks = std::max(1, group.size);
  for (int round = 1;; ++round) {
    // The entries each unfinished cell's step needs; the new ones are jobs.
    std::vector<std::vector<int>> needs;
    const std::vector<FrontierJob> jobs = round_jobs(runs, specs, &caches, &needs, &lookups);
    status.round = round;
    status.cells_done =
        std::count_if(runs.begin(), runs.end(), [](const SearchRun& r) { return r.done(); });
    status.simulations = simulations;
    status.plan_lookups = lookups;
    if (status.cells_done == status.cells) break;

    // This rank's share: jobs rank, rank + N, ...
    std::vector<long> mine;
    for (long j = group.rank; j < static_cast<long>(jobs.size()); j += ranks) mine.push_back(j);
    status.round_jobs = static_cast<long>(jobs.size());
    status.round_total = static_cast<long>(mine.size());
    status.round_done = 0;
    if (options.progress) options.progress(status);
    const long n = static_cast<long>(mine.size());
    const std::vector<PlanResult> results =
        simulate_share(study, jobs, mine, caches, fs, options, status);
    LLMPLAN_RETURN_IF_ERROR(gather_results(results, jobs, group, options, &caches));
    simulations += static_cast<long>(jobs.size());
    // Every cell's next step (selection, the refinement's enumeration), cells
    // in parallel; the cache is only read here.
#pragma omp parallel for schedule(dynamic, 1) num_threads(frontier_threads(options, cell_count))
    for (long c = 0; c < cell_count; ++c) {
      if (runs[c].done()) continue;
      const SimulationCache& cache = caches[specs[c].hardware];
      std::vector<PlanResult> step(needs[c].size());
      for (size_t i = 0; i < needs[c].size(); ++i) step[i] = cache.result(needs[c][i]);
      runs[c].advance(step);
    }
    if (options.progress) {
      FrontierProgress p = status;
      p.round_done = n;
      p.simulations = simulations;
      p.cells_done =
          std::count_if(runs.begin(), runs.end(), [](const SearchRun& r) { return r.done(); });
      options.progress(p);
    }
  }

  return frontier_table(study, specs, runs, simulations, lookups);
}

}  // namespace llmplan::planner

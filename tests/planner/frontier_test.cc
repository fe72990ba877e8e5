// `llmplan frontier`'s driver: every cell equals the single planner run
// (search()) for that cell, simulations are shared between cells, and the
// table does not depend on the thread count.
#include "planner/study/frontier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "presets/catalog.h"
#include "tests/planner/search_fixtures.h"

namespace llmplan::planner {
namespace {

simulator::Cluster cluster(const std::string& name) { return fixtures::builtin_cluster(name); }

// The planner's automatic gpt grid (coarse, then refined) on a small plan
// space, so that the test runs in seconds: fixtures::small_h100_options()
// with the GPU counts and deadlines left to the study (reset to the defaults).
SearchOptions small_options(Objective objective) {
  SearchOptions o = fixtures::small_h100_options();
  o.objective = objective;
  o.gpus = SearchOptions{}.gpus;
  o.days = SearchOptions{}.days;
  return o;
}

FrontierStudy small_study(Objective objective) {
  FrontierStudy s;
  for (const char* name : {"dgx-a100-80gb", "dgx-h100"}) {
    s.hardware.push_back({cluster(name), small_options(objective), {}});
  }
  s.gpus = {8, 32};
  s.days = {0.25, 1.5};
  s.budgets_usd = {0, 150};
  s.family = "gpt";
  return s;
}

void expect_same_cell(const reports::FrontierCell& a, const reports::FrontierCell& b,
                      const std::string& where) {
  EXPECT_EQ(a.hardware, b.hardware) << where;
  EXPECT_EQ(a.gpu, b.gpu) << where;
  EXPECT_EQ(a.gpus, b.gpus) << where;
  EXPECT_EQ(a.days, b.days) << where;
  EXPECT_EQ(a.budget_usd, b.budget_usd) << where;
  EXPECT_EQ(a.found, b.found) << where;
  EXPECT_EQ(a.why, b.why) << where;
  EXPECT_EQ(a.model, b.model) << where;
  EXPECT_EQ(a.architecture, b.architecture) << where;
  EXPECT_EQ(a.params, b.params) << where;
  EXPECT_EQ(a.active_params, b.active_params) << where;
  EXPECT_EQ(a.tokens, b.tokens) << where;
  EXPECT_EQ(a.loss, b.loss) << where;
  EXPECT_EQ(a.plan, b.plan) << where;
  EXPECT_EQ(a.gpus_used, b.gpus_used) << where;
  EXPECT_EQ(a.train_days, b.train_days) << where;
  EXPECT_EQ(a.mfu, b.mfu) << where;
  EXPECT_EQ(a.cost_usd, b.cost_usd) << where;
  EXPECT_EQ(a.gpu_days, b.gpu_days) << where;
  EXPECT_EQ(a.caveats, b.caveats) << where;
}

// Every cell of a 2 x 2 x 2 x 2 grid equals search() run alone with that
// cell's options (the single `llmplan --gpus G --days D` run), for both
// objectives and with a budget that binds.
void check_equals_single_runs(Objective objective) {
  const FrontierStudy study = small_study(objective);
  FrontierRunOptions run;
  run.threads = 2;
  auto table = run_frontier(study, ProcessGroup{}, run);
  ASSERT_TRUE(table.ok()) << table.status().message();
  const reports::FrontierTable& t = table.value();
  ASSERT_EQ(t.cells.size(), 16u);
  long searched_plans = 0;
  int found = 0, budget_changed = 0;
  size_t k = 0;
  for (const FrontierHardware& h : study.hardware) {
    for (int g : study.gpus) {
      for (double d : study.days) {
        for (double b : study.budgets_usd) {
          SearchOptions o = h.options;
          o.gpus = g;
          o.days = d;
          o.budget_usd = b;
          auto single = search(h.cluster, o);
          ASSERT_TRUE(single.ok()) << single.status().message();
          const reports::FrontierCell expected = frontier_cell(h.cluster, o, single.value());
          const std::string where = h.cluster.name + " " + std::to_string(g) + " GPUs " +
                                    std::to_string(d) + " days $" + std::to_string(b);
          expect_same_cell(t.cells[k], expected, where);
          // A cell searches for its answer only (SearchOptions::answer_only):
          // the same cell as the whole search, from fewer plans.
          o.answer_only = true;
          auto answer_only = search(h.cluster, o);
          ASSERT_TRUE(answer_only.ok()) << answer_only.status().message();
          expect_same_cell(frontier_cell(h.cluster, o, answer_only.value()), expected, where);
          EXPECT_LE(answer_only.value().plans_evaluated, single.value().plans_evaluated) << where;
          searched_plans += answer_only.value().plans_evaluated;
          found += expected.found ? 1 : 0;
          if (b > 0 && t.cells[k - 1].found &&
              (!t.cells[k].found || t.cells[k].model != t.cells[k - 1].model ||
               t.cells[k].plan != t.cells[k - 1].plan)) {
            ++budget_changed;
          }
          ++k;
        }
      }
    }
  }
  // The grid is not trivial: answers exist, and the budget changes some.
  EXPECT_GE(found, 8);
  EXPECT_GE(budget_changed, 1);
  // Every plan evaluation of the single (answer-only) runs was a lookup; fewer were
  // simulated (deadlines and budgets share them). Reuse of at least 1.5x:
  // the pruned searches look up few plans beyond the ones every cell needs
  // (1.97x for the loss objective since the interleaved bound, issue 30).
  EXPECT_EQ(t.plan_lookups, searched_plans);
  EXPECT_GT(t.simulations, 0);
  EXPECT_LT(t.simulations * 3, t.plan_lookups * 2);
}

TEST(Frontier, LargestEqualsSingleRuns) { check_equals_single_runs(Objective::kLargest); }
TEST(Frontier, LossEqualsSingleRuns) { check_equals_single_runs(Objective::kLoss); }

TEST(Frontier, SameTableForOneAndTwoThreads) {
  const FrontierStudy study = small_study(Objective::kLargest);
  FrontierRunOptions one, two;
  one.threads = 1;
  two.threads = 2;
  auto a = run_frontier(study, ProcessGroup{}, one);
  auto b = run_frontier(study, ProcessGroup{}, two);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a.value().cells.size(), b.value().cells.size());
  for (size_t i = 0; i < a.value().cells.size(); ++i) {
    expect_same_cell(a.value().cells[i], b.value().cells[i], std::to_string(i));
  }
  EXPECT_EQ(a.value().simulations, b.value().simulations);
  EXPECT_EQ(a.value().plan_lookups, b.value().plan_lookups);
}

// An in-process all_gather for `size` ranks run as threads: each call
// deposits its blob and waits until every rank of the same round has.
class ThreadGather {
 public:
  explicit ThreadGather(int size) : size_(size), blobs_(size) {}
  Result<std::vector<std::string>> gather(int rank, const std::string& blob) {
    std::unique_lock<std::mutex> lock(mutex_);
    const long round = round_;
    blobs_[rank] = blob;
    if (++arrived_ == size_) {
      done_ = blobs_;
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    return done_;
  }

 private:
  int size_;
  std::vector<std::string> blobs_, done_;
  int arrived_ = 0;
  long round_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
};

// `study` split over `size` ranks (threads here) gives every rank the table
// of one rank, byte for byte, with the same simulation and lookup counts.
void check_ranks(const FrontierStudy& study, int size) {
  FrontierRunOptions one_rank;
  one_rank.threads = 1;
  auto reference = run_frontier(study, ProcessGroup{}, one_rank);
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  ThreadGather gather(size);
  std::vector<Result<reports::FrontierTable>> tables(size, Status::internal("not run"));
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      FrontierRunOptions o;
      o.threads = 1;
      o.gather = [&gather, r](const std::string& blob) { return gather.gather(r, blob); };
      tables[r] = run_frontier(study, ProcessGroup{r, size, false}, o);
    });
  }
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < size; ++r) {
    ASSERT_TRUE(tables[r].ok()) << tables[r].status().message();
    const reports::FrontierTable& t = tables[r].value();
    ASSERT_EQ(t.cells.size(), reference.value().cells.size());
    for (size_t i = 0; i < t.cells.size(); ++i) {
      expect_same_cell(t.cells[i], reference.value().cells[i],
                       std::to_string(size) + " ranks, rank " + std::to_string(r));
    }
    EXPECT_EQ(t.simulations, reference.value().simulations);
    EXPECT_EQ(t.plan_lookups, reference.value().plan_lookups);
    EXPECT_EQ(reports::frontier_json(t), reports::frontier_json(reference.value()));
  }
}

TEST(Frontier, SameTableForTwoAndThreeRanks) {
  FrontierStudy study = small_study(Objective::kLargest);
  study.hardware.pop_back();
  check_ranks(study, 2);
  check_ranks(study, 3);
}

// More ranks than any round has simulations: the idle ranks send empty
// blobs and finish with the same table.
TEST(Frontier, MoreRanksThanSimulations) {
  FrontierStudy study = small_study(Objective::kLargest);
  study.hardware.pop_back();
  study.gpus = {8};
  study.days = {0.25};
  study.budgets_usd = {0};
  study.hardware[0].options.space.tp = {1};
  study.hardware[0].options.space.pp = {1};
  study.hardware[0].options.space.micro_batch = {1};
  FrontierRunOptions o;
  long most_jobs = 0;
  o.progress = [&most_jobs](const FrontierProgress& p) {
    most_jobs = std::max(most_jobs, p.round_jobs);
  };
  auto t = run_frontier(study, ProcessGroup{}, o);
  ASSERT_TRUE(t.ok());
  ASSERT_GT(t.value().simulations, 0);
  const int ranks = static_cast<int>(most_jobs) + 3;
  check_ranks(study, ranks);
}

TEST(Frontier, ProgressReportsRoundsAndCells) {
  FrontierStudy study = small_study(Objective::kLargest);
  study.budgets_usd = {0};
  FrontierRunOptions run;
  std::vector<FrontierProgress> seen;
  run.progress = [&seen](const FrontierProgress& p) { seen.push_back(p); };
  auto t = run_frontier(study, ProcessGroup{}, run);
  ASSERT_TRUE(t.ok());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().round, 1);
  EXPECT_EQ(seen.front().cells_done, 0);
  EXPECT_EQ(seen.back().cells_done, seen.back().cells);
  EXPECT_EQ(seen.back().cells, 8);
  EXPECT_EQ(seen.back().simulations, t.value().simulations);
  for (const FrontierProgress& p : seen) {
    EXPECT_LE(p.round_done, p.round_total);
    EXPECT_LE(p.round_total, p.round_jobs);
  }
}

TEST(Frontier, InvalidCellsNameTheCell) {
  FrontierStudy study = small_study(Objective::kLargest);
  study.gpus = {4};  // below one node of 8
  const Status s = validate_study(study);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dgx-a100-80gb, 4 GPUs, 0.25 days"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("fewer than one node"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
  study = small_study(Objective::kLargest);
  study.days = {};
  EXPECT_FALSE(validate_study(study).ok());
  EXPECT_FALSE(run_frontier(study, ProcessGroup{}, {}).ok());
}

// A cell without an answer says why: the furthest stage any model reached.
TEST(Frontier, CellWithoutAnswerSaysWhy) {
  const simulator::Cluster c = cluster("dgx-a100-80gb");
  SearchOptions o = small_options(Objective::kLargest);
  o.gpus = 8;
  o.days = 1e-6;  // nothing trains in a tenth of a second
  auto r = search(c, o);
  ASSERT_TRUE(r.ok());
  ASSERT_LT(r.value().best, 0);
  const reports::FrontierCell cell = frontier_cell(c, o, r.value());
  EXPECT_FALSE(cell.found);
  EXPECT_EQ(cell.why, "deadline");
  EXPECT_EQ(cell.gpus, 8);
}

}  // namespace
}  // namespace llmplan::planner

// The cluster scheduler (planner/study/schedule/): throughput-curve envelopes,
// hand-computed single-job schedules, EDF against FIFO, ElasticFlow's
// admission under the linear and the simulated throughput, conservation on
// random traces, and the `llmplan schedule` command end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "planner/cli/command.h"
#include "planner/search/search.h"
#include "planner/study/schedule/cluster_sim.h"
#include "planner/study/schedule/policy.h"
#include "planner/study/schedule/throughput.h"
#include "presets/catalog.h"
#include "base/strict_json.h"

namespace llmplan::planner::schedule {
namespace {

// A curve on nodes of `step` GPUs with tokens/s = f(g) at g = step..max.
template <typename F>
ThroughputCurve make_curve(int step, int max_gpus, F f) {
  std::vector<CurvePoint> pts;
  for (int g = step; g <= max_gpus; g += step) {
    CurvePoint p;
    p.gpus = g;
    p.tokens_per_s = f(g);
    p.gpus_used = g;
    pts.push_back(p);
  }
  simulator::Model m;
  m.name = "toy";
  return ThroughputCurve(m, step, std::move(pts));
}

Job make_job(std::string name, double tokens, double arrival_s, double deadline_s, int gpus = 0) {
  Job j;
  j.name = std::move(name);
  j.model_name = "toy";
  j.tokens = tokens;
  j.arrival_s = arrival_s;
  j.deadline_s = deadline_s;
  j.gpus = gpus;
  return j;
}

ScheduleResult run(const std::vector<Job>& jobs, const std::vector<const ThroughputCurve*>& curves,
                   const std::string& policy, int gpus, double rescale_s) {
  auto p = make_policy(policy);
  EXPECT_TRUE(p.ok());
  ClusterSimOptions o;
  o.total_gpus = gpus;
  o.rescale_cost_s = rescale_s;
  Result<ScheduleResult> r = simulate_cluster(jobs, curves, **p, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ScheduleResult{};
}

TEST(ThroughputCurve, EnvelopeUsefulCountAndFeasibility) {
  const double raw[] = {0, 100, 300, 250, 250, 400};  // g = 8..48
  const ThroughputCurve c = make_curve(8, 48, [&](int g) { return raw[g / 8 - 1]; });
  EXPECT_EQ(c.min_feasible_gpus(), 16);
  EXPECT_EQ(c.tokens_per_s(4), 0);
  EXPECT_EQ(c.tokens_per_s(8), 0);
  EXPECT_EQ(c.tokens_per_s(16), 100);
  EXPECT_EQ(c.tokens_per_s(23), 100);  // at most 23 GPUs: 16 of them
  EXPECT_EQ(c.tokens_per_s(31), 300);
  EXPECT_EQ(c.tokens_per_s(40), 300);  // 32 and 40 are slower than 24
  EXPECT_EQ(c.useful_gpus(40), 24);
  EXPECT_EQ(c.tokens_per_s(48), 400);
  EXPECT_EQ(c.tokens_per_s(4096), 400);  // beyond the curve: its last point
  EXPECT_EQ(c.useful_gpus(48), 48);
}

TEST(ThroughputCurve, SimulatedCurveIsDeterministicAcrossThreads) {
  Result<presets::Catalog> cat = presets::Catalog::builtin();
  ASSERT_TRUE(cat.ok());
  Result<simulator::Cluster> cluster = cat->cluster("dgx-a100-80gb");
  ASSERT_TRUE(cluster.ok());
  const std::vector<simulator::Model> models = {shape_for_params(1.3e9, 2048, 51200)};
  CurveOptions o;
  o.max_gpus = 32;
  o.threads = 1;
  long distinct = 0;
  const auto one = compute_curves(models, *cluster, o, &distinct);
  o.threads = 3;
  const auto three = compute_curves(models, *cluster, o);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_GT(distinct, 4);
  ASSERT_EQ(one[0].points().size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    const CurvePoint& a = one[0].points()[k];
    EXPECT_EQ(a.tokens_per_s, three[0].points()[k].tokens_per_s);
    EXPECT_TRUE(a.plan == three[0].points()[k].plan);
    EXPECT_GT(a.tokens_per_s, 0) << a.gpus;
    EXPECT_LE(a.gpus_used, a.gpus);
  }
  // More GPUs help a 1.3B model, but less than linearly at 32.
  EXPECT_GT(one[0].tokens_per_s(32), 2.0 * one[0].tokens_per_s(8));
  EXPECT_LT(one[0].tokens_per_s(32), 4.0 * one[0].tokens_per_s(8) * 1.001);
}

// 1,000 tokens/s per GPU, nodes of 8.
const ThroughputCurve& linear_curve() {
  static const ThroughputCurve c = make_curve(8, 64, [](int g) { return 1000.0 * g; });
  return c;
}

TEST(ClusterSim, SingleJobFixedSizeHandComputed) {
  // 16 GPUs requested: 16,000 tokens/s; 1.6e7 tokens take 1,000 s after a
  // 100 s start-up (the re-scale cost of the first allocation).
  const std::vector<Job> jobs = {make_job("a", 1.6e7, 10, 1110, 16)};
  for (const char* policy : {"fifo", "edf"}) {
    const ScheduleResult r = run(jobs, {&linear_curve()}, policy, 64, 100);
    ASSERT_EQ(r.jobs.size(), 1u);
    const JobOutcome& o = r.jobs[0];
    EXPECT_TRUE(o.finished);
    EXPECT_DOUBLE_EQ(o.start_s, 10);
    EXPECT_NEAR(o.finish_s, 1110, 1e-6);
    EXPECT_NEAR(o.jct_s, 1100, 1e-6);
    EXPECT_TRUE(o.met_deadline);
    EXPECT_EQ(o.max_gpus, 16);
    EXPECT_EQ(o.rescales, 1);
    EXPECT_NEAR(o.gpu_seconds, 16 * 1100.0, 1e-6);
    EXPECT_NEAR(r.metrics.makespan_s, 1100, 1e-6);
    EXPECT_NEAR(r.metrics.utilisation, 16.0 / 64.0, 1e-9);
    EXPECT_DOUBLE_EQ(r.metrics.deadline_ratio, 1.0);
  }
  // One second less and the deadline is missed.
  const std::vector<Job> tight = {make_job("a", 1.6e7, 10, 1109, 16)};
  EXPECT_FALSE(run(tight, {&linear_curve()}, "fifo", 64, 100).jobs[0].met_deadline);
}

TEST(ClusterSim, WorkBelowTheClocksResolutionStillFinishes) {
  // Issue 48, item 8: a job whose work is below the clock's resolution at
  // its start (1 token at 16,000 tokens/s at 3.6e9 s, 1e-3 at 7.2e9 s: under
  // half an ulp of the clock) stayed "running" at the same instant until the
  // event cap. Every policy finishes each job once its start-up has passed.
  const double late_s = 3.6e9;
  const std::vector<Job> jobs = {make_job("twelve", 12, 0, 1e11, 16),
                                 make_job("one", 1, late_s, 1e11, 16),
                                 make_job("milli", 1e-3, 2 * late_s, 1e11, 16)};
  const std::vector<const ThroughputCurve*> curves(3, &linear_curve());
  for (const char* policy : {"fifo", "edf", "elasticflow-linear", "elasticflow-simulated"}) {
    for (double rescale_s : {0.0, 120.0}) {
      const ScheduleResult r = run(jobs, curves, policy, 64, rescale_s);
      ASSERT_EQ(r.jobs.size(), 3u) << policy;
      for (size_t i = 0; i < 3; ++i) {
        const JobOutcome& o = r.jobs[i];
        EXPECT_TRUE(o.finished) << policy << " job " << jobs[i].name;
        // Finished within a millisecond (the work) of its start-up's end.
        EXPECT_NEAR(o.finish_s, jobs[i].arrival_s + rescale_s, 1e-3 + 1e-12 * jobs[i].arrival_s)
            << policy << " job " << jobs[i].name;
      }
      EXPECT_LE(r.events, 20) << policy;
    }
  }
}

TEST(ClusterSim, SingleJobElasticTakesTheWholeCluster) {
  // Alone, an elastic job gets every GPU that speeds it up: 64 GPUs,
  // 64,000 tokens/s: 6.4e7 tokens in 1,000 s after a 60 s start.
  const std::vector<Job> jobs = {make_job("a", 6.4e7, 0, 5000)};
  for (const char* policy : {"elasticflow-linear", "elasticflow-simulated"}) {
    const ScheduleResult r = run(jobs, {&linear_curve()}, policy, 64, 60);
    EXPECT_NEAR(r.jobs[0].finish_s, 1060, 1e-6) << policy;
    EXPECT_EQ(r.jobs[0].max_gpus, 64) << policy;
    EXPECT_EQ(r.jobs[0].rescales, 1) << policy;
  }
}

TEST(ClusterSim, DefaultRequestMeetsTheDeadlineAlone) {
  // No `gpus`: the smallest node multiple meeting the deadline from arrival.
  // 2.4e7 tokens by 1,600 s with a 100 s start: 16,000/s needed -> 16 GPUs.
  const Job j = make_job("a", 2.4e7, 0, 1600);
  EXPECT_EQ(requested_gpus(j, linear_curve(), 64, 100), 16);
  // Unreachable deadline: the fastest count.
  EXPECT_EQ(requested_gpus(make_job("a", 2.4e9, 0, 1600), linear_curve(), 64, 100), 64);
  // An explicit request is rounded up to a node and clamped to the cluster.
  EXPECT_EQ(requested_gpus(make_job("a", 1, 0, 10, 9), linear_curve(), 64, 0), 16);
  EXPECT_EQ(requested_gpus(make_job("a", 1, 0, 10, 512), linear_curve(), 64, 0), 64);
}

TEST(ClusterSim, EdfMeetsBothDeadlinesWhereFifoMissesOne) {
  // Two jobs arrive together, each asks for the whole 16-GPU cluster and
  // runs 1,000 s. FIFO runs the first-listed (lax) job first, so the urgent
  // one finishes at 2,000 s, past its 1,500 s deadline; EDF swaps them.
  const std::vector<Job> jobs = {make_job("lax", 1.6e7, 0, 3000, 16),
                                 make_job("urgent", 1.6e7, 0, 1500, 16)};
  const std::vector<const ThroughputCurve*> curves = {&linear_curve(), &linear_curve()};
  const ScheduleResult fifo = run(jobs, curves, "fifo", 16, 0);
  EXPECT_NEAR(fifo.jobs[0].finish_s, 1000, 1e-6);
  EXPECT_NEAR(fifo.jobs[1].finish_s, 2000, 1e-6);
  EXPECT_EQ(fifo.metrics.met, 1);
  EXPECT_DOUBLE_EQ(fifo.metrics.deadline_ratio, 0.5);
  const ScheduleResult edf = run(jobs, curves, "edf", 16, 0);
  EXPECT_NEAR(edf.jobs[1].finish_s, 1000, 1e-6);
  EXPECT_NEAR(edf.jobs[0].finish_s, 2000, 1e-6);
  EXPECT_EQ(edf.metrics.met, 2);
  EXPECT_DOUBLE_EQ(edf.metrics.deadline_ratio, 1.0);
  EXPECT_NEAR(edf.metrics.avg_jct_s, 1500, 1e-6);
  EXPECT_NEAR(edf.metrics.p95_jct_s, 2000, 1e-6);
  EXPECT_NEAR(edf.metrics.makespan_s, 2000, 1e-6);
  EXPECT_NEAR(edf.metrics.utilisation, 1.0, 1e-9);
}

TEST(ClusterSim, LinearAssumptionAdmitsAJobTheSimulatedCurveRefuses) {
  // Throughput saturates: 8,000 tokens/s on 8 GPUs but only 15,000 on 32.
  const double raw[] = {8000, 12000, 14000, 15000};
  const ThroughputCurve sat = make_curve(8, 32, [&](int g) { return raw[g / 8 - 1]; });
  // Needs 20,000 tokens/s for 1,000 s: linear scaling promises 32,000 on 32.
  const std::vector<Job> jobs = {make_job("a", 2e7, 0, 1000)};
  const ScheduleResult lin = run(jobs, {&sat}, "elasticflow-linear", 32, 0);
  EXPECT_TRUE(lin.jobs[0].refused.empty());
  EXPECT_TRUE(lin.jobs[0].finished);
  EXPECT_FALSE(lin.jobs[0].met_deadline);
  EXPECT_NEAR(lin.jobs[0].finish_s, 2e7 / 15000, 1e-6);
  const ScheduleResult sim = run(jobs, {&sat}, "elasticflow-simulated", 32, 0);
  EXPECT_FALSE(sim.jobs[0].finished);
  EXPECT_NE(sim.jobs[0].refused.find("cannot meet its deadline even on 32 GPUs"),
            std::string::npos)
      << sim.jobs[0].refused;
  EXPECT_EQ(sim.metrics.refused, 1);
}

TEST(ClusterSim, ElasticShrinksARunningJobForAnUrgentArrival) {
  // A lax job holds all 32 GPUs; an urgent one arrives and needs 16 of them.
  const std::vector<Job> jobs = {make_job("lax", 3.2e8, 0, 1e6),
                                 make_job("urgent", 1.6e7, 100, 1200)};
  const ScheduleResult r = run(jobs, {&linear_curve(), &linear_curve()},
                               "elasticflow-simulated", 32, 50);
  EXPECT_TRUE(r.jobs[1].met_deadline);
  EXPECT_GE(r.jobs[0].rescales, 2);  // shrunk, then grown back
  EXPECT_TRUE(r.jobs[0].met_deadline);
  // The lax job lost capacity while the urgent one ran: it ends later than
  // it would alone (50 + 3.2e8 / 32,000 = 10,050 s).
  EXPECT_GT(r.jobs[0].finish_s, 10050);
}

TEST(ClusterSim, JobThatFitsNowhereIsRefusedWithAReason) {
  const ThroughputCurve none = make_curve(8, 64, [](int) { return 0.0; });
  const std::vector<Job> jobs = {make_job("big", 1e9, 0, 100)};
  for (const std::string& p : policy_names()) {
    const ScheduleResult r = run(jobs, {&none}, p, 64, 0);
    EXPECT_FALSE(r.jobs[0].finished);
    EXPECT_NE(r.jobs[0].refused.find("no plan fits in memory on up to 64 GPUs"), std::string::npos);
  }
  Job bounded = make_job("b", 1e6, 0, 100);
  bounded.max_gpus = 8;
  const ThroughputCurve from16 = make_curve(8, 64, [](int g) { return g >= 16 ? 1000.0 * g : 0; });
  EXPECT_NE(run({bounded}, {&from16}, "fifo", 64, 0).jobs[0].refused.find("needs at least 16"),
            std::string::npos);
}

// A small deterministic generator for the conservation test.
struct Lcg {
  uint64_t s;
  double next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) * (1.0 / 9007199254740992.0);
  }
};

TEST(ClusterSim, ConservesGpusAndAccountsForEveryJob) {
  Lcg rng{42};
  std::vector<ThroughputCurve> curves;
  std::vector<Job> jobs;
  double t = 0;
  for (int i = 0; i < 60; ++i) {
    const double per_gpu = 500 + 2000 * rng.next();
    const double knee = 16 + 8 * std::floor(10 * rng.next());  // sublinear past the knee
    const int first = 8 * (1 + static_cast<int>(3 * rng.next()));
    curves.push_back(make_curve(8, 128, [=](int g) {
      if (g < first) return 0.0;
      return per_gpu * (g <= knee ? g : knee + std::sqrt(g - knee));
    }));
    t += 3600 * rng.next();
    const double tokens = per_gpu * 32 * 3600 * (0.2 + 4 * rng.next());
    Job j = make_job("j" + std::to_string(i), tokens, t, t + tokens / (per_gpu * 32) * (0.5 + 3 * rng.next()));
    if (i % 5 == 0) j.gpus = 8 * (1 + static_cast<int>(8 * rng.next()));
    if (i % 7 == 0) j.max_gpus = 64;
    if (i % 11 == 0) j.min_gpus = 24;
    jobs.push_back(j);
  }
  std::vector<const ThroughputCurve*> ptr;
  for (const ThroughputCurve& c : curves) ptr.push_back(&c);
  for (const std::string& policy : policy_names()) {
    SCOPED_TRACE(policy);
    const ScheduleResult r = run(jobs, ptr, policy, 128, 90);
    ASSERT_EQ(r.jobs.size(), jobs.size());
    for (const AllocationSample& a : r.timeline) {
      EXPECT_GE(a.gpus, 0);
      EXPECT_LE(a.gpus, 128);
    }
    double gpu_seconds = 0;
    int finished = 0, refused = 0, met = 0;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const JobOutcome& o = r.jobs[i];
      EXPECT_NE(o.finished, !o.refused.empty()) << jobs[i].name;  // exactly one
      if (o.finished) {
        ++finished;
        EXPECT_GE(o.start_s, jobs[i].arrival_s);
        EXPECT_GT(o.finish_s, o.start_s);
        EXPECT_NEAR(o.jct_s, o.finish_s - jobs[i].arrival_s, 1e-6);
        if (o.met_deadline) ++met;
        EXPECT_EQ(o.met_deadline, o.finish_s <= jobs[i].deadline_s * (1 + 1e-12));
        if (jobs[i].max_gpus > 0) {
          EXPECT_LE(o.max_gpus, jobs[i].max_gpus);
        }
        if (jobs[i].min_gpus > 0) {
          EXPECT_GE(o.max_gpus, jobs[i].min_gpus);
        }
        EXPECT_GE(o.rescales, 1);
      } else {
        ++refused;
        EXPECT_EQ(o.gpu_seconds, 0);
      }
      gpu_seconds += o.gpu_seconds;
    }
    EXPECT_EQ(r.metrics.finished, finished);
    EXPECT_EQ(r.metrics.refused, refused);
    EXPECT_EQ(r.metrics.met, met);
    EXPECT_LE(gpu_seconds, 128 * r.metrics.makespan_s * (1 + 1e-9));
    if (policy == "fifo" || policy == "edf") {
      EXPECT_EQ(refused, 0);
    }
    // Deterministic: a second run is identical.
    const ScheduleResult again = run(jobs, ptr, policy, 128, 90);
    for (size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(again.jobs[i].finish_s, r.jobs[i].finish_s);
  }
}

// A policy that breaks its contract.
class GreedyLiar : public Policy {
 public:
  std::string name() const override { return "liar"; }
  Decision decide(const PolicyContext& ctx, const std::vector<JobView>& jobs) const override {
    Decision d;
    d.gpus.assign(jobs.size(), ctx.total_gpus);
    d.refused.assign(jobs.size(), "");
    return d;
  }
};

TEST(ClusterSim, PolicyContractViolationsAreErrors) {
  const std::vector<Job> jobs = {make_job("a", 1e6, 0, 100), make_job("b", 1e6, 0, 100)};
  ClusterSimOptions o;
  o.total_gpus = 64;
  Result<ScheduleResult> r = simulate_cluster(jobs, {&linear_curve(), &linear_curve()}, GreedyLiar(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("allocated 128 of 64 GPUs"), std::string::npos);
  EXPECT_FALSE(simulate_cluster(jobs, {&linear_curve()}, GreedyLiar(), o).ok());
  o.total_gpus = 4;
  EXPECT_NE(simulate_cluster(jobs, {&linear_curve(), &linear_curve()}, GreedyLiar(), o)
                .status().message().find("--gpus"),
            std::string::npos);
}

TEST(Policy, UnknownNameListsTheKnownOnes) {
  Result<std::unique_ptr<Policy>> p = make_policy("round-robin");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("fifo, edf, elasticflow-linear, elasticflow-simulated"),
            std::string::npos);
}

// `llmplan schedule` end to end.
Status run_cli(std::vector<std::string> args) {
  CLI::App app{"test"};
  app.require_subcommand(0, 1);
  GlobalOptions global;
  Action action;
  add_schedule_command(app, global, &action);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return Status::invalid_argument(e.what());
  }
  if (!action) return Status::invalid_argument("no action");
  std::FILE* saved = stdout;
  stdout = std::fopen("/dev/null", "w");
  const Status s = action();
  std::fclose(stdout);
  stdout = saved;
  return s;
}

std::string temp_dir(const std::string& name) {
  const std::string d = std::string(LLMPLAN_BINARY_DIR) + "/test_tmp/" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

TEST(ScheduleCli, GeneratedTraceRunsEveryPolicy) {
  const std::string dir = temp_dir("schedule_cli");
  const Status s = run_cli({"schedule", "--generate", "12", "--seed", "7", "--gpus", "64",
                            "--max-duration-h", "6", "--threads", "2", "--out", dir});
  ASSERT_TRUE(s.ok()) << s.message();
  Result<boost::json::value> v = json::parse_file(dir + "/schedule.json");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const boost::json::array& policies = v->at("policies").as_array();
  ASSERT_EQ(policies.size(), 4u);
  for (const auto& p : policies) {
    const auto& m = p.at("metrics").as_object();
    EXPECT_EQ(m.at("jobs").as_int64(), 12);
    EXPECT_EQ(m.at("finished").as_int64() + m.at("refused").as_int64(), 12);
    EXPECT_EQ(p.at("jobs").as_array().size(), 12u);
  }
  for (const char* f : {"report.md", "summary.csv", "jobs.csv", "curves.csv", "trace.csv",
                        "allocation.svg"}) {
    EXPECT_TRUE(std::filesystem::file_size(dir + "/" + f) > 0) << f;
  }
  // report.md links the plot written beside it; it never inlines SVG.
  std::ifstream report_in(dir + "/report.md");
  const std::string report((std::istreambuf_iterator<char>(report_in)),
                           std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("](allocation.svg)"), std::string::npos) << report;
  EXPECT_EQ(report.find("<svg"), std::string::npos);
  // The written trace reads back and schedules the same way.
  const std::string dir2 = temp_dir("schedule_cli_trace");
  ASSERT_TRUE(run_cli({"schedule", "--jobs", dir + "/trace.csv", "--gpus", "64", "--threads", "2",
                       "--policy", "edf", "--out", dir2})
                  .ok());
  Result<boost::json::value> v2 = json::parse_file(dir2 + "/schedule.json");
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->at("policies").as_array()[0].at("metrics"), policies[1].at("metrics"));
}

TEST(ScheduleCli, BadInputsAreOneLineErrors) {
  const std::string dir = temp_dir("schedule_bad");
  const std::string bad = dir + "/bad.csv";
  std::ofstream(bad) << "name,model,tokens,arrival_h,deadline_h\na,gpt3-175b,-5,0,10\n";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"schedule", "--jobs", bad, "--gpus", "64"},
           {"schedule", "--jobs", dir + "/missing.csv", "--gpus", "64"},
           {"schedule", "--generate", "4", "--gpus", "-8"},
           {"schedule", "--generate", "4", "--gpus", "12"},
           {"schedule", "--generate", "4", "--gpus", "64", "--policy", "lottery"},
           {"schedule", "--generate", "4", "--gpus", "64", "--min-slack", "0.5"},
           {"schedule", "--generate", "-3", "--gpus", "64"},
           {"schedule", "--gpus", "64"}}) {
    const Status s = run_cli(args);
    EXPECT_FALSE(s.ok()) << args[1] << " " << args[2];
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  }
  EXPECT_NE(run_cli({"schedule", "--jobs", bad, "--gpus", "64"}).message().find("bad.csv:2"),
            std::string::npos);
}

}  // namespace
}  // namespace llmplan::planner::schedule

// Issue 15: MoE models in the planner: the ep plan-space axis, the moe
// family's shapes, the MoE law in the search, the dense comparison, and the
// one-line errors of bad MoE input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "planner/cli/command.h"
#include "planner/cli/plan_space_flags.h"
#include "planner/search/plan_space.h"
#include "planner/search/search.h"
#include "presets/catalog.h"
#include "simulator/lowering.h"
#include "base/strict_json.h"
#include "tests/planner/search_fixtures.h"
#include "tests/planner/simulate_cli.h"

namespace llmplan::planner {
namespace {

presets::Catalog catalog() { return fixtures::builtin_catalog(); }
simulator::Cluster h100() { return fixtures::builtin_cluster("dgx-h100"); }
simulator::Model preset(const std::string& name) { return fixtures::builtin_model(name); }
scaling::LossLaw law(const std::string& name) { return fixtures::builtin_law(name); }

std::string error_of(const Status& s) { return s.ok() ? "" : s.message(); }

TEST(MoePlanSpace, AutoExpertParallelIsInNodeAndAcrossNodes) {
  // HGX/DGX: the domain is the node of 8.
  EXPECT_EQ(auto_expert_parallel(128, 64, 8, 8), (std::vector<int>{8, 64}));
  EXPECT_EQ(auto_expert_parallel(128, 256, 8, 8), (std::vector<int>{8, 64}));
  EXPECT_EQ(auto_expert_parallel(8, 64, 8, 8), (std::vector<int>{8}));
  EXPECT_EQ(auto_expert_parallel(128, 12, 8, 8), (std::vector<int>{4}));
  EXPECT_EQ(auto_expert_parallel(128, 1, 8, 8), (std::vector<int>{1}));
  EXPECT_EQ(auto_expert_parallel(6, 64, 8, 8), (std::vector<int>{2}));
}

// GB200 NVL72: 4-GPU trays in a 72-GPU NVLink domain. The whole automatic
// range (up to 64) fits inside the domain, so the search tries the largest
// and half of it, both over NVLink; a stage too small for 64 keeps what
// divides it.
TEST(MoePlanSpace, AutoExpertParallelExtendsToTheNvl72Domain) {
  EXPECT_EQ(auto_expert_parallel(128, 256, 72, 4), (std::vector<int>{32, 64}));
  EXPECT_EQ(auto_expert_parallel(128, 32, 72, 4), (std::vector<int>{16, 32}));
  EXPECT_EQ(auto_expert_parallel(8, 64, 72, 4), (std::vector<int>{4, 8}));
  EXPECT_EQ(auto_expert_parallel(128, 2, 72, 4), (std::vector<int>{2}));
  EXPECT_EQ(auto_expert_parallel(128, 1, 72, 4), (std::vector<int>{1}));
}

// On NVL72 the automatic TP list reaches 8 (two trays, still NVLink), and
// every automatic EP size of an MoE model stays inside the domain.
TEST(MoePlanSpace, Nvl72PlansUseTheDomainForTpAndEp) {
  const simulator::Model m = preset("qwen3-235b-a22b");
  Result<simulator::Cluster> nvl72 = catalog().cluster("gb200-nvl72");
  ASSERT_TRUE(nvl72.ok()) << nvl72.status().message();
  ASSERT_EQ(nvl72->gpus_per_node, 4);
  ASSERT_EQ(nvl72->nvlink_domain(), 72);
  PlanSpace space;
  space.pp = {8};
  space.micro_batch = {1};
  space.virtual_stages = {1};
  space.global_batch = {2048};
  const std::vector<simulator::Plan> plans = enumerate_plans(m, *nvl72, 256, space, nullptr);
  ASSERT_FALSE(plans.empty());
  std::set<int> tps, eps;
  for (const simulator::Plan& p : plans) {
    tps.insert(p.tensor_parallel);
    eps.insert(p.expert_parallel);
    const simulator::Placement pl = simulator::place(p, *nvl72);
    if (p.expert_parallel <= 64) {
      EXPECT_EQ(pl.expert.nodes(), 1) << "ep " << p.expert_parallel << " fits the domain";
    }
  }
  // Qwen3-235B's 4 KV heads cap TP at 4; the published EP 32 is searched.
  EXPECT_EQ(*tps.rbegin(), 4);
  EXPECT_TRUE(eps.count(32));
  // A model with 8 KV heads gets TP 8: two 4-GPU trays, inside the domain.
  std::set<int> dense_tps;
  for (const simulator::Plan& p :
       enumerate_plans(preset("llama3-70b"), *nvl72, 256, space, nullptr)) {
    dense_tps.insert(p.tensor_parallel);
  }
  EXPECT_EQ(dense_tps, (std::set<int>{1, 2, 4, 8}));
  // A --tp 8 space is accepted on NVL72 (it divides the domain, not the tray).
  PlanSpace tp8;
  tp8.tp = {8};
  EXPECT_TRUE(check_against_cluster(tp8, *nvl72, 256).ok());
  tp8.tp = {16};
  Status s = check_against_cluster(tp8, *nvl72, 256);
  EXPECT_NE(error_of(s).find("divide the 72 GPUs per NVLink domain of gb200-nvl72"),
            std::string::npos)
      << error_of(s);
}

TEST(MoePlanSpace, EveryPlanDividesExpertsAndTheStage) {
  const simulator::Model m = preset("qwen3-30b-a3b");
  ASSERT_TRUE(m.is_moe());
  PlanSpace space;
  space.global_batch_tokens = {4194304};
  space.micro_batch = {1};
  const std::vector<simulator::Plan> plans = enumerate_plans(m, h100(), 64, space);
  ASSERT_FALSE(plans.empty());
  std::set<int> eps;
  std::set<bool> overlaps;
  for (const simulator::Plan& p : plans) {
    const int stage = p.tensor_parallel * p.context_parallel * p.data_parallel;
    EXPECT_EQ(m.num_experts % p.expert_parallel, 0) << p.expert_parallel;
    EXPECT_EQ(stage % p.expert_parallel, 0) << p.expert_parallel;
    EXPECT_EQ(p.expert_tensor_parallel, 1);
    EXPECT_TRUE(simulator::validate(m, p).ok()) << simulator::validate(m, p).message();
    if (p.expert_parallel == 1) {
      EXPECT_FALSE(p.moe_a2a_overlap);
    }
    eps.insert(p.expert_parallel);
    overlaps.insert(p.moe_a2a_overlap);
  }
  EXPECT_GT(*eps.rbegin(), 8);   // an across-node EP
  EXPECT_TRUE(eps.count(8));     // and the in-node one
  EXPECT_EQ(overlaps.size(), 2u);
  // A listed ep: only it (where it divides).
  space.expert_parallel = {16};
  space.moe_a2a_overlap = Choice::kOff;
  for (const simulator::Plan& p : enumerate_plans(m, h100(), 64, space)) {
    EXPECT_EQ(p.expert_parallel, 16);
    EXPECT_FALSE(p.moe_a2a_overlap);
  }
  // Dense models keep ep = 1.
  space.expert_parallel.clear();
  space.moe_a2a_overlap = Choice::kAuto;
  for (const simulator::Plan& p : enumerate_plans(preset("llama3-8b"), h100(), 64, space)) {
    EXPECT_EQ(p.expert_parallel, 1);
    EXPECT_FALSE(p.moe_a2a_overlap);
  }
}

TEST(MoePlanSpace, BadEpListsAreOneLineErrors) {
  PlanSpaceFlags f;
  f.ep = "0";
  EXPECT_EQ(error_of(to_plan_space(f).status()), "--ep: must be an integer from 1 to 1048576, got 0");
  f.ep = "";
  f.given.insert("--ep");
  EXPECT_EQ(error_of(to_plan_space(f).status()), "--ep: empty list (give comma-separated values)");
  PlanSpace s;
  s.expert_parallel = {3};
  EXPECT_EQ(error_of(check_against_model(s, preset("qwen3-30b-a3b"))),
            "--ep 3: no value divides the 128 experts of qwen3-30b-a3b");
  s.expert_parallel = {8};
  EXPECT_EQ(error_of(check_against_model(s, preset("llama3-8b"))),
            "--ep 8: llama3-8b is a dense model (no experts); expert parallelism needs an MoE model");
}

TEST(MoeShapes, GridShapesAreValidMoeModelsNearTheirActiveSize) {
  const simulator::Model base = family_template(Family::kMoe);
  for (const MoeShapeConfig& c : moe_shape_configs()) {
    for (double active : {3e9, 3e10}) {
      const simulator::Model m = moe_shape_for_active(active, base, c);
      ASSERT_TRUE(simulator::validate(m).ok()) << m.name << ": " << simulator::validate(m).message();
      EXPECT_EQ(m.num_experts, c.experts);
      EXPECT_EQ(m.moe_top_k, c.top_k);
      EXPECT_EQ(m.moe_shared_experts, c.shared_experts);
      EXPECT_EQ(m.num_moe_layers(), m.num_layers);
      EXPECT_NEAR(std::log(active_params(m) / active), 0, 0.35) << m.name;
      EXPECT_LT(active_params(m), static_cast<double>(m.parameter_count()));
      EXPECT_EQ(m.moe_ffn_hidden() % 128, 0);
      EXPECT_EQ(m.name.rfind("moe-e" + std::to_string(c.experts) + "k", 0), 0u) << m.name;
    }
  }
  const std::vector<simulator::Model> grid = moe_shape_grid(1e9, 8e9, 2.0, base);
  EXPECT_EQ(grid.size(), 4 * moe_shape_configs().size());
  for (size_t i = 1; i < grid.size(); ++i) {
    EXPECT_LE(grid[i - 1].active_parameter_count(), grid[i].active_parameter_count());
  }
  EXPECT_DOUBLE_EQ(moe_expansion(preset("qwen3-30b-a3b")), 16.0);
  EXPECT_DOUBLE_EQ(moe_expansion(preset("llama3-8b")), 1.0);
}

SearchOptions moe_options(int gpus, double days) {
  SearchOptions o;
  o.gpus = gpus;
  o.days = days;
  o.law = law("clark-moe");
  o.threads = 2;
  o.family = Family::kMoe;
  o.shape_template = family_template(Family::kMoe, 2048, 32000);
  // A small space, so the test stays fast under sanitizers.
  o.space.tp = {1, 2};
  o.space.pp = {1, 2};
  o.space.micro_batch = {1};
  o.space.virtual_stages = {1};
  o.space.precision = {simulator::Precision::kBf16};
  o.moe_grid_step = 4.0;
  return o;
}

TEST(MoeSearch, FamilyMoeAnswersWithAnMoeModelWhosePlanDividesItsExperts) {
  const simulator::Cluster c = h100();
  auto r = search(c, moe_options(32, 2));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GE(r->best, 0);
  const Candidate& best = r->candidates[r->best];
  EXPECT_TRUE(best.model.is_moe());
  EXPECT_GT(best.model.num_experts, 0);
  EXPECT_LT(best.active_params, best.params);
  EXPECT_DOUBLE_EQ(best.active_params, active_params(best.model));
  const simulator::Plan& p = r->plans[best.best_plan].plan;
  EXPECT_EQ(best.model.num_experts % p.expert_parallel, 0);
  // Tokens per active parameter, and the MoE law's loss.
  EXPECT_NEAR(best.tokens, 20.0 * best.active_params, 1e-6 * best.tokens);
  EXPECT_NEAR(best.loss, predicted_loss(law("clark-moe"), best.model, best.tokens), 1e-12);
  EXPECT_LT(best.loss, law("clark-moe").loss(best.active_params, best.tokens));
  // Every feasible candidate predicts a loss no lower than the answer's.
  for (const Candidate& x : r->candidates) {
    if (x.feasible) {
      EXPECT_GE(x.loss, best.loss) << x.model.name;
    }
  }
}

TEST(MoeSearch, DenseLawWithMoeModelsIsAUsageError) {
  SearchOptions o = moe_options(32, 2);
  o.law = law("chinchilla");
  EXPECT_EQ(error_of(search(h100(), o).status()),
            "--law chinchilla: a dense law (loss in N and D) cannot rank MoE models; use --law "
            "joint-moe or a law file with a \"joint_moe\" or \"moe\" term");
}

using testing_cli::CliRun;

CliRun run_cli(std::vector<std::string> args) {
  CLI::App app{"test"};
  app.require_subcommand(0, 1);
  GlobalOptions global;
  Action action;
  add_plan_options(app, global, &action);
  add_sweep_command(app, global, &action);
  add_schedule_command(app, global, &action);
  add_preset_file_option(app, &global);
  return testing_cli::parse_and_run(app, action, std::move(args), Status::usage);
}

const std::vector<std::string> kSmallSpace = {"--tp", "1,2", "--pp", "1,2", "--micro-batch", "1",
                                              "--virtual-stages", "1", "--precision", "bf16",
                                              "--threads", "2"};

std::vector<std::string> with_small_space(std::vector<std::string> args) {
  args.insert(args.end(), kSmallSpace.begin(), kSmallSpace.end());
  return args;
}

TEST(MoeCli, FamilyMoeReportComparesWithTheDenseAnswer) {
  const CliRun r = run_cli(with_small_space({"--family", "moe", "--gpus", "32", "--days", "2",
                                             "--gpu", "h100-sxm", "--seq", "2048", "--vocab",
                                             "32000", "--format", "json"}));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  Result<boost::json::value> doc = json::parse(r.out, "stdout");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const boost::json::object& o = doc->as_object();
  EXPECT_EQ(o.at("assumptions").at("family").as_string(), "moe");
  EXPECT_EQ(o.at("assumptions").at("law").at("name").as_string(), "joint-moe");
  const boost::json::object& best = o.at("best").as_object();
  EXPECT_GT(best.at("architecture").at("experts").to_number<double>(), 0);
  EXPECT_LT(best.at("active_params").to_number<double>(), best.at("params").to_number<double>());
  const int64_t experts = best.at("architecture").at("experts").to_number<int64_t>();
  EXPECT_EQ(experts % best.at("plan").at("ep").to_number<int64_t>(), 0);
  const boost::json::object& dense = o.at("dense_comparison").as_object();
  EXPECT_EQ(dense.at("family").as_string(), "llama");
  ASSERT_TRUE(dense.at("best").is_object());
  const boost::json::object& db = dense.at("best").as_object();
  EXPECT_EQ(db.at("active_params").to_number<double>(), db.at("params").to_number<double>());
  EXPECT_FALSE(db.at("architecture").as_object().contains("experts") &&
               db.at("architecture").at("experts").to_number<int64_t>() > 0);
  EXPECT_NEAR(dense.at("loss_difference").to_number<double>(),
              best.at("loss").to_number<double>() - db.at("loss").to_number<double>(), 1e-9);

  const CliRun md = run_cli(with_small_space({"--family", "moe", "--gpus", "32", "--days", "2",
                                              "--gpu", "h100-sxm", "--seq", "2048", "--vocab",
                                              "32000"}));
  ASSERT_TRUE(md.status.ok()) << md.status.message();
  EXPECT_NE(md.out.find("## MoE vs dense for the same budget"), std::string::npos);
  EXPECT_NE(md.out.find("MoE law (joint-moe)"), std::string::npos);

  // The verdict (issue 29): objective, law, both losses, whether the
  // difference exceeds the law's uncertainty; the headline is the answer
  // with the lower predicted loss.
  ASSERT_TRUE(dense.at("verdict").is_object());
  const boost::json::object& v = dense.at("verdict").as_object();
  const double moe_loss = best.at("loss").to_number<double>();
  const double dense_loss = db.at("loss").to_number<double>();
  EXPECT_EQ(v.at("headline").as_string(), dense_loss < moe_loss ? "dense" : "moe");
  EXPECT_EQ(dense.at("objective").as_string(), "largest");
  EXPECT_DOUBLE_EQ(v.at("moe_loss").to_number<double>(), moe_loss);
  EXPECT_DOUBLE_EQ(v.at("dense_loss").to_number<double>(), dense_loss);
  // joint-moe publishes a held-out RMSE of 0.0039: the paired difference's
  // 90 % half-width is 1.645 x sqrt(2) x 0.0039 = 0.0091.
  const double half = (v.at("difference_high").to_number<double>() -
                       v.at("difference_low").to_number<double>()) / 2;
  EXPECT_NEAR(half, 1.6448536 * std::sqrt(2.0) * 0.0039, 1e-6);
  EXPECT_EQ(v.at("exceeds_uncertainty").as_bool(), std::abs(moe_loss - dense_loss) > half);
  const std::string sentence(v.at("sentence").as_string());
  EXPECT_NE(sentence.find("objective: largest model"), std::string::npos) << sentence;
  EXPECT_NE(sentence.find("law: joint-moe"), std::string::npos) << sentence;
  EXPECT_NE(sentence.find(fmt::format("{:.3f}", moe_loss)), std::string::npos) << sentence;
  EXPECT_NE(sentence.find(fmt::format("{:.3f}", dense_loss)), std::string::npos) << sentence;
  EXPECT_NE(md.out.find(sentence), std::string::npos);
  // The answer's loss interval: the RMSE's 90 % band around the loss.
  const boost::json::object& li = o.at("loss_interval").as_object();
  EXPECT_NEAR(li.at("high").to_number<double>() - moe_loss, 1.6448536 * 0.0039, 1e-6);
  EXPECT_NEAR(moe_loss - li.at("low").to_number<double>(), 1.6448536 * 0.0039, 1e-6);
  EXPECT_EQ(li.at("level").to_number<double>(), 0.9);
  EXPECT_EQ(best.at("loss_vs_answer").as_string(), "answer");
}

// Under clark-moe (unverified constants) the report says so, and the same
// verdict logic picks the headline.
TEST(MoeCli, ClarkMoeIsFlaggedUnverified) {
  const CliRun md = run_cli(with_small_space({"--family", "moe", "--gpus", "32", "--days", "2",
                                              "--gpu", "h100-sxm", "--seq", "2048", "--vocab",
                                              "32000", "--law", "clark-moe"}));
  ASSERT_TRUE(md.status.ok()) << md.status.message();
  EXPECT_NE(md.out.find("moe-law-unverified"), std::string::npos);
  EXPECT_NE(md.out.find("law clark-moe publishes no uncertainty, so whether this difference is "
                        "real cannot be judged"),
            std::string::npos);
}

TEST(MoeCli, BadMoeInputIsAOneLineError) {
  const CliRun law = run_cli(with_small_space({"--family", "moe", "--law", "chinchilla", "--gpus",
                                               "32", "--days", "2", "--gpu", "h100-sxm"}));
  EXPECT_EQ(error_of(law.status),
            "--law chinchilla: a dense law (loss in N and D) cannot rank MoE models; use --law "
            "joint-moe or a law file with a \"joint_moe\" or \"moe\" term");
  const CliRun ep = run_cli({"--family", "moe", "--ep", "0", "--gpus", "32", "--days", "2"});
  EXPECT_EQ(error_of(ep.status), "--ep: must be an integer from 1 to 1048576, got 0");
  const CliRun family = run_cli({"--family", "mixture", "--gpus", "32", "--days", "2"});
  EXPECT_EQ(error_of(family.status), "--family: expected gpt, llama or moe, got 'mixture'");
  const CliRun dense_ep =
      run_cli({"--model", "llama3-8b", "--ep", "8", "--gpus", "32", "--days", "2", "--gpu", "h100-sxm"});
  EXPECT_EQ(error_of(dense_ep.status),
            "--ep 8: llama3-8b is a dense model (no experts); expert parallelism needs an MoE model");
  for (const CliRun& r : {law, ep, family, dense_ep}) {
    EXPECT_EQ(error_of(r.status).find('\n'), std::string::npos);
  }
}

TEST(MoeCli, PinnedMoePresetGetsTheMoeLawAndAnExpertParallelPlan) {
  const CliRun r = run_cli({"--model", "qwen3-30b-a3b", "--gpus", "64", "--days", "30", "--gpu",
                            "h100-sxm", "--pp", "1,2", "--micro-batch", "1", "--virtual-stages", "1",
                            "--precision", "bf16", "--threads", "2", "--format", "json"});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  Result<boost::json::value> doc = json::parse(r.out, "stdout");
  ASSERT_TRUE(doc.ok());
  const boost::json::object& o = doc->as_object();
  EXPECT_EQ(o.at("assumptions").at("law").at("name").as_string(), "joint-moe");
  ASSERT_TRUE(o.at("best").is_object());
  EXPECT_EQ(128 % o.at("best").at("plan").at("ep").to_number<int64_t>(), 0);
  EXPECT_FALSE(o.contains("dense_comparison"));
}

TEST(MoeCli, SweepTakesAnMoePresetAndTheEpAxis) {
  const std::string path = testing::TempDir() + "/llmplan_moe_sweep.json";
  {
    std::ofstream out(path);
    out << R"({"model": {"preset": "qwen3-30b-a3b"}, "cluster": {"preset": "dgx-h100"},
              "plan": {"tp": 1, "pp": 2, "dp": 32, "micro_batch": 1, "global_batch": 512}})";
  }
  const CliRun r = run_cli({"sweep", "--config", path, "--ep", "8,16", "--moe-a2a-overlap", "both",
                            "--threads", "2", "--format", "json"});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  Result<boost::json::value> doc = json::parse(r.out, "stdout");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const boost::json::object& o = doc->as_object();
  EXPECT_LT(o.at("active_params").to_number<double>(), o.at("params").to_number<double>());
  EXPECT_NEAR(o.at("tokens").to_number<double>(), 20 * o.at("active_params").to_number<double>(), 1);
  std::set<std::pair<int64_t, bool>> seen;
  for (const boost::json::value& row : o.at("plans").as_array()) {
    seen.insert({row.at("ep").to_number<int64_t>(), row.at("moe_a2a_overlap").as_bool()});
  }
  EXPECT_EQ(seen, (std::set<std::pair<int64_t, bool>>{{8, false}, {8, true}, {16, false}, {16, true}}));
  std::remove(path.c_str());
}

TEST(MoeCli, ScheduleTakesAnMoePresetJob) {
  const std::string path = testing::TempDir() + "/llmplan_moe_jobs.json";
  {
    std::ofstream out(path);
    out << R"({"jobs": [{"name": "moe", "model": "qwen3-30b-a3b", "tokens": 1e10, "arrival_h": 0,
                          "deadline_h": 200, "min_gpus": 8, "max_gpus": 32}]})";
  }
  const CliRun r = run_cli({"schedule", "--jobs", path, "--gpus", "32", "--cluster", "dgx-h100",
                            "--policy", "fifo", "--threads", "2", "--format", "json"});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_NE(r.out.find("\"moe\""), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace llmplan::planner

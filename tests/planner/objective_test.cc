// The planner's training objectives (issue 29): --tokens, --unique-tokens,
// --inference-tokens (planner/search/objective.h), on hand-set throughputs
// (select) and on a small simulated search.
#include "planner/search/objective.h"

#include <gtest/gtest.h>

#include <cmath>

#include "planner/cli/objective_flags.h"
#include "planner/search/search.h"
#include "presets/catalog.h"
#include "tests/planner/search_fixtures.h"
#include "scaling/objectives.h"

namespace llmplan::planner {
namespace {

simulator::Cluster a100() { return fixtures::builtin_cluster("dgx-a100-80gb"); }

scaling::LossLaw law() { return fixtures::chinchilla_test_law(); }

// Five dense candidates, 1B to 16B, each with one plan whose throughput
// falls as the model grows (tokens/s = 4e17 / (6 N), i.e. 4e17 FLOP/s).
SearchResult ladder() {
  SearchResult r;
  int shape = 0;
  for (double n : {1e9, 2e9, 4e9, 8e9, 16e9}) {
    Candidate c;
    c.params = c.active_params = n;
    r.candidates.push_back(c);
    PlanResult p;
    p.shape = shape++;
    p.tokens_per_s = 4e17 / (6 * n);
    p.gpus_used = 64;
    p.fits = true;
    r.plans.push_back(p);
  }
  return r;
}

SearchOptions base(double days) {
  SearchOptions o;
  o.days = days;
  o.law = law();
  return o;
}

TEST(FixedTokens, EveryCandidateTrainsThemAndMoreTokensNeverGiveALargerModel) {
  const simulator::Cluster c = a100();
  double last_params = 1e30;
  for (double tokens : {1e11, 3e11, 1e12, 3e12, 1e13}) {
    SearchOptions o = base(30);
    o.training.tokens = tokens;
    SearchResult r = ladder();
    select(c, o, &r);
    for (const Candidate& cand : r.candidates) {
      EXPECT_EQ(cand.tokens, tokens);
      // days = 6 N D / 4e17 / 86400
      EXPECT_NEAR(cand.days, 6 * cand.params * tokens / 4e17 / 86400, 1e-9 * cand.days);
    }
    const double params = r.best >= 0 ? r.candidates[r.best].params : 0;
    EXPECT_LE(params, last_params) << tokens;
    last_params = params;
  }
  // 30 days x 4e17 FLOP/s = 1.04e24 FLOPs: 1e12 tokens train at most 173B
  // (all 5 fit), 1e13 tokens at most 17.3B (16B fits), 3e13 at most 5.8B.
  SearchOptions o = base(30);
  o.training.tokens = 3e13;
  SearchResult r = ladder();
  select(c, o, &r);
  ASSERT_GE(r.best, 0);
  EXPECT_EQ(r.candidates[r.best].params, 4e9);
  EXPECT_EQ(r.candidates[3].why, "deadline");
}

TEST(UniqueTokens, LossNeverRisesWithMoreUniqueDataAndReportsEpochs) {
  const simulator::Cluster c = a100();
  SearchOptions plain = base(30);
  plain.objective = Objective::kLoss;
  SearchResult unlimited = ladder();
  select(c, plain, &unlimited);
  ASSERT_GE(unlimited.best, 0);
  double last_loss = 1e9;
  for (double u : {1e9, 1e10, 1e11, 1e12, 1e13, 1e15}) {
    SearchOptions o = base(30);
    o.training.unique_tokens = u;  // ranked by the data-constrained loss whatever --objective says
    SearchResult r = ladder();
    select(c, o, &r);
    ASSERT_GE(r.best, 0);
    const Candidate& b = r.candidates[r.best];
    EXPECT_LE(b.loss, last_loss + 1e-12) << u;
    last_loss = b.loss;
    EXPECT_NEAR(b.epochs, b.tokens / u, 1e-9 * b.epochs);
    EXPECT_GE(b.repeat_penalty, 0);
    // The deadline sets the tokens, as under --objective loss.
    EXPECT_NEAR(b.tokens, 30 * 86400 * 4e17 / (6 * b.params), 1e-6 * b.tokens);
    // Never below the unlimited loss.
    EXPECT_GE(b.loss, unlimited.candidates[unlimited.best].loss - 1e-12);
  }
  // Plenty of unique data: the unlimited answer and loss.
  SearchOptions o = base(30);
  o.training.unique_tokens = 1e15;
  SearchResult r = ladder();
  select(c, o, &r);
  EXPECT_EQ(r.best, unlimited.best);
  EXPECT_NEAR(r.candidates[r.best].loss, unlimited.candidates[unlimited.best].loss, 1e-12);
  EXPECT_EQ(r.candidates[r.best].repeat_penalty, 0);
  // Scarce data: the answer is ranked by the data-constrained loss, so it
  // is never worse under it than the unlimited answer is (16B on 2.6
  // epochs here: 2.2740 against 2.3597 for 1B on 259 epochs).
  o.training.unique_tokens = 1e10;
  SearchResult scarce = ladder();
  select(c, o, &scarce);
  ASSERT_GE(scarce.best, 0);
  const Candidate& u = unlimited.candidates[unlimited.best];
  const Candidate& s = scarce.candidates[scarce.best];
  EXPECT_LE(s.loss, scaling::data_constrained_loss(o.law, u.params, u.tokens, 1e10).loss + 1e-12);
  EXPECT_NEAR(s.loss, 2.2740, 5e-5);
  EXPECT_NEAR(scarce.candidates[0].loss, 2.3597, 5e-5);
  EXPECT_NEAR(scarce.candidates[0].epochs, 30 * 86400 * 4e17 / 6e9 / 1e10, 1e-6);
}

TEST(InferenceTokens, MoreInferenceNeverGivesALargerModel) {
  const simulator::Cluster c = a100();
  // The compute-optimal-ish loss of the 8B model on 20 tokens per parameter.
  const double target = law().loss(8e9, 160e9);
  double last_params = 1e30;
  for (double t : {0.0, 1e11, 1e12, 1e13, 1e14}) {
    SearchOptions o = base(30);
    o.training.inference_tokens = t;
    o.training.target_loss = target;
    SearchResult r = ladder();
    select(c, o, &r);
    ASSERT_GE(r.best, 0) << t;
    const Candidate& b = r.candidates[r.best];
    EXPECT_LE(b.params, last_params) << t;
    last_params = b.params;
    EXPECT_NEAR(o.law.loss(b.params, b.tokens), target, 1e-9);
    if (t > 0) {
      EXPECT_NEAR(b.lifetime_flops, 6 * b.params * b.tokens + 2 * b.params * t,
                  1e-6 * b.lifetime_flops);
    }
    for (const Candidate& x : r.candidates) {
      if (x.feasible && t > 0) {
        EXPECT_GE(x.lifetime_flops, b.lifetime_flops);
      }
    }
  }
  // The loss of 16B on 10T tokens: out of reach of the 1B and 2B models
  // (E + A / N^alpha alone is above it), so they are infeasible.
  SearchOptions o = base(30);
  o.training.inference_tokens = 1e12;
  o.training.target_loss = law().loss(16e9, 1e13);
  SearchResult r = ladder();
  select(c, o, &r);
  for (int i : {0, 1}) {
    EXPECT_EQ(r.candidates[i].tokens, kUnreachableTokens);
    EXPECT_FALSE(r.candidates[i].feasible);
    EXPECT_EQ(r.candidates[i].why, "deadline");
  }
  EXPECT_GE(r.best, 2);
}

SearchOptions small_search() {
  SearchOptions o;
  o.gpus = 16;
  o.days = 2.0;
  o.law = law();
  o.threads = 1;
  o.shape_template = family_template(Family::kGpt, 1024, 32000);
  o.space.global_batch_tokens = {256 * 1024};
  simulator::Model m;
  m.seq_length = 1024;
  m.vocab_size = 32000;
  for (auto [layers, hidden] : {std::pair{4, 512}, {8, 1024}, {12, 1536}, {16, 2048}, {24, 2048}}) {
    m.name = "s" + std::to_string(layers) + "x" + std::to_string(hidden);
    m.num_layers = layers;
    m.hidden_size = hidden;
    m.num_heads = hidden / 128;
    o.shapes.push_back(m);
  }
  return o;
}

TEST(InferenceTokens, SearchMatchesTheComputeOptimalLossWithLessLifetimeCompute) {
  const simulator::Cluster c = a100();
  SearchOptions o = small_search();
  auto plain = search(c, o);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_GE(plain.value().best, 0);
  const Candidate& ref = plain.value().candidates[plain.value().best];
  EXPECT_FALSE(plain.value().inference_reference.present);
  double last_params = 1e30;
  for (double t : {1e9, 1e11, 1e12, 1e13}) {
    o.training.inference_tokens = t;
    auto r = search(c, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const SearchResult& res = r.value();
    ASSERT_GE(res.best, 0);
    const InferenceReference& ir = res.inference_reference;
    ASSERT_TRUE(ir.present);
    EXPECT_EQ(ir.params, ref.params);
    EXPECT_NEAR(ir.loss, ref.loss, 1e-12);
    const Candidate& b = res.candidates[res.best];
    EXPECT_LE(b.params, ref.params);
    EXPECT_LE(b.lifetime_flops, ir.lifetime_flops * (1 + 1e-9));
    EXPECT_NEAR(b.loss, ref.loss, 1e-8);
    EXPECT_LE(b.params, last_params);
    last_params = b.params;
  }
}

TEST(Search, FixedAndUniqueTokensAreMonotoneOnSimulatedShapes) {
  const simulator::Cluster c = a100();
  double last_params = 1e30;
  for (double tokens : {1e9, 1e10, 3e10, 1e11}) {
    SearchOptions o = small_search();
    o.training.tokens = tokens;
    auto r = search(c, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const double params = r.value().best >= 0 ? r.value().candidates[r.value().best].params : 0;
    EXPECT_LE(params, last_params) << tokens;
    last_params = params;
  }
  EXPECT_GT(last_params, 0);
  double last_loss = 1e9;
  for (double u : {1e8, 1e9, 1e10, 1e11}) {
    SearchOptions o = small_search();
    o.training.unique_tokens = u;
    auto r = search(c, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_GE(r.value().best, 0);
    const double loss = r.value().candidates[r.value().best].loss;
    EXPECT_LE(loss, last_loss + 1e-12) << u;
    last_loss = loss;
  }
}

TEST(Objective, ConflictsAndTokenCounts) {
  TrainingObjective t;
  t.inference_tokens = 1e12;
  t.tokens = 1e12;
  EXPECT_EQ(check_training_objective(t).code(), StatusCode::kUsage);
  t.tokens = 0;
  t.unique_tokens = 3e12;
  EXPECT_NE(check_training_objective(t).message().find("--unique-tokens"), std::string::npos);
  t.unique_tokens = 0;
  EXPECT_TRUE(check_training_objective(t).ok());
  t.tokens = -1;
  t.inference_tokens = 0;
  EXPECT_NE(check_training_objective(t).message().find("--tokens"), std::string::npos);

  EXPECT_EQ(parse_token_count("15T", "--tokens").value(), 15e12);
  EXPECT_EQ(parse_token_count("3t", "--tokens").value(), 3e12);
  EXPECT_EQ(parse_token_count("1e12", "--tokens").value(), 1e12);
  EXPECT_EQ(parse_token_count("500B", "--tokens").value(), 500e9);
  EXPECT_EQ(parse_token_count("2.5M", "--tokens").value(), 2.5e6);
  for (const char* bad : {"", "T", "15X", "-3T", "0", "nan", "1e400", " 5", "5 T", "inf"}) {
    auto r = parse_token_count(bad, "--unique-tokens");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kUsage) << bad;
    EXPECT_EQ(r.status().message().rfind("--unique-tokens: ", 0), 0u) << bad;
  }
}

}  // namespace
}  // namespace llmplan::planner

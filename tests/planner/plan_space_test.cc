// Issue 12: the plan space (lists per axis, the batch ladder), model
// families, pinned models and the planner's monotone answers.
#include "planner/search/plan_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "planner/cli/plan_space_flags.h"
#include "reports/plan_report.h"
#include "planner/search/search.h"
#include "planner/search/shapes_json.h"
#include "presets/catalog.h"
#include "tests/planner/search_fixtures.h"

namespace llmplan::planner {
namespace {

presets::Catalog catalog() { return fixtures::builtin_catalog(); }
simulator::Cluster a100() { return fixtures::builtin_cluster("dgx-a100-80gb"); }
scaling::LossLaw law() { return fixtures::builtin_law("chinchilla"); }

std::string error_of(const Status& s) { return s.ok() ? "" : s.message(); }

TEST(PlanSpaceFlags, ListsParseAndBadListsNameTheFlag) {
  EXPECT_EQ(parse_int_list("1,2,8", "--tp", 8).value(), (std::vector<int>{1, 2, 8}));
  EXPECT_EQ(error_of(parse_int_list("", "--tp", 8).status()), "--tp: empty list (give comma-separated values)");
  EXPECT_EQ(error_of(parse_int_list("1,,2", "--pp", 8).status()), "--pp: empty item in '1,,2'");
  EXPECT_EQ(error_of(parse_int_list("x", "--pp", 8).status()), "--pp: must be an integer from 1 to 8, got x");
  EXPECT_EQ(error_of(parse_int_list("0", "--tp", 8).status()), "--tp: must be an integer from 1 to 8, got 0");
  EXPECT_EQ(error_of(parse_int_list("9", "--tp", 8).status()), "--tp: must be an integer from 1 to 8, got 9");
  EXPECT_EQ(error_of(parse_int_list("2,2", "--tp", 8).status()), "--tp: 2 is listed twice");
  EXPECT_EQ(parse_tokens_list("4M,1048576,2k", "--global-batch-tokens").value(),
            (std::vector<double>{4194304, 1048576, 2048}));
  EXPECT_NE(error_of(parse_tokens_list("-1", "--global-batch-tokens").status())
                .find("--global-batch-tokens: '-1' is not a positive token count"),
            std::string::npos);
  EXPECT_NE(error_of(parse_tokens_list("nan", "--global-batch-tokens").status()), "");
  PlanSpaceFlags f;
  f.recompute = "none,sometimes";
  EXPECT_EQ(error_of(to_plan_space(f).status()),
            "--recompute: 'sometimes' is not one of none, selective, full");
  f = {};
  f.global_batch = "1024";
  f.global_batch_tokens = "4M";
  EXPECT_NE(error_of(to_plan_space(f).status()).find("give one of them"), std::string::npos);
  f = {};
  f.sequence_parallel = "maybe";
  EXPECT_EQ(error_of(to_plan_space(f).status()), "--sequence-parallel: expected on, off or both, got 'maybe'");
}

TEST(PlanSpace, ContradictionsWithTheModelNameTheFlag) {
  const simulator::Model llama = catalog().model("llama3-70b").value();
  PlanSpace s;
  s.tp = {3, 5};
  EXPECT_EQ(error_of(check_against_model(s, llama)),
            "--tp 3,5: no value divides llama3-70b's 64 heads, 8 KV heads and FFN size 28672");
  s = {};
  s.pp = {200};
  EXPECT_EQ(error_of(check_against_model(s, llama)), "--pp 200: every value exceeds llama3-70b's 80 layers");
  s = {};
  s.tp = {8};
  s.pp = {4};
  s.max_model_parallel = 16;
  EXPECT_NE(error_of(check_against_model(s, llama)).find("--max-model-parallel 16"), std::string::npos);
  s.max_model_parallel = 32;
  EXPECT_TRUE(check_against_model(s, llama).ok());
}

TEST(PlanSpace, ZeroBubbleIsTriedWhereListedForPipelinesWithoutInterleaving) {
  const simulator::Model llama = catalog().model("llama3-8b").value();
  PlanSpace s;
  s.tp = {8};
  s.pp = {1, 4};
  s.micro_batch = {1};
  s.virtual_stages = {1, 2};
  s.global_batch = {256};
  s.recompute = {simulator::Recompute::kSelective};
  auto count = [&](simulator::Schedule x) {
    long n = 0;
    for (const simulator::Plan& p : enumerate_plans(llama, a100(), 64, s)) {
      n += p.schedule == x;
      if (p.schedule == simulator::Schedule::kZbH1) {
        EXPECT_EQ(p.virtual_stages, 1);
        EXPECT_GT(p.pipeline_parallel, 1);
      }
    }
    return n;
  };
  // Automatic: 1F1B and zb-h1 (plan_space.h), as `1f1b,zb-h1` lists them.
  const long automatic_zb = count(simulator::Schedule::kZbH1);
  const long one = count(simulator::Schedule::kOneFOneB);
  EXPECT_GT(one, 0);
  s.schedule = {simulator::Schedule::kOneFOneB, simulator::Schedule::kZbH1};
  // p = 4, v = 1: zb-h1 plans beside the 1F1B ones (some may be pruned by
  // memory: the deferred W's operands, memory.h).
  const long zb = count(simulator::Schedule::kZbH1);
  EXPECT_GT(zb, 0);
  EXPECT_EQ(automatic_zb, zb);
  EXPECT_EQ(count(simulator::Schedule::kOneFOneB), one);
  s.schedule = {simulator::Schedule::kOneFOneB};
  EXPECT_EQ(count(simulator::Schedule::kZbH1), 0);
  EXPECT_EQ(count(simulator::Schedule::kOneFOneB), one);
  s.schedule = {simulator::Schedule::kZbH1};
  EXPECT_EQ(count(simulator::Schedule::kZbH1), zb);
  PlanSpaceFlags f;
  f.schedule = "1f1b,zb-h1";
  EXPECT_EQ(to_plan_space(f).value().schedule,
            (std::vector<simulator::Schedule>{simulator::Schedule::kOneFOneB,
                                              simulator::Schedule::kZbH1}));
  f.schedule = "gpipe";
  EXPECT_EQ(error_of(to_plan_space(f).status()),
            "--schedule: 'gpipe' is not one of 1f1b, zb-h1 (interleaving: --virtual-stages)");
  f.schedule = "zb-h1,zb-h1";
  EXPECT_EQ(error_of(to_plan_space(f).status()), "--schedule: zb-h1 is listed twice");
}

TEST(PlanSpace, ListedValuesAreExactlyTheOnesTried) {
  const simulator::Model llama = catalog().model("llama3-70b").value();
  PlanSpace s;
  s.tp = {8};
  s.pp = {4, 8};
  s.micro_batch = {1};
  s.virtual_stages = {1, 2};
  s.global_batch = {1024};
  s.recompute = {simulator::Recompute::kFull, simulator::Recompute::kSelective};
  s.sequence_parallel = Choice::kBoth;
  s.distributed_optimizer = Choice::kOn;
  EnumerationStats st;
  const auto plans = enumerate_plans(llama, a100(), 1024, s, &st);
  ASSERT_FALSE(plans.empty());
  std::set<std::pair<bool, simulator::Recompute>> sp_rc;
  std::set<int> vs, ds;
  for (const simulator::Plan& p : plans) {
    EXPECT_EQ(p.tensor_parallel, 8);
    EXPECT_TRUE(p.pipeline_parallel == 4 || p.pipeline_parallel == 8);
    EXPECT_EQ(p.micro_batch_size, 1);
    EXPECT_EQ(p.global_batch_size % (p.data_parallel * p.micro_batch_size), 0);
    EXPECT_NEAR(p.global_batch_size, 1024, p.data_parallel / 2.0 + 1);
    EXPECT_TRUE(p.distributed_optimizer);
    EXPECT_LE(p.world_size(), 1024);
    sp_rc.insert({p.sequence_parallel, p.recompute});
    vs.insert(p.virtual_stages);
    ds.insert(p.data_parallel);
  }
  // Both SP values and both recompute values (some pairs may not fit).
  EXPECT_EQ(std::count_if(sp_rc.begin(), sp_rc.end(), [](const auto& x) { return x.first; }) > 0, true);
  EXPECT_EQ(std::count_if(sp_rc.begin(), sp_rc.end(), [](const auto& x) { return !x.first; }) > 0, true);
  EXPECT_EQ(std::count_if(sp_rc.begin(), sp_rc.end(),
                          [](const auto& x) { return x.second == simulator::Recompute::kSelective; }) > 0,
            true);
  EXPECT_EQ(std::count_if(sp_rc.begin(), sp_rc.end(),
                          [](const auto& x) { return x.second == simulator::Recompute::kFull; }) > 0,
            true);
  EXPECT_EQ(vs, (std::set<int>{1, 2}));
  EXPECT_EQ(ds, (std::set<int>{8, 16, 32}));  // d = G/(t p) and half of it: p 4 {32, 16}, p 8 {16, 8}
  EXPECT_EQ(st.kept, static_cast<long>(plans.size()));
  // A model-parallel cap removes the t x p = 64 layouts.
  s.max_model_parallel = 32;
  for (const simulator::Plan& p : enumerate_plans(llama, a100(), 1024, s)) {
    EXPECT_LE(p.tensor_parallel * p.pipeline_parallel, 32);
  }
  // A data-parallel width the batch cannot feed is never laid out: 64
  // sequences on 1,024 GPUs use at most 64 replicas.
  s = {};
  s.global_batch = {64};
  for (const simulator::Plan& p : enumerate_plans(llama, a100(), 1024, s)) {
    EXPECT_LE(p.data_parallel * p.micro_batch_size, 64);
  }
}

// Issue 13: ZeRO stage, FSDP group and the overlap flags are axes of the
// space, shared by the planner and sweep through expand_sharding_axes.
TEST(PlanSpace, ShardingAndOverlapAxesExpandAsListed) {
  simulator::Plan base;
  base.tensor_parallel = 2;
  base.data_parallel = 32;
  base.global_batch_size = 64;
  PlanSpace s;
  // Automatic: the base plan as it is.
  auto plans = expand_sharding_axes(s, base);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].sharding_stage(), 0);
  EXPECT_TRUE(plans[0].overlap_grad_reduce);
  // Stages 0 and 3, groups 8 and 64 (64 does not divide 32: whole group for
  // it), TP overlap both ways: 1 x 1 x 2 (stage 0 has no group or gather
  // overlap) + 1 x 1 x 2 x 2 (stage 3: group 8; gather overlap off/on).
  s.zero_stage = {0, 3};
  s.fsdp_group = {8, 64};
  s.tp_comm_overlap = Choice::kBoth;
  s.overlap_param_gather = Choice::kBoth;
  plans = expand_sharding_axes(s, base);
  ASSERT_EQ(plans.size(), 6u);
  std::set<std::tuple<int, int, bool, bool>> seen;
  for (const simulator::Plan& p : plans) {
    EXPECT_TRUE(simulator::validate(p).ok()) << simulator::validate(p).message();
    EXPECT_EQ(p.distributed_optimizer, p.zero_stage >= 1);
    seen.insert({p.sharding_stage(), p.fsdp_group, p.tp_comm_overlap, p.overlap_param_gather});
  }
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_TRUE(seen.count({3, 8, true, true}));
  EXPECT_TRUE(seen.count({0, 0, false, false}));
  EXPECT_FALSE(seen.count({3, 64, false, false}));
  // Without data parallelism there is nothing to shard or overlap: one plan.
  base.data_parallel = 1;
  base.tensor_parallel = 1;
  plans = expand_sharding_axes(s, base);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].sharding_stage(), 0);
  EXPECT_FALSE(plans[0].tp_comm_overlap);
  // --distributed-optimizer both is stages 0 and 1.
  base.data_parallel = 4;
  base.global_batch_size = 4;
  s = {};
  s.distributed_optimizer = Choice::kBoth;
  plans = expand_sharding_axes(s, base);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].sharding_stage(), 0);
  EXPECT_EQ(plans[1].sharding_stage(), 1);
}

// Issue 25: the automatic overlaps are what the Megatron-Core / NeMo recipes
// run: TP communication overlap with SP (t > 1), gradient-reduce overlap, and
// the parameter all-gather overlapped with the distributed optimizer; each
// flag's "off" turns its overlap off in every plan.
TEST(PlanSpace, AutomaticOverlapsFollowTheRecipes) {
  const simulator::Model llama = catalog().model("llama3-70b").value();
  PlanSpace s;
  s.micro_batch = {1};
  s.global_batch = {512};
  const std::vector<simulator::Plan> plans = enumerate_plans(llama, a100(), 256, s);
  ASSERT_FALSE(plans.empty());
  int tp_overlapped = 0, gathers_overlapped = 0;
  for (const simulator::Plan& p : plans) {
    EXPECT_EQ(p.tp_comm_overlap, p.tensor_parallel > 1 && p.sequence_parallel) << reports::plan_label(p);
    EXPECT_TRUE(p.overlap_grad_reduce) << reports::plan_label(p);
    const bool sharded = p.sharding_stage() >= 1 &&
                         static_cast<long>(p.data_parallel) * p.context_parallel > 1;
    EXPECT_EQ(p.overlap_param_gather, sharded) << reports::plan_label(p);
    tp_overlapped += p.tp_comm_overlap ? 1 : 0;
    gathers_overlapped += p.overlap_param_gather ? 1 : 0;
  }
  EXPECT_GT(tp_overlapped, 0);
  EXPECT_GT(gathers_overlapped, 0);
  // Off, through the flags as a user spells them.
  PlanSpaceFlags f;
  f.micro_batch = "1";
  f.global_batch = "512";
  f.tp_comm_overlap = "off";
  f.overlap_grad_reduce = "off";
  f.overlap_param_gather = "off";
  const PlanSpace off = to_plan_space(f).value();
  const std::vector<simulator::Plan> plain = enumerate_plans(llama, a100(), 256, off);
  ASSERT_FALSE(plain.empty());
  for (const simulator::Plan& p : plain) {
    EXPECT_FALSE(p.tp_comm_overlap) << reports::plan_label(p);
    EXPECT_FALSE(p.overlap_param_gather) << reports::plan_label(p);
    if (static_cast<long>(p.data_parallel) * p.context_parallel > 1) {
      EXPECT_FALSE(p.overlap_grad_reduce) << reports::plan_label(p);
    }
  }
  // The plan-space line says what automatic means.
  EXPECT_NE(describe(s).find("TP comm overlap auto (on when t > 1 with SP)"), std::string::npos);
  EXPECT_NE(describe(off).find("TP comm overlap off; grad-reduce overlap off; param-gather overlap off"),
            std::string::npos);
}

TEST(PlanSpace, PlannerSearchesZeroStagesPrunedByMemory) {
  const simulator::Model llama = catalog().model("llama3-70b").value();
  PlanSpace s;
  s.tp = {8};
  s.pp = {1};
  s.micro_batch = {1};
  s.global_batch = {512};
  s.recompute = {simulator::Recompute::kFull};
  s.zero_stage = {1, 3};
  EnumerationStats st;
  const auto plans = enumerate_plans(llama, a100(), 512, s, &st);
  std::set<int> stages;
  for (const simulator::Plan& p : plans) stages.insert(p.sharding_stage());
  // 70B on t8 p1: ZeRO-1 keeps 6 bytes per parameter of the 8.8B per GPU
  // (53 GB) plus activations; ZeRO-3 shards it all over d = 64.
  EXPECT_TRUE(stages.count(3));
  EXPECT_EQ(st.layouts, static_cast<long>(plans.size()) + st.memory_pruned);
  PlanSpaceFlags f;
  f.zero = "1,5";
  EXPECT_EQ(error_of(to_plan_space(f).status()), "--zero: '5' is not a ZeRO stage (0, 1, 2 or 3)");
  f.zero = "3";
  f.distributed_optimizer = "on";
  EXPECT_NE(error_of(to_plan_space(f).status()).find("give one of them"), std::string::npos);
  f = {};
  f.fsdp_group = "0";
  EXPECT_EQ(error_of(to_plan_space(f).status()), "--fsdp-group: must be an integer from 1 to 1048576, got 0");
  f = {};
  f.zero = "0,3";
  f.tp_comm_overlap = "both";
  const PlanSpace parsed = to_plan_space(f).value();
  EXPECT_EQ(parsed.zero_stage, (std::vector<int>{0, 3}));
  EXPECT_EQ(parsed.tp_comm_overlap, Choice::kBoth);
}

TEST(PlanSpace, BatchLadderFollowsComputeAndStaysOnTheLadder) {
  // DeepSeek LLM's B_opt = 0.292 C^0.3271: about 4.6M tokens at 1e22 FLOPs.
  EXPECT_NEAR(compute_optimal_batch_tokens(1e22) / 1e6, 0.292 * std::pow(1e22, 0.3271) / 1e6, 1e-9);
  double last = 0;
  for (double c = 1e18; c < 1e28; c *= 10) {
    const std::vector<double> rung = auto_batch_ladder(c);
    ASSERT_EQ(rung.size(), 1u);
    EXPECT_GE(rung[0], last);  // never smaller for more compute
    EXPECT_GE(rung[0], 1024.0 * 1024);
    EXPECT_LE(rung[0], 64.0 * 1024 * 1024);
    last = rung[0];
  }
  EXPECT_EQ(auto_batch_ladder(1e18)[0], 1024.0 * 1024);        // tiny runs: the lowest rung
  EXPECT_EQ(auto_batch_ladder(1e27)[0], 64.0 * 1024 * 1024);   // huge runs: the top rung
  // The ladder reaches the largest published batches: Llama 3 405B's 16M
  // tokens and DeepSeek-V3's 15,360 x 4,096 (about 63M).
  const std::vector<double> ladder = default_batch_ladder_tokens();
  EXPECT_EQ(ladder.front(), 1024.0 * 1024);
  EXPECT_GE(ladder.back(), 15360.0 * 4096);
  EXPECT_EQ(ladder.back(), kBatchLadderTopTokens);
  EXPECT_TRUE(std::find(ladder.begin(), ladder.end(), 16.0 * 1024 * 1024) != ladder.end());
}

// Issue 25: widths of every G / 2^k GPUs, capped where the pipeline fills.
TEST(PlanSpace, DataParallelWidthsGrowWithTheGpus) {
  // p 16, batch 8192 sequences, b 1: the pipeline fills up to d = 512.
  EXPECT_EQ(data_parallel_widths(4096, 8192, 1, 16, Widths::kFloor),
            (std::vector<int>{512, 256, 128, 64}));
  EXPECT_EQ(data_parallel_widths(100, 8192, 1, 16, Widths::kFloor), (std::vector<int>{100, 50}));
  EXPECT_EQ(data_parallel_widths(100, 8192, 1, 16, Widths::kWidest), (std::vector<int>{100}));
  EXPECT_EQ(data_parallel_widths(100, 8192, 1, 16, Widths::kEvery),
            (std::vector<int>{100, 50, 25, 12, 6, 3, 1}));
  for (Widths w : {Widths::kFloor, Widths::kEvery}) {
    for (int d = 1; d <= 5000; d += 7) {
      const std::vector<int> small = data_parallel_widths(d, 8192, 1, 16, w);
      const std::vector<int> big = data_parallel_widths(2 * d + 1, 8192, 1, 16, w);
      for (int x : small) {
        // Every width for G at or above the floor (kFloor) is one for 2G.
        if (w == Widths::kFloor && x < 8192 / 16 / kNarrowestWidthDivisor) continue;
        EXPECT_TRUE(std::find(big.begin(), big.end(), x) != big.end()) << d << " " << x;
      }
    }
  }
}

// Issue 25, section 4: shape grids offer depths that pipeline well.
TEST(Shapes, DepthsSplitEvenly) {
  EXPECT_EQ(pipeline_friendly_depth(155), 152);
  EXPECT_EQ(pipeline_friendly_depth(133), 136);
  EXPECT_EQ(pipeline_friendly_depth(114), 112);
  EXPECT_EQ(pipeline_friendly_depth(500), 160);
  EXPECT_EQ(pipeline_friendly_depth(13), 12);
  EXPECT_EQ(pipeline_friendly_depth(3), 3);
  for (Family f : {Family::kGpt, Family::kLlama}) {
    for (double n = 1e9; n < 5e12; n *= 1.3) {
      const int l = shape_for_params(n, family_template(f)).num_layers;
      if (l >= 24) {
        EXPECT_EQ(l % 8, 0) << n;
      }
    }
  }
  for (double n = 1e9; n < 1e12; n *= 1.5) {
    const int l = moe_shape_for_active(n, family_template(Family::kMoe), moe_shape_configs()[0]).num_layers;
    if (l >= 24) {
      EXPECT_EQ(l % 8, 0) << n;
    }
  }
}

TEST(Families, LlamaShapesFollowTheRecipe) {
  const simulator::Model base = family_template(Family::kLlama);
  EXPECT_EQ(base.seq_length, 8192);
  EXPECT_EQ(base.vocab_size, 128256);
  for (double n : {8e9, 70e9, 400e9}) {
    const simulator::Model m = shape_for_params(n, base);
    EXPECT_TRUE(simulator::validate(m).ok()) << m.name;
    EXPECT_EQ(m.head_dim(), 128);
    EXPECT_EQ(m.kv_heads(), 8) << m.name;
    EXPECT_EQ(m.ffn_hidden() % 256, 0);
    EXPECT_GE(m.ffn_hidden(), 8 * m.hidden_size / 3);
    EXPECT_LT(m.ffn_hidden(), 8 * m.hidden_size / 3 + 256);
    EXPECT_EQ(m.activation, simulator::Activation::kSwiglu);
    EXPECT_EQ(m.positions, simulator::PositionEmbedding::kRotary);
    EXPECT_FALSE(m.tied_embeddings);
    EXPECT_FALSE(m.linear_bias);
    EXPECT_NEAR(static_cast<double>(m.parameter_count()) / n, 1.0, 0.2) << m.name;
    EXPECT_EQ(m.name.rfind("llama-l", 0), 0u);
  }
  EXPECT_EQ(family_template(Family::kGpt, 4096, 32000).seq_length, 4096);
  EXPECT_EQ(error_of(parse_family("mamba").status()), "--family: expected gpt, llama or moe, got 'mamba'");
  // #27: the hybrid family is refused with the calibration's held-out error.
  const std::string hybrid = error_of(parse_family("hybrid").status());
  EXPECT_EQ(hybrid.rfind("--family hybrid: not offered: ", 0), 0u) << hybrid;
  EXPECT_NE(hybrid.find("17.1 % on gb200"), std::string::npos) << hybrid;
}

TEST(Shapes, PresetEntriesWithOverridesAndUnknownKeys) {
  const presets::Catalog cat = catalog();
  const simulator::Model base = family_template(Family::kGpt);
  auto shapes = parse_shapes_text(R"([{"preset": "llama3-70b"}, {"preset": "llama3-70b", "layers": 40},
                                      {"layers": 4, "hidden": 512, "heads": 4}])",
                                  "s.json", base, &cat);
  ASSERT_TRUE(shapes.ok()) << shapes.status().message();
  EXPECT_EQ(shapes.value()[0], cat.model("llama3-70b").value());
  EXPECT_EQ(shapes.value()[1].num_layers, 40);
  EXPECT_EQ(shapes.value()[1].num_kv_heads, 8);
  EXPECT_EQ(shapes.value()[2].seq_length, 2048);  // the family template's
  EXPECT_EQ(shapes.value()[2].name, "shape2");
  EXPECT_EQ(error_of(parse_shapes_text(R"([{"preset": "llama9"}])", "s.json", base, &cat).status()),
            "s.json[0].preset: unknown model preset 'llama9' (see llmplan presets --kind model)");
  EXPECT_NE(error_of(parse_shapes_text(R"([{"preset": "llama3-8b", "colour": 1}])", "s.json", base, &cat)
                         .status())
                .find("s.json[0]"),
            std::string::npos);
  EXPECT_EQ(error_of(resolve_pinned_model("llama9", base, cat).status()),
            "--model: 'llama9' is neither a model preset (llmplan presets --kind model) nor a file");
}

SearchOptions small_options(int gpus, double days) {
  SearchOptions o;
  o.gpus = gpus;
  o.days = days;
  o.law = law();
  o.threads = 2;
  o.shape_template = family_template(Family::kGpt, 1024, 32000);
  return o;
}

// The answer never shrinks when GPUs or days grow (issue 12: 65,536 GPUs
// once gave a smaller model than 32,768). A ladder of GPU counts (x2 and
// not) and deadlines.
TEST(Search, AnswerIsMonotoneInGpusAndDays) {
  const simulator::Cluster c = a100();
  const std::vector<int> gpus = {8, 16, 24, 32};
  const std::vector<double> days = {0.25, 0.5, 1.0};
  std::vector<std::vector<double>> answer(gpus.size(), std::vector<double>(days.size()));
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = 0; j < days.size(); ++j) {
      auto r = search(c, small_options(gpus[i], days[j]));
      ASSERT_TRUE(r.ok()) << r.status().message();
      ASSERT_GE(r.value().best, 0) << gpus[i] << " GPUs " << days[j] << " days";
      answer[i][j] = r.value().candidates[r.value().best].params;
      const PlanResult& p = r.value().plans[r.value().candidates[r.value().best].best_plan];
      EXPECT_LE(p.gpus_used, gpus[i]);
      EXPECT_LE(r.value().candidates[r.value().best].days, days[j]);
    }
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = 0; j < days.size(); ++j) {
      if (i > 0) {
        EXPECT_GE(answer[i][j], answer[i - 1][j]) << gpus[i] << " GPUs, " << days[j] << " days";
      }
      if (j > 0) {
        EXPECT_GE(answer[i][j], answer[i][j - 1]) << gpus[i] << " GPUs, " << days[j] << " days";
      }
    }
  }
}

// Issue 25: the answer never shrinks from 1,024 to 2^20 GPUs, for every
// family, with more days and with a larger budget. A few shapes per family
// (--shapes-like, so the property of the plan space is what is checked:
// its layouts for 2G include those for G) in a narrowed space (bf16,
// micro-batch 1, no interleaving, t = 8, p a power of two) so the suite
// stays fast, also under ASan. G steps by 4: the plan space for 2G holds
// every layout for G (data_parallel_widths), so with a budget, where a
// narrower layout may be the cheaper answer, the property is exact along
// doublings; without one, G = 24,576 (not a power of two) checks that the
// widest layouts of more GPUs are never slower.
struct LadderCase {
  const char* name;
  Family family;
  Objective objective;
  std::vector<double> sizes;  // parameters (MoE: active)
};

SearchOptions ladder_options(const simulator::Cluster& c, const LadderCase& lc, int gpus,
                             double days, double budget) {
  SearchOptions o;
  o.gpus = gpus;
  o.days = days;
  o.budget_usd = c.usd_per_gpu_hour > 0 ? budget : 0;
  o.objective = lc.objective;
  o.family = lc.family;
  o.threads = 2;
  o.shape_template = family_template(lc.family);
  o.law = catalog().law(lc.family == Family::kMoe ? "clark-moe" : "chinchilla").value();
  o.space.precision = {simulator::Precision::kBf16};
  o.space.micro_batch = {1};
  o.space.virtual_stages = {1};
  o.space.tp = {8};
  o.space.pp = {1, 2, 4, 8, 16, 32};
  for (double n : lc.sizes) {
    o.shapes.push_back(lc.family == Family::kMoe
                           ? moe_shape_for_active(n, o.shape_template, moe_shape_configs().back())
                           : shape_for_params(n, o.shape_template));
  }
  return o;
}

// Larger is better: parameters for the largest-model objective (0: none),
// minus the loss for the loss objective and MoE (-inf: none).
double ladder_score(const LadderCase& lc, const SearchResult& r) {
  const bool by_loss = lc.objective == Objective::kLoss || lc.family == Family::kMoe;
  if (r.best < 0) return by_loss ? -1e300 : 0.0;
  const Candidate& c = r.candidates[r.best];
  return by_loss ? -c.loss : c.params;
}

TEST(Search, AnswerIsMonotoneUpToAMillionGpusForEveryFamily) {
  simulator::Cluster c = catalog().cluster("dgx-h100").value();
  const std::vector<LadderCase> cases = {
      {"gpt largest", Family::kGpt, Objective::kLargest, {20e9, 175e9, 1e12}},
      {"llama largest", Family::kLlama, Objective::kLargest, {8e9, 70e9, 400e9, 1.5e12}},
      {"llama loss", Family::kLlama, Objective::kLoss, {70e9, 1.5e12}},
      {"moe largest", Family::kMoe, Objective::kLargest, {20e9, 200e9}},
  };
  const std::vector<int> gpus = {1024, 4096, 16384, 65536, 262144, 1048576};
  const std::vector<double> days = {30, 365};
  const std::vector<double> budgets = {5e7, 0};  // ascending; 0: none, the loosest
  for (const LadderCase& lc : cases) {
    // score[g][d][b], budgets loosening with b.
    std::vector<std::vector<std::vector<double>>> score(
        gpus.size(),
        std::vector<std::vector<double>>(days.size(), std::vector<double>(budgets.size())));
    bool any_found = false;
    for (size_t g = 0; g < gpus.size(); ++g) {
      for (size_t d = 0; d < days.size(); ++d) {
        for (size_t b = 0; b < budgets.size(); ++b) {
          auto r = search(c, ladder_options(c, lc, gpus[g], days[d], budgets[b]));
          ASSERT_TRUE(r.ok()) << r.status().message();
          score[g][d][b] = ladder_score(lc, r.value());
          if (r.value().best >= 0) {
            any_found = true;
            const Candidate& best = r.value().candidates[r.value().best];
            EXPECT_LE(r.value().plans[best.best_plan].gpus_used, gpus[g]);
            EXPECT_LE(best.days, days[d] * (1 + 1e-12));
          }
        }
      }
    }
    EXPECT_TRUE(any_found) << lc.name;
    // 24,576 GPUs without a budget: between 16,384's and 65,536's answers.
    for (size_t d = 0; d < days.size(); ++d) {
      auto r = search(c, ladder_options(c, lc, 24576, days[d], 0));
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_GE(ladder_score(lc, r.value()), score[2][d].back()) << lc.name << " at 24576 GPUs";
      EXPECT_LE(ladder_score(lc, r.value()), score[3][d].back()) << lc.name << " at 24576 GPUs";
    }
    for (size_t g = 0; g < gpus.size(); ++g) {
      for (size_t d = 0; d < days.size(); ++d) {
        const std::string at = std::string(lc.name) + " at " + std::to_string(gpus[g]) +
                               " GPUs, " + std::to_string(days[d]) + " days";
        for (size_t b = 0; b < budgets.size(); ++b) {
          const std::string where = at + " budget " + std::to_string(budgets[b]);
          if (b > 0) {
            EXPECT_GE(score[g][d][b], score[g][d][b - 1]) << where;
          }
          if (g > 0) {
            EXPECT_GE(score[g][d][b], score[g - 1][d][b]) << where;
          }
          if (d > 0) {
            EXPECT_GE(score[g][d][b], score[g][d - 1][b]) << where;
          }
        }
      }
    }
    // The largest G adds nothing once the batch bounds every layout: the
    // answer there equals 262,144 GPUs' (no shrinking past the ceiling).
    EXPECT_EQ(score.back()[1].back(), score[gpus.size() - 2][1].back()) << lc.name;
  }
}

// Every GPU kind: the llama ladder from 1,024 to 2^20 GPUs (one deadline).
TEST(Search, AnswerIsMonotoneInGpusOnEveryGpuKind) {
  const LadderCase lc{"llama", Family::kLlama, Objective::kLargest, {8e9, 70e9, 400e9}};
  for (const char* name : {"dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100", "dgx-h200", "dgx-b200"}) {
    const simulator::Cluster c = catalog().cluster(name).value();
    double last = 0;
    for (int g : {1024, 16384, 65536, 1048576}) {
      auto r = search(c, ladder_options(c, lc, g, 90, 0));
      ASSERT_TRUE(r.ok()) << r.status().message();
      const double s = ladder_score(lc, r.value());
      EXPECT_GE(s, last) << name << " at " << g << " GPUs";
      last = s;
    }
    EXPECT_GT(last, 0) << name;
  }
}

TEST(Search, PinnedModelGetsItsBestPlanAndWhetherItMeetsTheDeadline) {
  const simulator::Cluster c = a100();
  SearchOptions o = small_options(64, 1.0);
  simulator::Model m = shape_for_params(1e9, o.shape_template);
  o.shapes = {m};
  o.pinned = true;
  auto r = search(c, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r.value().best, 0);
  EXPECT_TRUE(r.value().candidates[0].feasible);
  o.days = 1e-4;  // far too short: still the best plan, marked as missing the deadline
  r = search(c, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value().best, 0);
  EXPECT_FALSE(r.value().candidates[0].feasible);
  EXPECT_EQ(r.value().candidates[0].why, "deadline");
  EXPECT_GT(r.value().candidates[0].days, 1e-4);
}

TEST(Search, ReasonsPerShapeWithCounts) {
  const simulator::Cluster c = a100();
  SearchOptions o = small_options(16, 5.0);
  simulator::Model huge = shape_for_params(500e9, o.shape_template);  // weights alone overflow 16 GPUs
  simulator::Model small = shape_for_params(1e9, o.shape_template);
  ASSERT_EQ(small.num_heads % 8, 0);
  simulator::Model odd = o.shape_template;  // 12 heads: t = 8 cannot split them
  odd.name = "odd";
  odd.num_layers = 4;
  odd.hidden_size = 1536;
  odd.num_heads = 12;
  o.shapes = {small, odd, huge};
  o.space.tp = {8};
  o.space.pp = {1};
  o.space.max_model_parallel = 8;
  auto r = search(c, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Candidates come sorted by size (with the naive baseline's shape among them).
  const Candidate& h = r.value().candidates.back();
  ASSERT_EQ(h.model, huge);
  EXPECT_EQ(h.why, "memory");
  EXPECT_GT(h.layouts, 0);
  EXPECT_EQ(h.memory_pruned, h.layouts);
  for (const Candidate& cand : r.value().candidates) {
    if (cand.model == small) {
      EXPECT_EQ(cand.why, "");
    }
    if (cand.model == odd) {
      EXPECT_EQ(cand.why, "no-layout");
      EXPECT_EQ(cand.layouts, 0);
    }
  }
  // A tp list no shape admits is a usage error naming the flag.
  int t = 3;
  while (small.num_heads % t == 0 || huge.num_heads % t == 0 || odd.num_heads % t == 0) ++t;
  o.space.tp = {t};
  auto bad = search(c, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUsage);
  EXPECT_EQ(bad.status().message().rfind("--tp " + std::to_string(t) + ": no value divides", 0), 0u);
}

TEST(Search, ConfidenceNeverGivesALargerModel) {
  const simulator::Cluster c = a100();
  SearchOptions o = small_options(32, 0.5);
  auto point = search(c, o);
  ASSERT_TRUE(point.ok());
  o.band.known = true;
  o.band.confidence = 0.9;
  o.band.confidence_ratio = 1.3;  // measured runs 30 % slower at P90
  auto careful = search(c, o);
  ASSERT_TRUE(careful.ok());
  ASSERT_GE(careful.value().best, 0);
  const Candidate& a = point.value().candidates[point.value().best];
  const Candidate& b = careful.value().candidates[careful.value().best];
  EXPECT_LT(b.params, a.params);
  EXPECT_LE(b.days * 1.3, 0.5);
  // Without validation data no quantile can be asked for.
  o.band.known = false;
  EXPECT_EQ(search(c, o).status().code(), StatusCode::kUsage);
}

// --confidence takes each plan's own band (TimeBand::of), not the pooled one:
// a pooled ratio of 1 with every plan's cell at 1.3 answers as the 1.3 band.
TEST(Search, ConfidenceUsesEachPlansBand) {
  const simulator::Cluster c = a100();
  SearchOptions o = small_options(32, 0.5);
  o.band.known = true;
  o.band.confidence = 0.9;
  o.band.confidence_ratio = 1.3;
  auto pooled = search(c, o);
  ASSERT_TRUE(pooled.ok());
  TimeBand cell = o.band;
  cell.group = "Megatron-Core, dense";
  o.band.confidence_ratio = 1.0;
  o.band.cells.assign(TimeBand::kCells, cell);
  auto per_plan = search(c, o);
  ASSERT_TRUE(per_plan.ok());
  ASSERT_GE(per_plan.value().best, 0);
  EXPECT_EQ(per_plan.value().candidates[per_plan.value().best].params,
            pooled.value().candidates[pooled.value().best].params);
  // of() picks the plan's cell: fp8, pp > 1, 512 GPUs.
  simulator::Plan plan;
  plan.precision = simulator::Precision::kFp8;
  plan.pipeline_parallel = 4;
  plan.data_parallel = 128;
  o.band.cells[TimeBand::cell_index(simulator::BandFeatures{
      .fp8 = true, .pipeline = true, .gpu_bucket = 2})].group = "picked";
  EXPECT_EQ(o.band.of(simulator::Model{}, plan).group, "picked");
  plan.pipeline_parallel = 1;
  EXPECT_EQ(o.band.of(simulator::Model{}, plan).group, "Megatron-Core, dense");
}

}  // namespace
}  // namespace llmplan::planner

namespace llmplan::planner {
namespace {

// A LayoutMemo shared by the calls at every GPU count returns, count by
// count, exactly the plans and EnumerationStats of the calls without one:
// dense and MoE models, the widest layouts only (as schedule's curves) and
// the planner's widths, several batch targets (two of them can give one
// layout, which must be listed once).
TEST(LayoutMemo, ChangesNoEnumerationAtAnyCount) {
  const simulator::Cluster cluster = fixtures::builtin_cluster("dgx-h100");
  long memo_layouts = 0, calls = 0, total_plans = 0;
  for (const char* name : {"llama3-8b", "mixtral-8x7b"}) {
    const simulator::Model model = catalog().model(name).value();
    for (bool all_gpus_only : {true, false}) {
      PlanSpace space;
      space.all_gpus_only = all_gpus_only;
      // 1000 and 1024 sequences round to one global batch for many d * b.
      space.global_batch = {256, 1000, 1024};
      LayoutMemo memo;
      for (int gpus = 8; gpus <= 2048; gpus += 8 * 13) {
        EnumerationStats plain_stats, memo_stats;
        const auto plain = enumerate_plans(model, cluster, gpus, space, &plain_stats);
        const auto memoized = enumerate_plans(model, cluster, gpus, space, &memo_stats, &memo);
        ASSERT_EQ(plain, memoized) << name << " at " << gpus << " GPUs";
        EXPECT_EQ(plain_stats.layouts, memo_stats.layouts) << name << " " << gpus;
        EXPECT_EQ(plain_stats.kept, memo_stats.kept) << name << " " << gpus;
        EXPECT_EQ(plain_stats.memory_pruned, memo_stats.memory_pruned) << name << " " << gpus;
        EXPECT_EQ(plain_stats.most_gpus, memo_stats.most_gpus) << name << " " << gpus;
        total_plans += static_cast<long>(plain.size());
        ++calls;
      }
      memo_layouts += memo.layouts();
    }
  }
  EXPECT_EQ(calls, 4 * 20);
  EXPECT_GT(total_plans, 1000);  // the comparison has plans to compare
  EXPECT_GT(memo_layouts, 100);
}

TEST(LayoutMemo, BelongsToOneModel) {
  const simulator::Cluster cluster = fixtures::builtin_cluster("dgx-h100");
  LayoutMemo memo;
  enumerate_plans(catalog().model("llama3-8b").value(), cluster, 64, PlanSpace(), nullptr, &memo);
  EXPECT_DEATH(enumerate_plans(catalog().model("llama3-70b").value(), cluster, 64, PlanSpace(),
                               nullptr, &memo),
               "check failed");
}

}  // namespace
}  // namespace llmplan::planner

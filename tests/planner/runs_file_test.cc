// The runs-file reader (published_runs.csv + models.csv, and the JSON form),
// the mapping of rows onto Model + Plan + Cluster, the classification of rows
// the simulator cannot express, fold assignment, and validation on a small
// runs file. The MoE rows: runs_file_moe_test.cc.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/runs_file.h"
#include "planner/accuracy/runs_report.h"
#include "planner/cli/command.h"
#include "presets/catalog.h"
#include "base/strict_json.h"
#include "tests/planner/runs_file_rows.h"
#include "tests/planner/runs_fixtures.h"

namespace llmplan::planner {
namespace {

using namespace runs_file_rows;  // the shared models table and rows

TEST(RunsFile, DetectsTheHeader) {
  EXPECT_TRUE(is_runs_csv(std::string(kRunsHeader) + kMptRow));
  EXPECT_FALSE(is_runs_csv("# GPUs,global batch,micro batch\n1,2,3\n"));
  EXPECT_FALSE(is_runs_csv(""));
}

TEST(RunsFile, SourceIds) {
  EXPECT_EQ(source_id("https://github.com/mosaicml/llm-foundry/blob/abc/x.md (table)"),
            "llm-foundry");
  EXPECT_EQ(source_id("https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/a/b"),
            "Megatron-Bridge");
  EXPECT_EQ(source_id("own measurement"), "own");
}

TEST(RunsFile, MapsAnMptRow) {
  Result<std::vector<PublishedRun>> r = read(kMptRow);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  const PublishedRun& run = r->front();
  EXPECT_TRUE(run.missing.empty());
  EXPECT_EQ(run.line, 2);
  EXPECT_EQ(run.source, "llm-foundry");
  EXPECT_DOUBLE_EQ(run.measured_step_s, 1.25);
  simulator::Model m;
  m.name = "mpt-7b";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_heads = 32;
  m.num_kv_heads = 32;
  m.ffn_hidden_size = 16384;
  m.seq_length = 2048;
  m.vocab_size = 50368;
  m.activation = simulator::Activation::kGelu;
  m.positions = simulator::PositionEmbedding::kLearned;
  m.tied_embeddings = true;
  m.linear_bias = true;
  EXPECT_EQ(run.config.model, m);
  simulator::Plan p;
  p.tensor_parallel = 1;
  p.pipeline_parallel = 1;
  p.data_parallel = 8;
  p.micro_batch_size = 8;
  p.global_batch_size = 512;
  p.recompute = simulator::Recompute::kFull;
  p.zero_stage = 3;
  p.overlap_param_gather = true;  // PyTorch FSDP prefetch
  p.overlap_grad_reduce = true;
  p.flash_attention = true;
  p.precision = simulator::Precision::kBf16;
  p.dropout = false;               // MPT recipes: pdrop 0
  p.fused_cross_entropy = true;    // llm-foundry's fused_crossentropy loss
  p.fp8_param_gather = false;      // PyTorch FSDP: bf16 parameters
  EXPECT_EQ(run.config.plan, p);
  EXPECT_EQ(run.config.cluster.gpu.name, "h100-sxm");
  EXPECT_EQ(run.config.cluster.gpus_per_node, 8);
}

TEST(RunsFile, MapsAMegatronRow) {
  Result<std::vector<PublishedRun>> r = read(kMegatronRow);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const PublishedRun& run = r->front();
  ASSERT_TRUE(run.missing.empty());
  EXPECT_EQ(run.source, "Megatron-LM");
  const simulator::Model& m = run.config.model;
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.activation, simulator::Activation::kSwiglu);
  EXPECT_EQ(m.positions, simulator::PositionEmbedding::kRotary);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_EQ(m.seq_length, 4096);
  simulator::Plan p;
  p.tensor_parallel = 4;
  p.pipeline_parallel = 4;
  p.data_parallel = 4;
  p.virtual_stages = 5;
  p.schedule = simulator::Schedule::kInterleaved;
  p.micro_batch_size = 1;
  p.global_batch_size = 128;
  p.recompute = simulator::Recompute::kNone;
  p.sequence_parallel = true;
  p.zero_stage = 1;
  p.distributed_optimizer = true;
  p.tp_comm_overlap = true;
  p.overlap_grad_reduce = true;
  p.overlap_param_gather = true;
  p.grad_bucket_bytes = 160'000'000;
  EXPECT_EQ(run.config.plan, p);
}

TEST(RunsFile, ClassifiesRowsItCannotExpress) {
  std::string fp8 = kMptRow;
  fp8.replace(fp8.find("bf16 (amp_bf16)"), 15, "fp8 (amp_fp8)");
  fp8.replace(0, 3, "fp8");  // a distinct name
  const std::string cp =
      "cp_row,https://github.com/NVIDIA/NeMo/blob/x/p.md,DGX-H100,64,8,llama2-70b,4096,bf16,4,4,1,"
      "2,2,1,unstated,1,128,unstated,unstated,9.0\n";
  const std::string moe =
      "moe_row,https://github.com/NVIDIA/NeMo/blob/x/p.md,DGX-H100,64,8,qwen-moe,4096,"
      "fp8-current,1,1,1,1,64,8,zero1,1,512,none,unstated,3.0\n";
  const std::string act =
      "act_row,https://github.com/NVIDIA/NeMo/blob/x/p.md,DGX-H100,8,8,nemo-8b,4096,bf16,1,1,1,1,8,"
      "1,unstated,1,64,none,unstated,3.0\n";
  Result<std::vector<PublishedRun>> r = read(kMptRow + fp8 + cp + moe + act);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_TRUE((*r)[0].missing.empty());
  EXPECT_TRUE((*r)[1].missing.empty());  // fp8: expressible (recipe not stated: delayed)
  EXPECT_EQ((*r)[1].config.plan.precision, simulator::Precision::kFp8);
  EXPECT_EQ((*r)[1].config.plan.fp8_recipe, simulator::Fp8Recipe::kDelayed);
  // Context parallelism is expressible: the row's cp goes into the plan and
  // its dp (which excludes cp: 4 * 4 * 2 * 2 = 64 GPUs) stays the replicas.
  EXPECT_TRUE((*r)[2].missing.empty());
  EXPECT_EQ((*r)[2].config.plan.context_parallel, 2);
  EXPECT_EQ((*r)[2].config.plan.data_parallel, 2);
  EXPECT_EQ((*r)[2].config.plan.world_size(), 64);
  // Mixture of experts is expressible: experts and top-k from the models
  // table, ep from the row.
  EXPECT_TRUE((*r)[3].missing.empty());
  EXPECT_EQ((*r)[3].config.model.num_experts, 128);
  EXPECT_EQ((*r)[3].config.plan.expert_parallel, 8);
  // A Nemotron row's squared-relu maps onto the non-gated squared ReLU.
  EXPECT_TRUE((*r)[4].missing.empty());
  EXPECT_EQ((*r)[4].config.model.activation, simulator::Activation::kSquaredRelu);
  const auto counts = missing_feature_counts(*r);
  EXPECT_EQ(counts.count("fp8"), 0u);
  EXPECT_EQ(counts.count("moe"), 0u);
  EXPECT_EQ(counts.count("context-parallel"), 0u);
  EXPECT_EQ(counts.count("activation squared-relu"), 0u);
  EXPECT_EQ(make_runs_cases(*r).size(), 5u);
}

// heads x head_dim != hidden (Qwen3, GPT-OSS) is expressible through
// Model::head_dim_size; heads x head_dim == hidden leaves it 0 (as before).
TEST(RunsFile, HeadDimOtherThanHiddenOverHeadsSetsHeadDim) {
  const std::string models = std::string(kModelsHeader) +
                             "q,48,2048,32,4,128,6144,151936,4096,swiglu,false,rotary,false,"
                             "RMSNorm,0,0,0,0,dense\n";
  Result<std::vector<PublishedRun>> r = read(
      "q_row,src,x,8,8,q,4096,bf16,1,1,1,1,8,1,unstated,1,64,none,unstated,3.0\n", models);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->front().missing.empty());
  const simulator::Model& m = r->front().config.model;
  EXPECT_EQ(m.head_dim_size, 128);
  EXPECT_EQ(m.head_dim(), 128);
  EXPECT_EQ(m.hidden_size, 2048);
  EXPECT_FALSE(m.is_moe());
  Result<std::vector<PublishedRun>> dense = read(kMegatronRow);
  ASSERT_TRUE(dense.ok()) << dense.status().message();
  EXPECT_EQ(dense->front().config.model.head_dim_size, 0);
  EXPECT_EQ(dense->front().config.model.head_dim(), 128);
}

TEST(RunsFile, ErrorsNameFileLineAndColumn) {
  EXPECT_NE(error_of(kMptRow.substr(0, 40) + "\n").find("runs.csv:2:"), std::string::npos);
  std::string bad = kMptRow;
  bad.replace(bad.find(",1.250"), 6, ",-1");
  EXPECT_NE(error_of(bad).find("runs.csv:2: column \"measured_step_s\": must be from 0.0001 to 100000 s, got -1"),
            std::string::npos)
      << error_of(bad);
  bad = kMptRow;
  bad.replace(bad.find("mpt-7b,2048"), 11, "mpt-9b,2048");
  EXPECT_NE(error_of(bad).find("runs.csv:2: column \"model\": \"mpt-9b\" is not in the models"),
            std::string::npos)
      << error_of(bad);
  bad = kMptRow;
  bad.replace(bad.find(",8,1,\"zero3"), 11, ",7,1,\"zero3");
  EXPECT_NE(error_of(bad).find("runs.csv:2: column \"gpus\": gpus 8 != tp * pp * cp * dp"),
            std::string::npos)
      << error_of(bad);
  bad = kMptRow;
  bad.replace(bad.find("bf16 (amp_bf16),1,1"), 19, "bf16 (amp_bf16),x,1");
  EXPECT_NE(error_of(bad).find("runs.csv:2: column \"tp\": \"x\" is not a decimal number"),
            std::string::npos)
      << error_of(bad);
  EXPECT_EQ(error_of(kMptRow + kMptRow).find("runs.csv:3: column \"name\""), 0u)
      << error_of(kMptRow + kMptRow);
  EXPECT_EQ(error_of(""), "runs.csv: no data rows after the header");
  EXPECT_NE(error_of(kMptRow, "model,layers\nx,1\n").find("models.csv:1: missing column"),
            std::string::npos);
  EXPECT_NE(error_of(kMptRow, std::string(kModelsHeader) +
                                  "mpt-7b,32,4096,32,32,128,16384,50368,2048,gelu,yes,learned,"
                                  "true,LayerNorm,0,0,0,0,dense\n")
                .find("models.csv:2: column \"tied_embeddings\": expected true or false"),
            std::string::npos);
  // A plan the simulator refuses (global batch not a multiple of d * b).
  bad = kMptRow;
  bad.replace(bad.find(",8,512,"), 7, ",8,100,");
  EXPECT_EQ(error_of(bad).find("runs.csv:2: mpt-7b_foundry"), 0u) << error_of(bad);
}

TEST(RunsFile, ReadsTheJsonForm) {
  const std::string text = R"([
    {"name": "a", "source": "https://github.com/me/bench/x", "model": {"preset": "llama2-7b"},
     "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 4, "global_batch": 64},
     "cluster": "dgx-h100", "measured_step_s": 1.5}])";
  Result<std::vector<PublishedRun>> r = read_runs_json_text(text, "runs.json", catalog());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().source, "bench");
  EXPECT_EQ(r->front().config.plan.data_parallel, 8);
  EXPECT_EQ(r->front().config.cluster.gpu.name, "h100-sxm");
  const auto err = [&](const std::string& t) {
    Result<std::vector<PublishedRun>> x = read_runs_json_text(t, "runs.json", catalog());
    return x.ok() ? std::string("OK") : x.status().message();
  };
  EXPECT_NE(err("[{\"name\": \"a\"").find("runs.json:1:"), std::string::npos);
  EXPECT_EQ(err("{}"), "runs.json: expected a JSON array of runs");
  EXPECT_NE(err(R"([{"name": "a", "colour": 1}])").find("runs.json: [0]: unknown key \"colour\""),
            std::string::npos);
  EXPECT_NE(err(R"([{"name": "a", "model": {"preset": "llama2-7b"}, "plan": {"tp": 3},
                     "cluster": "dgx-h100", "measured_step_s": 1}])")
                .find("runs.json: [0]"),
            std::string::npos);
  EXPECT_NE(err(R"([{"name": "a", "model": {}, "plan": {}, "cluster": "dgx-h100",
                     "measured_step_s": -1}])")
                .find("[0].measured_step_s: must be from 0.0001 to 100000 s, got -1"),
            std::string::npos);
}

TEST(RunsFile, FoldAssignmentIsDeterministicAndKeepsRepeatsTogether) {
  const std::vector<std::string> keys = {"a", "b", "a", "c", "d", "e", "b", "f"};
  const std::vector<int> f = assign_folds(keys, 3);
  EXPECT_EQ(f, (std::vector<int>{0, 1, 0, 2, 0, 1, 1, 2}));
  EXPECT_EQ(assign_folds(keys, 3), f);
  EXPECT_EQ(assign_folds({"x", "y", "z"}, 5), (std::vector<int>{0, 1, 2}));
}

// A tiny cross-validation: each fold calibrates on the other rows and predicts
// its own; held-out predictions are positive and the per-fold times recorded.
TEST(RunsFile, CrossValidatesASmallRunsFile) {
  std::string rows;
  const int dps[] = {8, 16, 32, 8, 16, 32};
  const int gbs[] = {256, 512, 1024, 512, 1024, 2048};
  const double step[] = {0.70, 0.72, 0.75, 1.38, 1.42, 1.50};
  for (int i = 0; i < 6; ++i) {
    const int dp = dps[i];
    rows += "r" + std::to_string(i) + ",https://github.com/mosaicml/llm-foundry/x,H100," +
            std::to_string(dp) + ",unstated,mpt-7b,2048,bf16,1,1,1,1," + std::to_string(dp) +
            ",1,zero3 (PyTorch FSDP FULL_SHARD),4," + std::to_string(gbs[i]) +
            ",none,unstated," + std::to_string(step[i] * 4) + "\n";
  }
  Result<std::vector<PublishedRun>> r = read(rows);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<AccuracyCase> cases = make_runs_cases(*r);
  ASSERT_EQ(cases.size(), 6u);
  std::vector<std::string> keys;
  for (const AccuracyCase& c : cases) keys.push_back(configuration_key(c));
  const std::vector<int> fold = assign_folds(keys, 2);
  CalibrationOptions options;
  options.max_iterations = 2;
  options.fit_flash_attention = true;
  Result<HeldOut> h = cross_validate(cases, fold, 2, constants_of(cases.front()), options, {});
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_EQ(h->predicted.size(), 6u);
  ASSERT_EQ(h->seconds.size(), 2u);
  for (double p : h->predicted) EXPECT_GT(p, 0.0);
  // A fold with every row leaves nothing to train on.
  EXPECT_FALSE(cross_validate(cases, std::vector<int>(6, 0), 1, constants_of(cases.front()),
                              options, {})
                   .ok());
}

// `llmplan validate RUNS --format json` carries the held-out MAPE, the
// group tables, the rows and the excluded rows.
TEST(RunsFile, ValidateJsonKeys) {
  const std::string dir = testing::TempDir();
  std::string rows = kMptRow + kMegatronRow;
  std::string fp4 = kMptRow;  // a precision the simulator lacks: excluded
  fp4.replace(fp4.find("bf16 (amp_bf16)"), 15, "fp4 (nvfp4)");
  fp4.replace(0, 3, "fp4");
  std::string other = kMptRow;
  other.replace(other.find(",8,512,"), 7, ",4,256,");
  other.replace(0, 3, "oth");
  rows += fp4 + other;
  std::ofstream(dir + "/runs_cli.csv") << kRunsHeader << rows;
  std::ofstream(dir + "/runs_cli_models.csv") << kModels;
  Result<boost::json::value> v = run_validate_json(
      dir + "/runs_cli.csv --models " + dir +
      "/runs_cli_models.csv --format json --folds 3 --max-iterations 2");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const boost::json::object& o = v->as_object();
  EXPECT_EQ(o.at("rows").to_number<int>(), 4);
  EXPECT_EQ(o.at("expressible_rows").to_number<int>(), 3);
  EXPECT_EQ(o.at("excluded_rows").to_number<int>(), 1);
  EXPECT_GT(o.at("held_out_mape").to_number<double>(), 0.0);
  EXPECT_EQ(o.at("held_out").at("folds").to_number<int>(), 3);
  EXPECT_EQ(o.at("held_out").at("seconds_per_fold").as_array().size(), 3u);
  EXPECT_TRUE(o.at("in_sample").as_object().contains("mape"));
  const boost::json::object& groups = o.at("groups").as_object();
  for (const char* g : {"source", "zero stage", "recompute", "tp>1", "pp>1", "seq>=8192",
                        "gpus>=128"}) {
    ASSERT_TRUE(groups.contains(g)) << g;
    EXPECT_TRUE(groups.at(g).as_array().front().as_object().contains("held_out_mape")) << g;
  }
  ASSERT_EQ(o.at("runs").as_array().size(), 3u);
  const boost::json::object& run = o.at("runs").as_array().front().as_object();
  for (const char* k : {"name", "measured_s", "predicted_s", "held_out_predicted_s", "fits",
                        "fold"}) {
    EXPECT_TRUE(run.contains(k)) << k;
  }
  EXPECT_EQ(o.at("excluded").at("by_feature").at("precision fp4").to_number<int>(), 1);
  EXPECT_EQ(o.at("excluded").at("runs").as_array().front().at("missing").as_array().front(),
            "precision fp4");
  EXPECT_EQ(o.at("not_fitting_rows").to_number<int>() >= 0, true);
}

// The H100 form states no release column: a row's release is the section of
// Megatron-Bridge's performance-summary archive its source cell names
// ("section '26.04.01 NeMo Container'"); other rows have none. These
// releases are reported but select no calibration rows (the H100 form is
// fitted on every row), unlike the Blackwell form's container column.
TEST(RunsFile, H100ReleasesComeFromTheSourceSection) {
  EXPECT_EQ(source_section_release("https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/x/docs/"
                                   "performance-summary-archive.md (section '26.04.01 NeMo "
                                   "Container')"),
            "26.04.01 NeMo Container");
  EXPECT_EQ(source_section_release("https://github.com/x/README.md (section 'Training Speed and "
                                   "Scalability')"),
            "");
  EXPECT_EQ(source_section_release("https://github.com/x/README.md (section 'NeMo Container')"),
            "");
  EXPECT_EQ(source_section_release("https://github.com/mosaicml/llm-foundry/blob/x/README.md"), "");

  const std::vector<AccuracyCase> h100 = fixtures::shipped_runs_cases("h100/published_runs.csv");
  std::map<std::string, int> by_release;
  int moe = 0;
  for (const AccuracyCase& c : h100) {
    EXPECT_EQ(c.release_from_source, !c.release.empty()) << c.name;
    if (!c.release.empty()) {
      ++by_release[c.release];
      // The row name carries the same release ("..._mbridge26.04.01_...").
      const std::string version = c.release.substr(0, c.release.find(' '));
      EXPECT_NE(c.name.find("mbridge" + version + "_"), std::string::npos) << c.name;
    }
    if (c.config.model.is_moe()) {
      ++moe;
      EXPECT_FALSE(c.release.empty()) << c.name;
    }
  }
  EXPECT_EQ(moe, 16);
  const std::map<std::string, int> expected = {
      {"25.11 NeMo Container", 6},    {"26.02 NeMo Container", 5},
      {"26.02.01 NeMo Container", 4}, {"26.04 NeMo Container", 4},
      {"26.04.01 NeMo Container", 5}, {"26.06 NeMo Container", 2}};
  EXPECT_EQ(by_release, expected);
  EXPECT_FALSE(fits_latest_release(h100));
  // A release stated in its own column (the Blackwell form) selects rows.
  std::vector<AccuracyCase> stated = h100;
  stated.front().release = "NeMo 26.04.01 (Megatron-Bridge)";
  stated.front().release_from_source = false;
  EXPECT_TRUE(fits_latest_release(stated));
}

}  // namespace
}  // namespace llmplan::planner

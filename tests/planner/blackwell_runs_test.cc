// The Blackwell runs CSV (data/blackwell/published_runs.csv): the reader's
// mapping of each column, the release as data (latest-release calibration
// rows, leave-one-release-out folds, stack drift), per-GPU cross-validation,
// and the shipped file.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/runs_file.h"
#include "planner/accuracy/runs_report.h"
#include "planner/cli/command.h"
#include "presets/catalog.h"
#include "base/strict_json.h"
#include "simulator/plan_json.h"
#include "simulator/simulate.h"
#include "tests/planner/runs_file_rows.h"

namespace llmplan::planner {
namespace {

const char* const kHeader = runs_file_rows::kBlackwellHeader;

const std::string kModels =
    std::string(runs_file_rows::kBlackwellModelsHeader) +
    runs_file_rows::kBlackwellLlama3_8bModel +
    "qwen3-30b-a3b,48,2048,32,4,128,6144,151936,4096,swiglu,false,rotary,false,RMSNorm,128,8,"
    "768,0,every layer MoE,\n"
    "deepseek-v3,61,7168,128,128,128,18432,129280,4096,swiglu,false,rotary,false,RMSNorm,256,8,"
    "2048,1,\"first 3 layers dense, then every layer MoE\",\"missing features: multi-head "
    "latent attention (q_lora_rank 1536; kv_lora_rank 512); multi-token prediction (1 layer) in "
    "the runs named \"\"w/ MTP\"\". Router: sigmoid.\"\n";

constexpr const char* kMb = "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/x/docs/p.md";

std::string row(const std::string& container, const std::string& system, int gpus,
                const std::string& model, const std::string& precision, const std::string& tp,
                const std::string& vp, const std::string& ep, const std::string& etp, int dp,
                int mbs, int gbs, const std::string& tps, const std::string& notes = "",
                const std::string& source = kMb) {
  return "\"" + source + "\"," + container + "," + system + "," + std::to_string(gpus) + "," +
         model + ",8192," + precision + "," + tp + ",1,1," + vp + "," + ep + "," + etp + "," +
         std::to_string(dp) + "," + std::to_string(mbs) + "," + std::to_string(gbs) + "," + tps +
         ",1000,\"" + notes + "\"\n";
}

Result<std::vector<PublishedRun>> read(const std::string& rows) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  if (!catalog.ok()) return catalog.status();
  return read_runs_csv_text(std::string(kHeader) + rows, "bw.csv", kModels, "models.csv",
                            *catalog);
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool nvfp4_parses() {
  simulator::Plan probe;
  boost::json::object o;
  o["precision"] = "nvfp4";
  return simulator::apply_plan_json(o, "precision", &probe).ok();
}

TEST(BlackwellRuns, DetectsTheHeader) {
  const std::string text = std::string(kHeader) +
                           row("NeMo 26.02", "DGX-B200", 8, "LLAMA3_8B", "BF16", "1", "n/a", "",
                               "", 8, 2, 128, "30000");
  EXPECT_TRUE(is_blackwell_runs_csv(text));
  EXPECT_TRUE(is_runs_csv(text));
  EXPECT_FALSE(is_blackwell_runs_csv("name,model,measured_step_s,fsdp\n"));
}

TEST(BlackwellRuns, ReleaseVersionsOrder) {
  EXPECT_EQ(release_version("NeMo 26.04.01 (Megatron-Bridge)"), (std::vector<int>{26, 4, 1}));
  EXPECT_EQ(release_version("NeMo 25.04.rc2"), (std::vector<int>{25, 4, -1, 2}));
  EXPECT_TRUE(release_version("MCore dev + TE 2.9-based (2025)").empty());
  EXPECT_EQ(release_version("NeMo 26.02"), (std::vector<int>{26, 2, 0}));
  EXPECT_LT(release_version("NeMo 25.04.rc2"), release_version("NeMo 25.04"));
  EXPECT_LT(release_version("NeMo 25.11 (Megatron-Bridge)"), release_version("NeMo 26.02"));
  EXPECT_LT(release_version("NeMo 26.04"), release_version("NeMo 26.04.01"));
}

TEST(BlackwellRuns, ModelNames) {
  EXPECT_EQ(blackwell_model_name("LLAMA3.1_405B"), "llama3.1-405b");
  EXPECT_EQ(blackwell_model_name("LLAMA3-405B"), "llama3.1-405b");
  EXPECT_EQ(blackwell_model_name("Qwen3_30B_a3B (tokendrop)"), "qwen3-30b-a3b");
  EXPECT_EQ(blackwell_model_name("GPT OSS 120B"), "gpt-oss-120b");
  EXPECT_EQ(blackwell_model_name("DeepSeekV3 (w/o MTP)"), "deepseek-v3");
  EXPECT_EQ(blackwell_model_name("Nemotron-340B"), "nemotron4-340b");
}

// Each column's mapping on one dense row: cluster, release, step time,
// precision, vp n/a, the recipe's sharding and overlaps.
TEST(BlackwellRuns, MapsADenseRow) {
  Result<std::vector<PublishedRun>> r = read(row("NeMo 26.02 (Megatron-Bridge)", "DGX-B200", 8,
                                                 "LLAMA3_8B", "FP8-CS", "1", "n/a", "", "", 8, 2,
                                                 128, "30000", "GA=8"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  const PublishedRun& p = r->front();
  EXPECT_TRUE(p.missing.empty()) << p.missing.front();
  EXPECT_EQ(p.release, "NeMo 26.02 (Megatron-Bridge)");
  EXPECT_EQ(p.system, "DGX-B200");
  EXPECT_EQ(p.cluster, "dgx-b200");
  EXPECT_EQ(p.source, "Megatron-Bridge");
  EXPECT_EQ(p.model, "llama3-8b");
  EXPECT_DOUBLE_EQ(p.measured_step_s, 128.0 * 8192 / (30000.0 * 8));
  const simulator::Plan& plan = p.config.plan;
  EXPECT_EQ(p.config.cluster.gpu.name, "b200");
  EXPECT_EQ(plan.precision, simulator::Precision::kFp8);
  EXPECT_EQ(plan.fp8_recipe, simulator::Fp8Recipe::kCurrent);
  EXPECT_EQ(plan.virtual_stages, 1);
  EXPECT_EQ(plan.schedule, simulator::Schedule::kOneFOneB);
  EXPECT_EQ(plan.data_parallel, 8);
  EXPECT_EQ(plan.micro_batch_size, 2);
  EXPECT_EQ(plan.global_batch_size, 128);
  EXPECT_EQ(plan.zero_stage, 1);
  EXPECT_TRUE(plan.distributed_optimizer);
  EXPECT_TRUE(plan.overlap_grad_reduce);
  EXPECT_TRUE(plan.overlap_param_gather);
  EXPECT_EQ(plan.recompute, simulator::Recompute::kNone);
  EXPECT_FALSE(plan.dropout);
  // Megatron-Bridge's fused cross entropy (TE's implementation): the bf16
  // logits only.
  EXPECT_TRUE(plan.fused_cross_entropy);
  EXPECT_EQ(p.config.model.seq_length, 8192);
}

// The NeMo 2.0 rows (25.02-25.07, all FP8) ran NeMo's performance scripts,
// which reduce bf16 gradients for every FP8 recipe (helpers.py
// set_precision_configs: grad_reduce_in_fp32 = False; #26: the Nemotron-4
// 340B B200 row's DP traffic over the NICs was counted in fp32); a NeMo 2.0
// BF16 row keeps the fp32 default.
TEST(BlackwellRuns, NemoTwoFp8RowsReduceBf16Gradients) {
  const std::string docs = "https://docs.nvidia.com/nemo-framework/user-guide/latest/p.html";
  Result<std::vector<PublishedRun>> r = read(
      row("NeMo 25.02", "DGX-B200", 8, "LLAMA3-8B", "\"FP8 (page: \"\"FP8 precision\"\")\"",
          "1", "n/a", "", "", 8, 2, 128, "30000", "", docs) +
      row("NeMo 25.04", "DGX-GB200", 8, "LLAMA3-8B", "FP8-CS (per-tensor current scaling)", "1",
          "n/a", "", "", 8, 2, 128, "30000", "", docs) +
      row("NeMo 25.02", "DGX-B200", 8, "LLAMA3-8B", "BF16", "1", "n/a", "", "", 8, 2, 128,
          "30000", "", docs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  for (const PublishedRun& p : *r) EXPECT_TRUE(p.missing.empty()) << p.name << ": " << p.missing.front();
  EXPECT_EQ((*r)[0].config.plan.precision, simulator::Precision::kFp8);
  EXPECT_FALSE((*r)[0].config.plan.grad_reduce_in_fp32);
  EXPECT_FALSE((*r)[1].config.plan.grad_reduce_in_fp32);
  EXPECT_TRUE((*r)[2].config.plan.grad_reduce_in_fp32);
  EXPECT_EQ((*r)[0].config.plan.grad_bucket_bytes, 40'000'000LL * 2);
  // NeMo 2.0's loss is not mapped as fused: only Megatron-Bridge's is.
  for (const PublishedRun& p : *r) EXPECT_FALSE(p.config.plan.fused_cross_entropy) << p.name;
}

// The models table's optional column llmplan_preset: the run simulates the
// named model preset (with the run's sequence length), checked against the
// table's columns; features still listed as missing keep the row out.
TEST(BlackwellRuns, ModelFromAPreset) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  const std::string header =
      "model,layers,hidden,heads,kv_heads,head_dim,ffn,vocab,activation,tied_embeddings,"
      "positions,linear_bias,moe_experts,moe_top_k,moe_expert_ffn,moe_shared_experts,"
      "moe_layer_pattern,shape_notes,llmplan_preset\n";
  const auto models = [&](const std::string& layers, const std::string& notes) {
    return header + "qwen3-30b-a3b," + layers +
           ",2048,32,4,128,6144,151936,swiglu,false,rotary,false,128,8,768,0,"
           "every layer MoE,\"" + notes + "\",qwen3-30b-a3b\n";
  };
  const std::string runs = std::string(kHeader) + row("NeMo 26.02 (Megatron-Bridge)", "DGX-B200",
                                                      8, "Qwen3_30B_a3B", "BF16", "1", "n/a", "8",
                                                      "", 8, 1, 128, "30000");
  Result<std::vector<PublishedRun>> r =
      read_runs_csv_text(runs, "bw.csv", models("48", ""), "models.csv", *catalog);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  const PublishedRun& p = r->front();
  ASSERT_TRUE(p.missing.empty()) << p.missing.front();
  Result<simulator::Model> preset = catalog->model("qwen3-30b-a3b");
  ASSERT_TRUE(preset.ok());
  simulator::Model expected = *preset;
  expected.seq_length = 8192;  // the run's
  EXPECT_EQ(p.config.model, expected);
  EXPECT_EQ(p.config.plan.expert_parallel, 8);

  // A column that disagrees with the preset is an error naming both.
  Result<std::vector<PublishedRun>> bad =
      read_runs_csv_text(runs, "bw.csv", models("47", ""), "models.csv", *catalog);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("llmplan_preset \"qwen3-30b-a3b\" has layers 48, the "
                                        "table says 47"),
            std::string::npos)
      << bad.status().message();

  // Features still missing keep the row unexpressible.
  Result<std::vector<PublishedRun>> partial = read_runs_csv_text(
      runs, "bw.csv", models("48", "missing features: latent MoE (1024 wide)."), "models.csv",
      *catalog);
  ASSERT_TRUE(partial.ok()) << partial.status().message();
  EXPECT_EQ(partial->front().missing, std::vector<std::string>{"latent MoE"});

  // An unknown preset is an error naming the column.
  std::string unknown = models("48", "");
  unknown.replace(unknown.rfind("qwen3-30b-a3b"), 13, "no-such-model");
  Result<std::vector<PublishedRun>> missing =
      read_runs_csv_text(runs, "bw.csv", unknown, "models.csv", *catalog);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("llmplan_preset"), std::string::npos)
      << missing.status().message();
}

TEST(BlackwellRuns, PrecisionVariants) {
  const std::string rows =
      row("NeMo 26.02", "DGX-B200", 8, "LLAMA3_8B", "MXFP8", "1", "n/a", "", "", 8, 2, 128,
          "30000") +
      row("NeMo 26.02", "DGX-B200", 8, "LLAMA3_8B", "FP8-MX", "1", "n/a", "", "", 8, 2, 128,
          "30000") +
      row("NeMo 26.02", "DGX-B200", 8, "LLAMA3_8B", "BF16", "1", "n/a", "", "", 8, 2, 128,
          "30000") +
      row("NeMo 26.02", "DGX-B200", 8, "LLAMA3_8B", "NVFP4", "1", "n/a", "", "", 8, 2, 128,
          "30000") +
      row("NeMo 25.07", "DGX-B200", 8, "LLAMA3_8B",
          "FP8 variant in parentheses (meaning not in stored excerpt)", "1", "1", "", "", 8, 2,
          128, "30000") +
      row("NeMo 25.02", "DGX-B200", 8, "LLAMA3_8B",
          "\"FP8 (page: \"\"FP8 precision (using NeMo 2.0)\"\")\"", "1", "1", "", "", 8, 2, 128,
          "30000");
  Result<std::vector<PublishedRun>> r = read(rows);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 6u);
  for (int i : {0, 1}) {
    ASSERT_TRUE((*r)[i].missing.empty());
    EXPECT_EQ((*r)[i].config.plan.precision, simulator::Precision::kFp8);
    EXPECT_EQ((*r)[i].config.plan.fp8_recipe, simulator::Fp8Recipe::kMxfp8);
  }
  ASSERT_TRUE((*r)[2].missing.empty());
  EXPECT_EQ((*r)[2].config.plan.precision, simulator::Precision::kBf16);
  // NVFP4 is expressible exactly when the plan's precision parser has it.
  EXPECT_EQ((*r)[3].missing.empty(), nvfp4_parses());
  if (!nvfp4_parses()) {
    EXPECT_EQ((*r)[3].missing, std::vector<std::string>{"precision nvfp4"});
  }
  EXPECT_EQ((*r)[4].missing, std::vector<std::string>{"precision FP8 variant unstated"});
  ASSERT_TRUE((*r)[5].missing.empty());
  EXPECT_EQ((*r)[5].config.plan.fp8_recipe, simulator::Fp8Recipe::kCurrent);
}

TEST(BlackwellRuns, InterleavingTokendropAndMoe) {
  const std::string rows =
      row("NeMo 25.09", "DGX-B200", 8, "Qwen3_30B_a3B (tokendrop)", "FP8-CS", "1", "", "8", "",
          8, 1, 512, "10000") +
      // pp 2, vp 4 (row() writes pp 1).
      "\"" + std::string(kMb) + "\",NeMo 25.09,DGX-B200,16,Qwen3_30B_a3B,8192,FP8-CS,1,2,1,4,8,1,"
      "8,1,512,10000,1000,\n" +
      // vp > 1 without pp > 1: listed, not an error of the file.
      row("NeMo 25.09", "DGX-B200", 8, "Qwen3_30B_a3B", "FP8-CS", "1", "4", "8", "1", 8, 1, 512,
          "10000");
  Result<std::vector<PublishedRun>> r = read(rows);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE((*r)[0].missing.empty()) << (*r)[0].missing.front();
  EXPECT_DOUBLE_EQ((*r)[0].config.model.moe_capacity_factor, 1.0);
  EXPECT_EQ((*r)[0].config.plan.expert_parallel, 8);
  EXPECT_EQ((*r)[0].config.plan.expert_tensor_parallel, 1);
  EXPECT_EQ((*r)[0].config.plan.virtual_stages, 1);  // blank vp
  ASSERT_TRUE((*r)[1].missing.empty());
  EXPECT_DOUBLE_EQ((*r)[1].config.model.moe_capacity_factor, 0.0);  // dropless
  EXPECT_EQ((*r)[1].config.plan.virtual_stages, 4);
  EXPECT_EQ((*r)[1].config.plan.schedule, simulator::Schedule::kInterleaved);
  EXPECT_FALSE((*r)[1].config.plan.moe_a2a_overlap);  // the Qwen3 recipes' default
  ASSERT_EQ((*r)[2].missing.size(), 1u);
  EXPECT_EQ((*r)[2].missing.front().rfind("invalid layout", 0), 0u) << (*r)[2].missing.front();
}

// Rows that cannot be mapped are kept and listed, never an error of the file.
// DeepSeek-V3 through its preset: latent attention and MTP expressed; the
// "(w/ MTP)" runs get one MTP layer, "(w/o MTP)" none, the plain rows the
// preset's (the pre-training recipe's 1).
TEST(BlackwellRuns, DeepSeekV3MtpVariants) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  const std::string models =
      "model,layers,hidden,heads,kv_heads,head_dim,ffn,vocab,activation,tied_embeddings,"
      "positions,linear_bias,moe_experts,moe_top_k,moe_expert_ffn,moe_shared_experts,"
      "moe_layer_pattern,shape_notes,llmplan_preset\n"
      "deepseek-v3,61,7168,128,128,128,18432,129280,swiglu,false,rotary,false,256,8,2048,1,"
      "\"first 3 layers dense, then every layer MoE\",\"Multi-head latent attention.\","
      "deepseek-v3\n";
  const auto run = [&](const std::string& model) {
    return row("NeMo 25.11 (Megatron-Bridge)", "DGX-B200", 8, model, "FP8-MX", "1", "n/a", "8",
               "", 8, 1, 128, "300");
  };
  const std::string runs = std::string(kHeader) + run("DeepSeekV3 (w/ MTP)") +
                           run("DeepSeekV3 (w/o MTP)") + run("DeepSeekV3");
  Result<std::vector<PublishedRun>> r =
      read_runs_csv_text(runs, "bw.csv", models, "models.csv", *catalog);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  for (const PublishedRun& p : *r) {
    ASSERT_TRUE(p.missing.empty()) << p.missing.front();
    EXPECT_EQ(p.model, "deepseek-v3");
    EXPECT_TRUE(p.config.model.is_mla());
    EXPECT_EQ(p.config.model.seq_length, 8192);
  }
  EXPECT_EQ((*r)[0].config.model.mtp_layers, 1);
  EXPECT_EQ((*r)[1].config.model.mtp_layers, 0);
  EXPECT_EQ((*r)[2].config.model.mtp_layers, 1);
}

TEST(BlackwellRuns, ListsRowsItCannotMap) {
  const std::string rows =
      // NVIDIA dgxc-benchmarking: a reserved source.
      row("dgxc-benchmarking v25.x recipe", "GB200", 8, "LLAMA3_8B", "BF16", "1", "", "", "", 8,
          2, 128, "30000", "", "https://github.com/NVIDIA/dgxc-benchmarking/blob/x/README.md") +
      // tp x pp x cp x dp != GPUs (the 25.04.rc2 long-sequence table).
      row("NeMo 25.04.rc2", "DGX-B200", 16, "LLAMA3_8B", "FP8", "1", "", "", "", 2, 1, 64,
          "30000") +
      // GBS != MBS x DP x GA.
      row("NeMo 25.09", "DGX-B200", 8, "LLAMA3_8B", "FP8-CS", "1", "", "", "", 8, 1, 128,
          "30000", "GA=32") +
      // Multi-token prediction, latent attention from the models table.
      row("NeMo 25.11", "DGX-B200", 8, "DeepSeekV3 (w/ MTP)", "FP8-MX", "1", "", "8", "", 8, 1,
          128, "300") +
      // A model the table lacks; a system without a cluster preset.
      row("NeMo 25.11", "DGX-B200", 8, "Kimi_K2", "BF16", "1", "", "", "", 8, 1, 128, "300") +
      row("NeMo 25.11", "DGX-H20", 8, "LLAMA3_8B", "BF16", "1", "", "", "", 8, 1, 128, "300");
  Result<std::vector<PublishedRun>> r = read(rows);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 6u);
  EXPECT_TRUE(has((*r)[0].missing, "reserved source"));
  EXPECT_EQ((*r)[0].release, "dgxc-benchmarking v25.x recipe");
  EXPECT_TRUE(has((*r)[1].missing, "inconsistent layout (tp x pp x cp x dp != GPUs)"));
  EXPECT_EQ((*r)[2].missing,
            std::vector<std::string>{"inconsistent batch (GBS != MBS x DP x GA)"});
  EXPECT_TRUE(has((*r)[3].missing, "multi-token prediction"));
  EXPECT_TRUE(has((*r)[3].missing, "multi-head latent attention"));
  EXPECT_EQ((*r)[3].missing.size(), 2u);  // MTP once: the table's item names the w/ MTP runs
  EXPECT_EQ((*r)[4].missing,
            std::vector<std::string>{"model kimi-k2 not in the models table"});
  EXPECT_TRUE(has((*r)[5].missing, "system DGX-H20"));
  for (const PublishedRun& p : *r) EXPECT_FALSE(p.release.empty());
}

// A synthetic case with a release: system, model, precision recipe.
AccuracyCase synthetic(const std::string& system, const std::string& model,
                       simulator::Fp8Recipe recipe, const std::string& release) {
  AccuracyCase c;
  c.system = system;
  c.release = release;
  c.config.model.name = model;
  c.config.plan.precision = simulator::Precision::kFp8;
  c.config.plan.fp8_recipe = recipe;
  c.config.cluster.gpu.name = system == "DGX-B200" ? "b200" : "gb200";
  return c;
}

// The latest-release rule: per (system, model, precision), not globally.
TEST(BlackwellRuns, LatestReleasePerGroup) {
  using simulator::Fp8Recipe;
  const std::vector<AccuracyCase> cases = {
      synthetic("DGX-B200", "m", Fp8Recipe::kMxfp8, "NeMo 26.02"),     // older
      synthetic("DGX-B200", "m", Fp8Recipe::kMxfp8, "NeMo 26.04.01"),  // latest of its group
      synthetic("DGX-B200", "m", Fp8Recipe::kMxfp8, "NeMo 26.04"),     // older
      synthetic("DGX-B200", "m", Fp8Recipe::kCurrent, "NeMo 25.11"),   // latest (other recipe)
      synthetic("DGX-B200", "m", Fp8Recipe::kCurrent, "NeMo 25.04.rc2"),
      synthetic("DGX-GB200", "m", Fp8Recipe::kMxfp8, "NeMo 26.02"),    // latest (other system)
      synthetic("DGX-B200", "n", Fp8Recipe::kMxfp8, "NeMo 25.02"),     // latest (other model)
      synthetic("DGX-B200", "m", Fp8Recipe::kMxfp8, "NeMo 26.04.01"),  // a repeat: latest too
  };
  EXPECT_EQ(latest_release_mask(cases),
            (std::vector<bool>{false, true, false, true, false, true, true, true}));
  std::vector<std::string> releases;
  const std::vector<int> folds = release_folds(cases, &releases);
  EXPECT_EQ(folds, (std::vector<int>{0, 1, 2, 3, 4, 0, 5, 1}));
  EXPECT_EQ(releases.size(), 6u);
  EXPECT_EQ(releases[1], "NeMo 26.04.01");
}

TEST(BlackwellRuns, StackDriftPerRelease) {
  using simulator::Fp8Recipe;
  std::vector<AccuracyCase> cases = {
      synthetic("DGX-B200", "m", Fp8Recipe::kMxfp8, "NeMo 26.04"),
      synthetic("DGX-B200", "m", Fp8Recipe::kMxfp8, "NeMo 26.02"),
      synthetic("DGX-B200", "m", Fp8Recipe::kMxfp8, "NeMo 26.02"),
  };
  cases[0].run.iteration_time_s = 1.0;
  cases[1].run.iteration_time_s = 2.0;
  cases[2].run.iteration_time_s = 8.0;
  const std::vector<double> predicted = {1.0, 1.0, 2.0};
  const std::vector<ReleaseDrift> d = release_drift(cases, predicted, latest_release_mask(cases));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].release, "NeMo 26.04");
  EXPECT_TRUE(d[0].latest);
  EXPECT_DOUBLE_EQ(d[0].measured_over_predicted, 1.0);
  EXPECT_EQ(d[1].release, "NeMo 26.02");
  EXPECT_FALSE(d[1].latest);
  EXPECT_EQ(d[1].rows, 2);
  EXPECT_NEAR(d[1].measured_over_predicted, std::sqrt(2.0 * 4.0), 1e-12);  // geometric mean
  EXPECT_NEAR(d[1].mape, (1.0 / 2 + 6.0 / 8) / 2, 1e-12);
}

// Six DGX-B200 Llama 3 8B rows: releases 25.09, 25.11 and 26.02 (20000,
// 21000 and 22000 tokens/s/GPU) at global batches 128 and 256 each.
std::string three_release_rows() {
  std::string rows;
  const char* releases[] = {"NeMo 25.09", "NeMo 25.11", "NeMo 26.02"};
  for (int i = 0; i < 3; ++i) {
    for (int gbs : {128, 256}) {
      rows += row(releases[i], "DGX-B200", 8, "LLAMA3_8B", "BF16", "1", "", "", "", 8, 2, gbs,
                  std::to_string(20000 + 1000 * i));
    }
  }
  return rows;
}

// Cross-validation fits only the trainable rows (the latest releases), per
// GPU kind; leave-one-release-out leaves a release no other release trains
// unpredicted (lenient) instead of failing.
TEST(BlackwellRuns, CrossValidationTrainsOnTheMaskPerGpu) {
  std::string rows = three_release_rows();
  Result<std::vector<PublishedRun>> r = read(rows);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<AccuracyCase> cases = make_runs_cases(*r);
  ASSERT_EQ(cases.size(), 6u);
  const std::vector<bool> latest = latest_release_mask(cases);
  EXPECT_EQ(latest, (std::vector<bool>{false, false, false, false, true, true}));
  CalibrationOptions options;
  options.max_iterations = 2;
  // Two folds by configuration (GBS): the training rows of each are the
  // other GBS's latest-release row.
  const std::vector<int> fold = {0, 1, 0, 1, 0, 1};
  Result<HeldOut> h =
      cross_validate(cases, fold, 2, constants_of(cases.front()), options, {}, &latest);
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(finite_count(h->predicted), 6);
  // Without latest-release rows in the other fold there is nothing to fit.
  const std::vector<bool> only_first = {false, false, false, false, true, false};
  EXPECT_FALSE(
      cross_validate(cases, fold, 2, constants_of(cases.front()), options, {}, &only_first).ok());
  Result<HeldOut> lenient = cross_validate(cases, fold, 2, constants_of(cases.front()), options,
                                           {}, &only_first, /*lenient=*/true);
  ASSERT_TRUE(lenient.ok()) << lenient.status().message();
  EXPECT_EQ(finite_count(lenient->predicted), 3);  // fold 1 predicted, fold 0 not
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(std::isfinite(lenient->predicted[i]), fold[i] == 1);
}

// `llmplan validate` on a Blackwell-form file: --gpu keeps the rows of that
// GPU kind (others ignored and counted in a note), and the JSON carries the
// release per row, the release groupings, leave-one-release-out and the
// stack drift.
TEST(BlackwellRuns, ValidateFiltersByGpuAndReportsReleases) {
  std::string rows = three_release_rows();
  // A row of another GPU kind, and one whose cluster preset is unknown.
  rows += row("NeMo 26.02", "DGX-GB200", 8, "LLAMA3_8B", "BF16", "1", "", "", "", 8, 2, 128,
              "30000");
  rows += row("NeMo 26.02", "DGX-H20", 8, "LLAMA3_8B", "BF16", "1", "", "", "", 8, 2, 128,
              "30000");
  const std::string dir = testing::TempDir();
  std::ofstream(dir + "/bw_runs.csv") << kHeader << rows;
  std::ofstream(dir + "/bw_models.csv") << kModels;
  Result<boost::json::value> v = runs_file_rows::run_validate_json(
      dir + "/bw_runs.csv --models " + dir +
      "/bw_models.csv --gpu b200 --format json --folds 2 --max-iterations 2");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const boost::json::object& o = v->as_object();
  EXPECT_EQ(o.at("gpu").as_string(), "b200");
  // The 6 b200 rows and the one whose cluster is not a preset (listed with
  // its reason); the GB200 row is another GPU's.
  EXPECT_EQ(o.at("rows").to_number<int>(), 7);
  EXPECT_EQ(o.at("excluded_rows").to_number<int>(), 1);
  const boost::json::array& runs = o.at("runs").as_array();
  ASSERT_EQ(runs.size(), 6u);  // the b200 rows only
  int latest = 0;
  for (const auto& r : runs) {
    EXPECT_NE(std::string(r.at("name").as_string()).find("dgx-b200"), std::string::npos);
    EXPECT_FALSE(r.at("release").as_string().empty());
    latest += r.at("latest_release").as_bool() ? 1 : 0;
  }
  EXPECT_EQ(latest, 2);  // the 26.02 rows
  bool noted = false;
  for (const auto& n : o.at("notes").as_array()) {
    noted = noted || std::string(n.as_string()).find("rows of other GPUs ignored") !=
                         std::string::npos;
  }
  EXPECT_TRUE(noted) << boost::json::serialize(*v);
  const boost::json::object& groups = o.at("groups").as_object();
  for (const char* g : {"gpu", "precision recipe", "release", "gpu / dense-moe / release"}) {
    EXPECT_TRUE(groups.contains(g)) << g;
  }
  const boost::json::object& lo = o.at("leave_one_release_out").as_object();
  EXPECT_EQ(lo.at("releases").as_array().size(), 3u);
  EXPECT_EQ(lo.at("evaluated").to_number<int>(), 6);
  EXPECT_EQ(o.at("stack_drift").as_array().size(), 3u);
  EXPECT_EQ(o.at("excluded").at("by_feature").at("system DGX-H20").to_number<int>(), 1);
}

// The shipped file parses, every row keeps its release, the reserved
// source is listed, and every expressible run is predicted to fit in
// memory but the Llama 3 70B CPU-offloading rows at micro-batch 2 (see
// below): the memory model's open case (validate prints peak_memory_bytes
// per row). The
// Llama 3.1 405B rows on 256 GB200 (TP 4, PP 16, VP 4 / 8) fit since the
// recipes' bf16 gradients (grad_reduce_in_fp32 False), the embedding- /
// loss-aware pipeline split and GB200's CUDA-reported 189,471 MiB are
// modelled (they were 12-20 GB over 186 GB); the VP 8 ones are expressible
// only with that split.
TEST(ShippedRunsMemory, BlackwellRunsParseAndFit) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  const std::string path = std::string(LLMPLAN_DATA_DIR) + "/blackwell/published_runs.csv";
  Result<std::vector<PublishedRun>> runs = read_runs_file(path, "", *catalog);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_EQ(runs->size(), 165u);
  int expressible = 0, reserved = 0;
  std::set<std::string> not_fitting;
  for (const PublishedRun& r : *runs) {
    EXPECT_FALSE(r.release.empty()) << r.name;
    reserved += has(r.missing, "reserved source") ? 1 : 0;
    if (!r.missing.empty()) continue;
    ++expressible;
    Result<simulator::StepReport> rep =
        simulator::simulate(r.config.model, r.config.plan, r.config.cluster);
    ASSERT_TRUE(rep.ok()) << r.name << ": " << rep.status().message();
    if (!rep->fits_in_memory) not_fitting.insert(r.name);
  }
  EXPECT_EQ(reserved, 1);
  EXPECT_GE(expressible, 30);
  // The recipes' recompute modules (Plan::recompute_modules) make the
  // GPT-OSS 120B B200 EP 8 rows (layernorm, moe_act), the DeepSeek-V3 rows
  // (mla_up_proj) and the Nemotron 3 Super B200 TP 1 rows (core_attn,
  // layernorm, moe_act) fit; they were 3, 4-7 and 18 GB over without.
  // Every expressible row fits. The last six that did not, Llama 3 70B FP8
  // on 64 GB200 at micro-batch 2 with 40 of 80 layers offloaded to the CPU
  // (Plan::cpu_offload_layers), were 2.0 GB (26.02 on) and 6.1 GB (25.09 /
  // 25.11) over 198 GB; three Megatron mechanisms take 7-10 GB off them
  // (stage_memory): Megatron-FSDP's FP8 parameters (1-byte weight shard and
  // gathered layers, 2.9 GB with the allowance), the word embedding's
  // gradient not at the peak of one pipeline stage (2.2 GB), and, with
  // Transformer Engine's earlier offload handler, the layer in transit and
  // the logits not on the GPU at once (4.1 GB). They are 3.1 GB under.
  EXPECT_TRUE(not_fitting.empty());
  for (const std::string& n : not_fitting) ADD_FAILURE() << n;
  // The 405B rows at PP 16 x VP 8 (126 + 2 layers over 128 chunks) are
  // expressible: 2 per release of 26.02-26.06 on GB200.
  int vp8_405b = 0;
  for (const PublishedRun& r : *runs) {
    if (r.missing.empty() && r.name.rfind("llama3.1-405b_dgx-gb200_", 0) == 0 &&
        r.config.plan.virtual_stages == 8 && r.config.plan.pipeline_parallel == 16) {
      ++vp8_405b;
      EXPECT_TRUE(r.config.plan.account_for_embedding_in_pipeline_split) << r.name;
      EXPECT_FALSE(r.config.plan.grad_reduce_in_fp32) << r.name;
    }
  }
  EXPECT_GE(vp8_405b, 8);
}

// The Llama 3 70B / 3.1 405B Megatron-FSDP rows on GB200 (all FP8 current
// scaling) run the recipes' activation CPU offloading (40 / 92 layers):
// expressible, mapped to Plan::cpu_offload_layers; without the offloading
// the micro-batch 2 and 405B ones would not fit (70B at micro-batch 2 stores
// 3.9 GB per layer of 80), with it all do; the micro-batch 2 ones within 2 % of capacity, with either of
// Transformer Engine's offload handlers (BlackwellRunsParseAndFit).
TEST(ShippedRunsMemory, CpuOffloadingRowsFit) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  const std::string path = std::string(LLMPLAN_DATA_DIR) + "/blackwell/published_runs.csv";
  Result<std::vector<PublishedRun>> runs = read_runs_file(path, "", *catalog);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  int offloaded = 0, tight = 0, refactored = 0;
  for (const PublishedRun& r : *runs) {
    EXPECT_FALSE(has(r.missing, "activation CPU offloading")) << r.name;
    if (r.config.plan.cpu_offload_layers == 0) continue;
    ++offloaded;
    EXPECT_TRUE(r.missing.empty()) << r.name;
    const bool is_70b = r.name.rfind("llama3-70b_dgx-gb200_", 0) == 0;
    const bool is_405b = r.name.rfind("llama3.1-405b_dgx-gb200_", 0) == 0;
    EXPECT_TRUE(is_70b || is_405b) << r.name;
    EXPECT_EQ(r.config.plan.cpu_offload_layers, is_70b ? 40 : 92) << r.name;
    // Transformer Engine's refactored offload handler from 26.02 on (an
    // assumption, published_run.cc), the earlier one before.
    const bool before_26_02 = release_version(r.release) < std::vector<int>{26, 2};
    EXPECT_EQ(r.config.plan.cpu_offload_v1, before_26_02) << r.name;
    if (!r.config.plan.cpu_offload_v1) ++refactored;
    Result<simulator::StepReport> rep =
        simulator::simulate(r.config.model, r.config.plan, r.config.cluster);
    ASSERT_TRUE(rep.ok()) << r.name << ": " << rep.status().message();
    simulator::Plan no_offload = r.config.plan;
    no_offload.cpu_offload_layers = 0;
    Result<simulator::StepReport> without =
        simulator::simulate(r.config.model, no_offload, r.config.cluster);
    ASSERT_TRUE(without.ok());
    // Without it the micro-batch 2 and 405B layouts would not fit (the 70B
    // micro-batch 1 rows of NeMo 25.04 / 25.07, whose offloading is an
    // assumption of the mapping, would, by about 5 GB).
    if (is_405b || r.config.plan.micro_batch_size == 2) {
      EXPECT_FALSE(without->fits_in_memory) << r.name;
    }
    // Offloading takes (n - 1) layers' activations off the GPU.
    EXPECT_LT(rep->peak_memory_bytes, without->peak_memory_bytes - 50e9) << r.name;
    EXPECT_TRUE(rep->fits_in_memory) << r.name << " peak " << rep->peak_memory_bytes;
    if (is_70b && r.config.plan.micro_batch_size == 2) {
      // The tightest layout of the file: within 2 % of capacity.
      EXPECT_GT(rep->peak_memory_bytes, 0.98 * rep->memory_capacity_bytes) << r.name;
      EXPECT_TRUE(r.config.plan.fused_cross_entropy) << r.name;
      EXPECT_TRUE(r.config.plan.fp8_param_gather) << r.name;
      ++tight;
    }
  }
  EXPECT_EQ(offloaded, 10);
  EXPECT_EQ(tight, 6);
  // 26.02, 26.02.01, 26.04, 26.04.01 (70B) and the 405B rows of 26.02 on.
  EXPECT_GE(refactored, 4);
}

}  // namespace
}  // namespace llmplan::planner

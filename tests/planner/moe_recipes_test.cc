// The Megatron-Bridge MoE recipes' dispatcher and pipeline split
// (planner/accuracy/moe_recipes.h), on the two shipped runs files.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"

namespace llmplan::planner {
namespace {

std::vector<PublishedRun> runs(const std::string& file, const std::string& models = "") {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  EXPECT_TRUE(catalog.ok());
  Result<std::vector<PublishedRun>> r =
      read_runs_csv_file(std::string(LLMPLAN_DATA_DIR) + file, models, *catalog);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : std::vector<PublishedRun>{};
}

// H100: the Qwen3-30B-A3B rows with the V1 preset's layout (16 GPUs, EP 16;
// 26.04 onwards) run HybridEP, the older EP 8 layouts and every other MoE
// row the alltoall dispatcher; every Qwen3-235B-A22B row (PP 8 x VP 4 = 32
// chunks, 94 + 2 = 96 units) splits its pipeline counting the embedding
// and the loss, and no other row does.
TEST(MoeRecipes, H100RowsGetTheirRecipesDispatcherAndSplit) {
  int flex = 0, split = 0;
  for (const PublishedRun& run : runs("/h100/published_runs.csv")) {
    if (!run.missing.empty()) continue;
    const simulator::Plan& p = run.config.plan;
    const bool qwen30_v1 = run.model == "qwen3-30b-a3b" && p.expert_parallel == 16;
    EXPECT_EQ(p.moe_flex_dispatcher, qwen30_v1) << run.name;
    flex += p.moe_flex_dispatcher ? 1 : 0;
    if (run.model == "qwen3-235b-a22b") {
      EXPECT_TRUE(p.account_for_embedding_in_pipeline_split) << run.name;
      EXPECT_TRUE(p.account_for_loss_in_pipeline_split) << run.name;
      ++split;
    } else if (run.model.rfind("llama3.1-405b", 0) != 0) {
      EXPECT_FALSE(p.account_for_embedding_in_pipeline_split) << run.name;
    }
  }
  EXPECT_EQ(flex, 3);   // 26.04, 26.04.01, 26.06
  EXPECT_EQ(split, 5);  // every Qwen3-235B release
}

// Blackwell: Qwen3-30B-A3B on 8 GPUs at micro batch 4 and Qwen3-235B-A22B
// on GB200 run HybridEP (dropless rows only); Qwen3-235B-A22B on B200 keeps
// the alltoall dispatcher, and so do GPT-OSS and Mixtral; the dropless
// DeepSeek-V3 rows run HybridEP / DeepEP.
TEST(MoeRecipes, BlackwellRowsGetTheirRecipesDispatcher) {
  std::map<std::string, int> flex, alltoall;
  for (const PublishedRun& run : runs("/blackwell/published_runs.csv")) {
    if (!run.missing.empty() || !run.config.model.is_moe()) continue;
    const std::string gpu = run.config.cluster.gpu.name;
    if (gpu != "gb200" && gpu != "b200") continue;
    const simulator::Plan& p = run.config.plan;
    const std::string key = run.model + " " + gpu;
    (p.moe_flex_dispatcher ? flex : alltoall)[key]++;
    if (p.moe_flex_dispatcher) {
      EXPECT_DOUBLE_EQ(run.config.model.moe_capacity_factor, 0.0) << run.name;
      if (run.model == "qwen3-30b-a3b") {
        EXPECT_EQ(p.micro_batch_size, 4) << run.name;
      }
    }
  }
  EXPECT_GT(flex["qwen3-30b-a3b gb200"], 0);
  EXPECT_GT(flex["qwen3-30b-a3b b200"], 0);
  EXPECT_GT(flex["qwen3-235b-a22b gb200"], 0);
  EXPECT_EQ(flex["qwen3-235b-a22b b200"], 0);
  EXPECT_GT(alltoall["qwen3-235b-a22b b200"], 0);
  EXPECT_GT(flex["deepseek-v3 gb200"], 0);
  EXPECT_GT(flex["deepseek-v3 b200"], 0);
  for (const char* other : {"gpt-oss-120b", "mixtral-8x7b", "mixtral-8x22b"}) {
    EXPECT_EQ(flex[std::string(other) + " gb200"] + flex[std::string(other) + " b200"], 0)
        << other;
  }
}

// DeepSeek-V3 on Blackwell (Megatron-Bridge): every row over PP x VP = 16
// chunks has the recipe's layout "Et*4|(t*4|)*14tmL" (4 layers in the
// first chunk, 1 with the MTP block and the loss in the last); the MXFP8
// presets with the all-to-all overlap (GB200 PP 4 x VP 4 x EP 64, B200 PP 8
// x VP 2 x EP 32) have it from release 26.04.01 on, and no other row does.
TEST(MoeRecipes, DeepSeekV3RowsGetTheirLayoutAndOverlap) {
  int layout = 0, overlap = 0, older = 0;
  for (const PublishedRun& run : runs("/blackwell/published_runs.csv")) {
    if (!run.missing.empty() || run.model != "deepseek-v3") continue;
    const simulator::Plan& p = run.config.plan;
    if (p.pipeline_parallel * p.virtual_stages == 16) {
      EXPECT_EQ(p.pipeline_first_chunk_layers, 4) << run.name;
      EXPECT_EQ(p.pipeline_last_chunk_layers, 1) << run.name;
      ++layout;
    } else {
      EXPECT_EQ(p.pipeline_first_chunk_layers, -1) << run.name;
    }
    const std::vector<int> v = release_version(run.release);
    const bool recent = v >= std::vector<int>{26, 4, 1};
    const bool mxfp8 = p.precision == simulator::Precision::kFp8 &&
                       p.fp8_recipe == simulator::Fp8Recipe::kMxfp8;
    const bool preset = (p.pipeline_parallel == 4 && p.virtual_stages == 4 &&
                         p.expert_parallel == 64) ||
                        (p.pipeline_parallel == 8 && p.virtual_stages == 2 &&
                         p.expert_parallel == 32);
    EXPECT_EQ(p.moe_a2a_overlap, recent && mxfp8 && preset) << run.name;
    overlap += p.moe_a2a_overlap ? 1 : 0;
    older += !recent && mxfp8 && preset ? 1 : 0;
  }
  EXPECT_GE(layout, 14);
  EXPECT_GE(overlap, 5);  // GB200 26.04.01, 26.06, 26.06.01, 26.08; B200 26.04.01
  EXPECT_GE(older, 3);    // GB200 26.02, 26.02.01, 26.04
}

}  // namespace
}  // namespace llmplan::planner

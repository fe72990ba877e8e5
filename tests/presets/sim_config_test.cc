#include "presets/sim_config.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/presets/test_catalog.h"

namespace llmplan::presets {
namespace {

using fixtures::builtin;
using fixtures::contains;

constexpr const char* kPresetConfig = R"({
  "note": "Llama 2 7B on two DGX H100 nodes",
  "model": {"preset": "llama2-7b", "seq": 2048},
  "plan": {"tp": 2, "pp": 2, "dp": 4, "micro_batch": 1, "global_batch": 64,
           "recompute": "selective", "sequence_parallel": true},
  "cluster": {"preset": "dgx-h100", "nodes": 2, "price": "aws-p5-2024",
              "gpu": {"preset": "h100-sxm", "tdp_w": 600}}
})";

TEST(SimConfig, PresetsWithOverrides) {
  const Catalog catalog = builtin();
  Result<SimConfig> c = load_sim_config_text(kPresetConfig, "run.json", catalog);
  ASSERT_TRUE(c.ok()) << c.status().message();
  simulator::Model model = *catalog.model("llama2-7b");
  model.seq_length = 2048;
  EXPECT_EQ(c->model, model);
  EXPECT_EQ(c->plan.world_size(), 16);
  EXPECT_EQ(c->plan.recompute, simulator::Recompute::kSelective);
  EXPECT_TRUE(c->plan.sequence_parallel);
  EXPECT_EQ(c->cluster.num_nodes, 2);
  EXPECT_DOUBLE_EQ(c->cluster.usd_per_gpu_hour, 98.32 / 8);
  EXPECT_DOUBLE_EQ(c->cluster.gpu.tdp_w, 600);
  EXPECT_DOUBLE_EQ(c->cluster.nic_bytes_per_s, 50e9);
  ASSERT_EQ(c->notes.size(), 2u);
  EXPECT_EQ(c->notes[0], "model: preset llama2-7b, overriding seq");
  EXPECT_EQ(c->notes[1], "cluster: preset dgx-h100, overriding nodes, price, gpu");
}

TEST(SimConfig, RoundTripsThroughExplicitJson) {
  const Catalog catalog = builtin();
  Result<SimConfig> c = load_sim_config_text(kPresetConfig, "run.json", catalog);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string text = sim_config_to_json(*c);
  EXPECT_FALSE(contains(text, "preset"));
  Result<SimConfig> back = load_sim_config_text(text, "dump.json", catalog);
  ASSERT_TRUE(back.ok()) << back.status().message();
  simulator::Model resolved = c->model;  // the writer writes the widths used
  resolved.num_kv_heads = c->model.kv_heads();
  resolved.ffn_hidden_size = c->model.ffn_hidden();
  EXPECT_EQ(back->model, resolved);
  EXPECT_EQ(back->plan, c->plan);
  EXPECT_EQ(back->cluster, c->cluster);
  EXPECT_TRUE(back->notes.empty());
}

TEST(SimConfig, ErrorsNameTheFileAndPath) {
  const Catalog catalog = builtin();
  const std::string model = R"("model": {"preset": "gpt3-175b"})";
  const std::string plan = R"("plan": {"tp": 8, "pp": 8, "dp": 2, "global_batch": 64})";
  const std::string cluster = R"("cluster": {"preset": "dgx-a100-80gb"})";
  struct Case {
    std::string json;
    StatusCode code;
    std::string message;
  };
  const Case cases[] = {
      {"{\n  " + model + ",\n  " + plan + "\n  " + cluster + "}", StatusCode::kParseError,
       "run.json:4:"},
      {"{" + model + "," + plan + "}", StatusCode::kInvalidArgument,
       "run.json: cluster: missing required field"},
      {"{" + model + "," + plan + "," + cluster + R"(, "plans": {}})", StatusCode::kInvalidArgument,
       "run.json: unknown key \"plans\""},
      {R"({"model": {"preset": "gpt4"},)" + plan + "," + cluster + "}", StatusCode::kNotFound,
       "run.json: model.preset: unknown model preset \"gpt4\" (model presets: gpt3-175b"},
      {R"({"model": {"preset": "dgx-h100"},)" + plan + "," + cluster + "}", StatusCode::kNotFound,
       "run.json: model.preset: \"dgx-h100\" is a cluster preset"},
      {R"({"model": {"preset": 7},)" + plan + "," + cluster + "}", StatusCode::kInvalidArgument,
       "run.json: model.preset: expected a model preset name"},
      {R"({"model": {"preset": "gpt3-175b", "layers": -1},)" + plan + "," + cluster + "}",
       StatusCode::kInvalidArgument, "run.json: model.layers: must be >= 1, got -1"},
      {R"({"model": {"layers": 2, "hidden": 64, "heads": 4},)" + plan + "," + cluster + "}",
       StatusCode::kInvalidArgument, "run.json: model.seq: must be positive, got 0"},
      {"{" + model + R"(, "plan": {"preset": "fast"},)" + cluster + "}",
       StatusCode::kInvalidArgument, "run.json: plan.preset: plans have no presets"},
      {"{" + model + R"(, "plan": {"tp": "eight"},)" + cluster + "}", StatusCode::kInvalidArgument,
       "run.json: plan.tp: expected an integer, got a string"},
      {"{" + model + R"(, "plan": {"dp": 0},)" + cluster + "}", StatusCode::kInvalidArgument,
       "run.json: plan.dp: must be >= 1, got 0"},
      {"{" + model + R"(, "plan": {"tp": 5},)" + cluster + "}", StatusCode::kInvalidArgument,
       "run.json: plan.tp: tensor parallelism 5 does not divide 96 attention heads"},
      {"{" + model + R"(, "plan": {"dp": 2, "global_batch": 3},)" + cluster + "}",
       StatusCode::kInvalidArgument,
       "run.json: plan.global_batch: global batch 3 is not divisible"},
      {"{" + model + "," + plan + R"(, "cluster": {"preset": "dgx-a100-80gb", "nodes": 4}})",
       StatusCode::kInvalidArgument,
       "run.json: cluster.nodes: the plan needs tp * pp * dp = 128 GPUs but the cluster has 4 "
       "nodes x 8 = 32"},
      {"{" + model + "," + plan + R"(, "cluster": {"preset": "dgx-a100-80gb", "gpu": "a100"}})",
       StatusCode::kNotFound, "run.json: cluster.gpu: unknown gpu preset \"a100\""},
      {"{" + model + "," + plan + R"(, "cluster": {"preset": "dgx-a100-80gb", "nic": 1}})",
       StatusCode::kInvalidArgument, "run.json: cluster: unknown key \"nic\""},
      {"{" + model + "," + plan + R"(, "cluster": {"gpu": "a100-80gb"}})",
       StatusCode::kInvalidArgument, "run.json: cluster.nic_bytes_per_s: must be positive"},
  };
  for (const Case& c : cases) {
    Result<SimConfig> r = load_sim_config_text(c.json, "run.json", catalog);
    EXPECT_EQ(r.status().code(), c.code) << c.json << "\n" << r.status().message();
    EXPECT_TRUE(contains(r.status().message(), c.message)) << r.status().message();
  }
  // The same plan and model are fine on an unbounded cluster.
  EXPECT_TRUE(
      load_sim_config_text("{" + model + "," + plan + "," + cluster + "}", "run.json", catalog)
          .ok());
}

TEST(SimConfig, MissingFileIsNotFound) {
  Result<SimConfig> r = load_sim_config_file("/nonexistent/run.json", builtin());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(r.status().message(), "/nonexistent/run.json")) << r.status().message();
}

}  // namespace
}  // namespace llmplan::presets

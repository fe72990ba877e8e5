#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "presets/sim_config.h"
#include "tests/presets/test_catalog.h"

namespace llmplan::presets {
namespace {

using fixtures::builtin;
using fixtures::contains;

const std::string kVtrainDir = std::string(LLMPLAN_DATA_DIR) + "/vtrain";

bool has_note(const SimConfig& c, const std::string& text) {
  for (const std::string& n : c.notes) {
    if (contains(n, text)) return true;
  }
  return false;
}

// The MT-NLG 530B shape every vTrain example uses (README: config_example.json).
void expect_mtnlg(const SimConfig& c) {
  EXPECT_EQ(c.model.num_layers, 105);
  EXPECT_EQ(c.model.hidden_size, 20480);
  EXPECT_EQ(c.model.num_heads, 128);
  EXPECT_EQ(c.model.seq_length, 2048);
  EXPECT_EQ(c.model.vocab_size, 50257);
  EXPECT_EQ(c.model.positions, simulator::PositionEmbedding::kLearned);
  EXPECT_EQ(c.model.activation, simulator::Activation::kGelu);
  EXPECT_EQ(c.model.ffn_hidden(), 4 * 20480);
  EXPECT_EQ(c.plan.global_batch_size, 1920);
  EXPECT_EQ(c.plan.micro_batch_size, 1);
  EXPECT_EQ(c.plan.schedule, simulator::Schedule::kOneFOneB);
  EXPECT_EQ(c.plan.recompute, simulator::Recompute::kFull);
  EXPECT_EQ(c.plan.precision, simulator::Precision::kFp16);
  EXPECT_EQ(c.plan.grad_bucket_bytes, 0);
  EXPECT_FALSE(c.plan.overlap_grad_reduce);
  EXPECT_FALSE(c.plan.flash_attention);
  EXPECT_EQ(c.cluster.gpu.name, "a100-80gb");
  EXPECT_EQ(c.cluster.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(c.cluster.nic_bytes_per_s, 800e9 / 8 / 8);
  EXPECT_DOUBLE_EQ(c.cluster.gpu.nvlink_bytes_per_s, 2 * 150e9);
  EXPECT_DOUBLE_EQ(c.cluster.network.nvlink_efficiency, 1.0);
  EXPECT_TRUE(has_note(c, "trace_path"));
  EXPECT_TRUE(has_note(c, "only the 80 GB A100 holds"));
}

TEST(VtrainConfig, ExampleLoads) {
  Result<SimConfig> c = load_vtrain_config_file(kVtrainDir + "/config_example.json", builtin());
  ASSERT_TRUE(c.ok()) << c.status().message();
  expect_mtnlg(*c);
  EXPECT_EQ(c->plan.tensor_parallel, 8);
  EXPECT_EQ(c->plan.data_parallel, 12);
  EXPECT_EQ(c->plan.pipeline_parallel, 35);
  EXPECT_EQ(c->cluster.num_nodes, 3360 / 8);
}

// case_study_1 holds config_mtnlg_{t}_{d}_{p}.json for a sweep of plans, but
// every file says num_gpus = 3360 (the README's cluster): only the plans
// with t * d * p = 3360 are consistent. vTrain's own loader asserts
// num_gpus == t * d * p, and so does llmplan; the rest are rejected naming
// num_gpus.
TEST(VtrainConfig, CaseStudyPlansLoadOrAreRejectedForNumGpus) {
  const Catalog catalog = builtin();
  int loaded = 0, rejected = 0, files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kVtrainDir + "/case_study_1")) {
    const std::string name = entry.path().filename().string();
    ++files;
    Result<SimConfig> c = load_vtrain_config_file(entry.path().string(), catalog);
    int t = 0, d = 0, p = 0;
    if (std::sscanf(name.c_str(), "config_mtnlg_%d_%d_%d.json", &t, &d, &p) != 3) {
      // config_test_mtnlg.json: the example plan (8, 12, 35).
      ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
      expect_mtnlg(*c);
      ++loaded;
      continue;
    }
    if (t * d * p == 3360) {
      ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
      expect_mtnlg(*c);
      EXPECT_EQ(c->plan.tensor_parallel, t) << name;
      EXPECT_EQ(c->plan.data_parallel, d) << name;
      EXPECT_EQ(c->plan.pipeline_parallel, p) << name;
      EXPECT_EQ(c->cluster.num_nodes, 3360 / 8) << name;
      EXPECT_EQ(has_note(*c, "spans 2 nodes"), t == 16) << name;
      ++loaded;
    } else {
      EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << name;
      const std::string expected = name +
                                   ": num_gpus: 3360 is not tensor_parallel_size * "
                                   "data_parallel_size * pipeline_parallel_size = " +
                                   std::to_string(t) + " * " + std::to_string(d) + " * " +
                                   std::to_string(p) + " = " + std::to_string(t * d * p) +
                                   " (vTrain rejects this too)";
      EXPECT_TRUE(contains(c.status().message(), expected)) << c.status().message();
      ++rejected;
    }
  }
  EXPECT_EQ(files, 295);  // README: 294 plans + config_test_mtnlg.json
  EXPECT_EQ(loaded, 10);  // 9 consistent plans + config_test_mtnlg.json
  EXPECT_EQ(rejected, 285);
}

// With ignore_stale_num_gpus, the whole sweep loads as the plans its file
// names say, and the notes record the ignored num_gpus.
TEST(VtrainConfig, CaseStudyPlansLoadWhenStaleNumGpusIsIgnored) {
  const Catalog catalog = builtin();
  VtrainLoadOptions options;
  options.ignore_stale_num_gpus = true;
  int loaded = 0, ignored = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kVtrainDir + "/case_study_1")) {
    const std::string name = entry.path().filename().string();
    Result<SimConfig> c = load_vtrain_config_file(entry.path().string(), catalog, options);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
    expect_mtnlg(*c);
    int t = 0, d = 0, p = 0;
    if (std::sscanf(name.c_str(), "config_mtnlg_%d_%d_%d.json", &t, &d, &p) == 3) {
      EXPECT_EQ(c->plan.world_size(), t * d * p) << name;
      EXPECT_EQ(c->cluster.num_nodes, (t * d * p + 7) / 8) << name;
      EXPECT_EQ(has_note(*c, "num_gpus ignored: 3360 is not"), t * d * p != 3360) << name;
    }
    ignored += has_note(*c, "num_gpus ignored") ? 1 : 0;
    ++loaded;
  }
  EXPECT_EQ(loaded, 295);
  EXPECT_EQ(ignored, 285);
}

constexpr const char* kSmall = R"({
  "num_gpus": 16, "gpu_name": "A100",
  "tensor_parallel_size": 2, "data_parallel_size": 4, "pipeline_parallel_size": 2,
  "global_batch_size": 64, "micro_batch_size": 2,
  "num_layers": 24, "hidden_size": 2048, "num_attention_heads": 16, "max_length": 1024,
  "use_gradient_bucket": false, "use_checkpoint": false, "pipeline_scheduling": "1f1b",
  "inter_node_bandwidth": 800, "intra_node_bandwidth": 150, "node_size": 8
})";

// kSmall with `field` replaced by `value` (raw JSON), or removed when
// value is nullptr.
std::string small_with(const std::string& field, const char* value) {
  std::string s = kSmall;
  const std::string key = "\"" + field + "\": ";
  const size_t at = s.find(key);
  if (at == std::string::npos) return s;
  size_t end = s.find_first_of(",\n}", at + key.size());
  if (value == nullptr) {
    if (s[end] == ',') ++end;
    s.erase(at, end - at);
  } else {
    s.replace(at + key.size(), end - at - key.size(), value);
  }
  return s;
}

TEST(VtrainConfig, SmallConfigMapsEveryField) {
  Result<SimConfig> c = load_vtrain_config_text(kSmall, "cfg.json", builtin());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->model.num_layers, 24);
  EXPECT_EQ(c->model.seq_length, 1024);
  EXPECT_EQ(c->plan.world_size(), 16);
  EXPECT_EQ(c->plan.micro_batch_size, 2);
  EXPECT_EQ(c->plan.recompute, simulator::Recompute::kNone);
  EXPECT_EQ(c->cluster.num_nodes, 2);
  EXPECT_FALSE(has_note(*c, "trace_path"));
  EXPECT_TRUE(has_note(*c,
                       "absent fields take vTrain's defaults: model_arch=ShardedGptModel, "
                       "vocab_size=50257"));
}

TEST(VtrainConfig, GradientBucketsAndDerivedFields) {
  const Catalog catalog = builtin();
  Result<SimConfig> c =
      load_vtrain_config_text(small_with("use_gradient_bucket", "true"), "cfg.json", catalog);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->plan.grad_bucket_bytes, 25LL << 20);
  EXPECT_TRUE(c->plan.overlap_grad_reduce);

  std::string text = small_with("use_gradient_bucket", "true, \"ddp_bucket_size\": 50");
  c = load_vtrain_config_text(text, "cfg.json", catalog);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->plan.grad_bucket_bytes, 50LL << 20);

  // num_gpus absent: t * d * p; one size absent: derived from num_gpus.
  c = load_vtrain_config_text(small_with("num_gpus", nullptr), "cfg.json", catalog);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->plan.world_size(), 16);
  c = load_vtrain_config_text(small_with("data_parallel_size", "null"), "cfg.json", catalog);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->plan.data_parallel, 4);
  EXPECT_TRUE(has_note(*c, "data_parallel_size = num_gpus / (product of the other two) = 4"));

  // One stage: vTrain makes the micro batch the whole local batch.
  const std::string one_stage =
      R"({"tensor_parallel_size": 2, "data_parallel_size": 4, "pipeline_parallel_size": 1,
                  "global_batch_size": 64, "micro_batch_size": 2, "num_layers": 24,
                  "hidden_size": 2048, "num_attention_heads": 16, "max_length": 1024})";
  c = load_vtrain_config_text(one_stage, "cfg.json", catalog);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->plan.micro_batch_size, 16);
  EXPECT_TRUE(has_note(*c, "micro_batch_size = global_batch_size / data_parallel_size = 16"));
}

TEST(VtrainConfig, RejectionsNameTheFieldAndReason) {
  const Catalog catalog = builtin();
  struct Case {
    std::string json;
    StatusCode code;
    std::string message;
  };
  const Case cases[] = {
      {small_with("node_size", "8, \"flash\": true"), StatusCode::kInvalidArgument,
       "cfg.json: unknown key \"flash\""},
      {small_with("hidden_size", "\"big\""), StatusCode::kInvalidArgument,
       "cfg.json: hidden_size: expected an integer, got a string"},
      {small_with("num_layers", "0"), StatusCode::kInvalidArgument,
       "cfg.json: num_layers: must be >= 1, got 0"},
      {small_with("num_gpus", "32"), StatusCode::kInvalidArgument,
       "cfg.json: num_gpus: 32 is not tensor_parallel_size * data_parallel_size * "
       "pipeline_parallel_size = 2 * 4 * 2 = 16"},
      {small_with("micro_batch_size", nullptr), StatusCode::kInvalidArgument,
       "cfg.json: micro_batch_size: missing; vTrain has no default when pipeline_parallel_size > "
       "1"},
      {small_with("num_layers", "25"), StatusCode::kInvalidArgument,
       "cfg.json: num_layers: 25 layers are not divisible by pipeline_parallel_size 2"},
      {small_with("num_attention_heads", "15"), StatusCode::kInvalidArgument,
       "cfg.json: num_attention_heads: 15 heads do not divide hidden_size 2048"},
      {small_with("global_batch_size", "66"), StatusCode::kInvalidArgument,
       "cfg.json: global_batch_size: 66 is not divisible by data_parallel_size 4"},
      {small_with("pipeline_scheduling", "\"gpipe\""), StatusCode::kInvalidArgument,
       "cfg.json: pipeline_scheduling: \"gpipe\" is not supported"},
      {small_with("gpu_name", "\"V100\""), StatusCode::kInvalidArgument,
       "cfg.json: gpu_name: \"V100\" has no llmplan preset"},
      {small_with("gpu_name", "\"A100\", \"model_arch\": \"ShardedBertModel\""),
       StatusCode::kInvalidArgument, "cfg.json: model_arch: \"ShardedBertModel\" is not supported"},
      {small_with("inter_node_bandwidth", "0"), StatusCode::kInvalidArgument,
       "cfg.json: inter_node_bandwidth: must be >= 1e-09"},
      {small_with("use_checkpoint", "1"), StatusCode::kInvalidArgument,
       "cfg.json: use_checkpoint: expected true or false"},
      {"[1]", StatusCode::kInvalidArgument, "cfg.json: expected an object"},
      {"{\"num_gpus\": 8,,}", StatusCode::kParseError, "cfg.json:1:"},
  };
  for (const Case& c : cases) {
    Result<SimConfig> r = load_vtrain_config_text(c.json, "cfg.json", catalog);
    EXPECT_EQ(r.status().code(), c.code) << c.json << "\n" << r.status().message();
    EXPECT_TRUE(contains(r.status().message(), c.message)) << r.status().message();
  }
  Result<SimConfig> missing = load_vtrain_config_file(kVtrainDir + "/no_such.json", catalog);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace llmplan::presets

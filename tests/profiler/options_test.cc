#include "profiler/options.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace llmplan::profiler {
namespace {

Result<ProfileOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "llmplan-profile");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_profile_args(static_cast<int>(argv.size()), argv.data());
}

TEST(ProfileOptions, ModelsPairUpAndSweepsMultiply) {
  auto o = parse({"--hidden", "1024,2048", "--heads", "16,32", "--seq", "512", "--micro-batch",
                  "1,2", "--tp", "1,2,4", "--list"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(o->list_only);
  ASSERT_EQ(o->shapes.size(), 12u);  // 2 models x 1 seq x 2 micro batches x 3 tp
  EXPECT_EQ(o->shapes[0].hidden, 1024);
  EXPECT_EQ(o->shapes[0].heads, 16);
  EXPECT_EQ(o->shapes[11].hidden, 2048);
  EXPECT_EQ(o->shapes[11].heads, 32);
  EXPECT_EQ(o->shapes[11].micro_batch, 2);
  EXPECT_EQ(o->shapes[11].tp, 4);
  EXPECT_EQ(o->precisions, std::vector<simulator::Precision>{simulator::Precision::kBf16});
  EXPECT_EQ(o->output_path, "profile.json");
}

TEST(ProfileOptions, InvalidCombinationsAreSkippedAndReported) {
  auto o = parse({"--hidden", "1536", "--heads", "12", "--seq", "256", "--tp", "1,8"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  ASSERT_EQ(o->shapes.size(), 1u);
  ASSERT_EQ(o->skipped_shapes.size(), 1u);
  EXPECT_NE(o->skipped_shapes[0].find("t=8"), std::string::npos);
  auto none = parse({"--hidden", "1536", "--heads", "12", "--seq", "256", "--tp", "8"});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no valid layer shape"), std::string::npos);
}

TEST(ProfileOptions, BadFlagsAreOneLineErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{
           {{"--hidden", "1024,2048", "--heads", "16", "--seq", "512"}, "--heads"},
           {{"--hidden", "1024", "--heads", "16"}, "--seq"},
           {{"--hidden", "1024", "--heads", "16", "--seq", "512", "--ffn", "1,2"}, "--ffn"},
           {{"--hidden", "1024", "--heads", "16", "--seq", "512", "--precision", "fp4"}, "fp4"},
           {{"--hidden", "1024", "--heads", "16", "--seq", "512", "--bogus"}, "--bogus"},
           {{"--hidden", "1024", "--heads", "16", "--seq", "512", "--repeats", "0"}, "repeats"},
           {{"--shapes", "x.json", "--hidden", "1024"}, "either a shapes file or shape flags"},
       }) {
    auto o = parse(c.args);
    ASSERT_FALSE(o.ok()) << c.expect;
    EXPECT_NE(o.status().message().find(c.expect), std::string::npos) << o.status().message();
    EXPECT_EQ(o.status().message().find('\n'), std::string::npos) << o.status().message();
  }
}

TEST(ProfileOptions, PrecisionsHelpAndCollectiveFlags) {
  auto o =
      parse({"--hidden", "1024", "--heads", "16", "--seq", "512", "--precision", "fp16,bf16,fp16",
             "--no-collectives", "--collective-max-bytes", "1048576", "-o", "out.json"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->precisions, (std::vector<simulator::Precision>{simulator::Precision::kFp16,
                                                              simulator::Precision::kBf16}));
  EXPECT_FALSE(o->collectives);
  EXPECT_EQ(o->collective_max_bytes, 1048576);
  EXPECT_EQ(o->output_path, "out.json");
  auto help = parse({"--help"});
  ASSERT_TRUE(help.ok());
  EXPECT_TRUE(help->show_help);
  EXPECT_NE(help->help_text.find("--list"), std::string::npos);
}

TEST(ProfileOptions, Fp8IsAcceptedAndNeedsComputeCapability89) {
  auto o = parse({"--hidden", "1024", "--heads", "16", "--seq", "512", "--precision", "bf16,fp8"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->precisions, (std::vector<simulator::Precision>{simulator::Precision::kBf16,
                                                              simulator::Precision::kFp8}));
  simulator::ProfileGpu gpu;
  gpu.name = "NVIDIA A100-SXM4-80GB";
  gpu.compute_capability = "8.0";
  // bf16 alone runs anywhere; fp8 on an A100 is a one-line error naming it.
  EXPECT_TRUE(check_gpu_precisions({simulator::Precision::kBf16}, gpu, 0).ok());
  const Status a100 = check_gpu_precisions(o->precisions, gpu, 1);
  ASSERT_FALSE(a100.ok());
  EXPECT_NE(a100.message().find("--precision fp8"), std::string::npos) << a100.message();
  EXPECT_NE(a100.message().find("GPU 1 (NVIDIA A100-SXM4-80GB)"), std::string::npos);
  EXPECT_NE(a100.message().find("8.0"), std::string::npos);
  EXPECT_EQ(a100.message().find('\n'), std::string::npos);
  gpu.compute_capability = "8.6";  // Ampere consumer parts: no FP8 either
  EXPECT_FALSE(check_gpu_precisions(o->precisions, gpu, 0).ok());
  for (const char* cc : {"8.9", "9.0", "10.0", "12.0"}) {  // Ada, Hopper, Blackwell
    gpu.compute_capability = cc;
    EXPECT_TRUE(check_gpu_precisions(o->precisions, gpu, 0).ok()) << cc;
  }
  gpu.compute_capability = "";
  EXPECT_FALSE(check_gpu_precisions(o->precisions, gpu, 0).ok());
}

TEST(ProfileOptions, VersionNeedsNoShapesButRejectsUnknownFlags) {
  auto v = parse({"--version"});
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_TRUE(v->show_version);
  EXPECT_TRUE(v->shapes.empty());
  EXPECT_FALSE(parse({"--hidden", "1024", "--heads", "16", "--seq", "512"})->show_version);
  EXPECT_FALSE(parse({"--version", "--bogus"}).ok());
}

TEST(ProfileOptions, ReadsAndValidatesAShapesFile) {
  const std::string path = std::string(LLMPLAN_BINARY_DIR) + "/profiler_shapes_test.json";
  {
    std::ofstream out(path);
    out << R"({"shapes": [{"hidden": 2048, "heads": 16, "seq": 1024, "micro_batch": 1, "tp": 2},
                          {"hidden": 2048, "heads": 16, "seq": 1024, "micro_batch": 1, "tp": 3}]})";
  }
  auto o = parse({"--shapes", path});
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find(path + ": shapes[1]: shape.tp"), std::string::npos)
      << o.status().message();
  {
    std::ofstream out(path);
    out << R"({"shapes": [{"hidden": 2048, "heads": 16, "seq": 1024, "micro_batch": 1, "tp": 2}]})";
  }
  o = parse({"--shapes", path, "--list"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  ASSERT_EQ(o->shapes.size(), 1u);
  EXPECT_EQ(o->shapes[0].tp, 2);
}

TEST(ProfileOptions, MoeFlagsPairUpAndReplaceLayerShapes) {
  // clang-format off
  auto o = parse({"--moe", "--moe-hidden", "2048,7168", "--moe-experts", "128,256",
                  "--moe-top-k", "8", "--moe-expert-ffn", "768,2048",
                  "--moe-router", "softmax,sigmoid", "--moe-local-experts", "4,8",
                  "--moe-m", "64", "--moe-tokens", "4096", "--moe-max-rows", "1024", "--list"});
  // clang-format on
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(o->moe);
  EXPECT_TRUE(o->shapes.empty());
  const MoeSettings& s = o->moe_settings;
  ASSERT_EQ(s.models.size(), 2u);
  EXPECT_EQ(s.models[1], (MoeModel{7168, 256, 8, 2048, RouterScore::kSigmoid}));
  EXPECT_EQ(s.models[0].score, RouterScore::kSoftmax);
  EXPECT_EQ(s.local_experts, (std::vector<int>{4, 8}));
  EXPECT_EQ(s.m_sweep, std::vector<int>{64});
  EXPECT_EQ(s.tokens, std::vector<int>{4096});
  EXPECT_EQ(s.max_rows, 1024);
  EXPECT_NE(o->command_line.find("--moe-hidden 2048,7168"), std::string::npos);
  auto d = parse({"--moe", "--moe-hidden", "4096", "--moe-experts", "8", "--moe-top-k", "2",
                  "--moe-expert-ffn", "14336"});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->moe_settings.local_experts, MoeSettings{}.local_experts);
  EXPECT_EQ(d->moe_settings.tokens, MoeSettings{}.tokens);
}

TEST(ProfileOptions, BadMoeFlagsAreOneLineErrors) {
  // clang-format off
  const std::vector<std::string> model = {"--moe-hidden", "2048", "--moe-experts", "128",
                                          "--moe-top-k", "8", "--moe-expert-ffn", "768"};
  // clang-format on
  auto with = [&](std::vector<std::string> extra, bool moe = true) {
    std::vector<std::string> args = model;
    if (moe) args.insert(args.begin(), "--moe");
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{
           {with({}, false), "--moe-* flags need --moe"},
           {{"--moe"}, "--moe-hidden"},
           {{"--moe", "--moe-hidden", "2048", "--moe-top-k", "8", "--moe-expert-ffn", "768"},
            "--moe-experts"},
           {with({"--hidden", "1024", "--heads", "16", "--seq", "512"}), "either the MoE flags"},
           {with({"--moe-experts", "64"}), "--moe-experts"},
           {with({"--moe-router", "relu"}), "relu"},
           {with({"--moe-router", "softmax,sigmoid"}), "--moe-router"},
           {with({"--moe-local-experts", "0"}), "--moe-local-experts"},
           {with({"--moe-max-rows", "-4"}), "--moe-max-rows"},
           {with({"--precision", "fp8"}), "bf16 only"},
           {{"--moe", "--moe-hidden", "2048", "--moe-experts", "8", "--moe-top-k", "16",
             "--moe-expert-ffn", "768"},
            "--moe-top-k"},
       }) {
    auto o = parse(c.args);
    ASSERT_FALSE(o.ok()) << c.expect;
    EXPECT_NE(o.status().message().find(c.expect), std::string::npos) << o.status().message();
    EXPECT_EQ(o.status().message().find('\n'), std::string::npos) << o.status().message();
  }
}

}  // namespace
}  // namespace llmplan::profiler

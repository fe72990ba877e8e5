#include "simulator/profile_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include "simulator/profile_table_json.h"

namespace llmplan::simulator {
namespace {

// Answers every lookup with a constant no measurement produces, so a test
// can tell which source answered.
class ConstantModel : public CostModel {
 public:
  double kernel_time_s(const KernelDesc&) const override { return 1.0; }
  double collective_time_s(const CollectiveDesc&) const override { return 2.0; }
  double microbatch_overhead_s() const override { return 0.5; }
  double iteration_overhead_s() const override { return 0.25; }
  std::string describe() const override { return "constant"; }
};

std::shared_ptr<const CostModel> constant() { return std::make_shared<ConstantModel>(); }

// fc1 forward measured at m = 1024 (100 TFLOP/s) and m = 4096 (200 TFLOP/s)
// with n = k = 4096, plus a far shape (n = 512) at 10 TFLOP/s; layernorm
// forward at 1 MB (1 TB/s) and 100 MB (2 TB/s); Adam; an 8-GPU all-reduce.
std::string profile_json(const std::string& extra_kernel = "", const std::string& extra_top = "") {
  auto gemm_time = [](double m, double n, double k, double tflops) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", 2 * m * n * k / (tflops * 1e12));
    return std::string(buf);
  };
  return R"({
  "format": "llmplan-profile", "format_version": 1,
  "llmplan_version": "0.1.0", "date": "2025-01-01T00:00:00Z", "host": "node1",
  "gpu": {"name": "Test GPU", "count": 8, "compute_capability": "9.0", "sm_count": 132,
          "memory_bytes": 80000000000, "sm_clock_mhz": 1980, "memory_clock_mhz": 2619,
          "memory_bus_width_bits": 5120},
  "software": {"driver": "13.0", "cuda_runtime": "13.0", "cublas": "13.0.0", "nccl": "2.28.9",
               "cupti": "api 28"},
  "timing": {"method": "cupti_activity", "warmup": 5, "repeats": 20, "statistic": "median"},
  "shapes": [{"hidden": 4096, "heads": 32, "seq": 1024, "micro_batch": 1, "tp": 1}],
  "kernels": [
    {"kind": "fc1_gemm", "pass": "fwd", "precision": "bf16", "m": 1024, "n": 4096, "k": 4096,
     "batch": 1, "time_s": )" +
         gemm_time(1024, 4096, 4096, 100) + R"(},
    {"kind": "fc1_gemm", "pass": "fwd", "precision": "bf16", "m": 4096, "n": 4096, "k": 4096,
     "time_s": )" +
         gemm_time(4096, 4096, 4096, 200) + R"(, "kernels": ["sm90_gemm"], "repeats": 20},
    {"kind": "fc1_gemm", "pass": "fwd", "precision": "bf16", "m": 2048, "n": 512, "k": 4096,
     "time_s": )" +
         gemm_time(2048, 512, 4096, 10) + R"(},
    {"kind": "layernorm", "pass": "fwd", "precision": "bf16", "bytes": 1000000, "time_s": 1e-6},
    {"kind": "layernorm", "pass": "fwd", "precision": "bf16", "bytes": 100000000,
     "time_s": 5e-5, "elements": 25000000},
    {"kind": "optimizer_step", "pass": "fwd", "precision": "bf16", "bytes": 3000000,
     "time_s": 2e-6})" +
         extra_kernel + R"(
  ],
  "collectives": [
    {"kind": "all_reduce", "group_size": 8, "ranks_per_node": 8, "dtype": "float32",
     "points": [[1024, 1e-5], [2048, 2e-5]]}
  ],
  "notes": ["flash_attention not measured"])" +
         extra_top + R"(
})";
}

std::shared_ptr<const ProfileTable> load(const std::string& text) {
  auto r = parse_profile_table(text, "p.json", constant());
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : nullptr;
}

KernelDesc gemm(KernelKind kind, Pass pass, int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  KernelDesc d;
  d.kind = kind;
  d.pass = pass;
  d.gemm = {m, n, k, batch};
  d.flops = 2.0 * m * n * k * batch;
  return d;
}

KernelDesc memory(KernelKind kind, Pass pass, double bytes) {
  KernelDesc d;
  d.kind = kind;
  d.pass = pass;
  d.bytes = bytes;
  return d;
}

double work(int64_t m, int64_t n, int64_t k) { return 2.0 * m * n * k; }

std::string error_of(const std::string& text) {
  auto r = parse_profile_table(text, "p.json", constant());
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(ProfileTable, LoadsAValidProfile) {
  auto t = load(profile_json());
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->profile().gpu.name, "Test GPU");
  EXPECT_EQ(t->profile().kernels.size(), 6u);
  EXPECT_EQ(t->profile().kernels[1].kernel_names, std::vector<std::string>{"sm90_gemm"});
  EXPECT_EQ(t->profile().shapes.at(0).hidden, 4096);
  EXPECT_EQ(t->describe(), "profile p.json (Test GPU), fallback constant");
  EXPECT_EQ(t->fallback_counts().total(), 0);
}

TEST(ProfileTable, MalformedJsonNamesLineAndColumn) {
  auto r = parse_profile_table("{\n  \"format\": \n}", "p.json", constant());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kParseError);
  EXPECT_NE(r.status().message().find("p.json:3:"), std::string::npos) << r.status().message();
}

TEST(ProfileTable, UnknownKeysAreErrorsWithTheirPath) {
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "layernorm", "pass": "bwd", "precision": "bf16", "bytes": 10, "time_s": 1,
     "tim_s": 1})"))
                .find("p.json: kernels[6]: unknown key \"tim_s\""),
            std::string::npos);
  EXPECT_NE(error_of(profile_json("", R"(, "extra": 1)")).find("unknown key \"extra\""),
            std::string::npos);
  std::string t = profile_json();
  t.replace(t.find("\"sm_count\""), 10, "\"sm_cnt\"");
  EXPECT_NE(error_of(t).find("p.json: gpu: unknown key \"sm_cnt\""), std::string::npos);
}

TEST(ProfileTable, MissingAndBadFieldsNameTheField) {
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "layernorm", "pass": "bwd", "precision": "bf16", "bytes": 10})"))
                .find("kernels[6].time_s: missing required field"),
            std::string::npos);
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "fc2_gemm", "pass": "fwd", "precision": "bf16", "m": 1, "n": 2, "time_s": 1})"))
                .find("kernels[6].k: missing required field"),
            std::string::npos);
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "softmax", "pass": "fwd", "precision": "bf16", "m": 1, "bytes": 8, "time_s": 1})"))
                .find("kernels[6].m: only GEMM"),
            std::string::npos);
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "softmax", "pass": "sideways", "precision": "bf16", "bytes": 8, "time_s": 1})"))
                .find("kernels[6].pass: unknown value \"sideways\""),
            std::string::npos);
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "softmax", "pass": "fwd", "precision": "bf16", "bytes": 8, "time_s": 0})"))
                .find("kernels[6].time_s: must be > 0"),
            std::string::npos);
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "layernorm", "pass": "fwd", "precision": "bf16", "bytes": 1000000, "time_s": 1})"))
                .find("kernels[6]: duplicate"),
            std::string::npos);
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "optimizer_step", "pass": "bwd", "precision": "bf16", "bytes": 8, "time_s": 1})"))
                .find("kernels[6].pass: optimizer_step entries use \"fwd\""),
            std::string::npos);
  std::string t = profile_json();
  t.replace(t.find("[2048, 2e-5]"), 12, "[512, 2e-5]");
  EXPECT_NE(error_of(t).find("collectives[0].points[1]: bytes must be strictly increasing"),
            std::string::npos);
  t = profile_json();
  t.replace(t.find("\"format_version\": 1"), 19, "\"format_version\": 2");
  EXPECT_NE(error_of(t).find("format_version: unsupported version 2"), std::string::npos);
  t = profile_json();
  t.replace(t.find("\"kernels\""), 9, "\"kernelz\"");
  EXPECT_NE(error_of(t).find("kernels: missing required field"), std::string::npos);
}

TEST(ProfileTable, ExactShapeReturnsTheMeasurement) {
  auto t = load(profile_json());
  EXPECT_DOUBLE_EQ(t->kernel_time_s(gemm(KernelKind::kFc1Gemm, Pass::kForward, 1024, 4096, 4096)),
                   work(1024, 4096, 4096) / 100e12);
  EXPECT_DOUBLE_EQ(t->kernel_time_s(memory(KernelKind::kLayerNorm, Pass::kForward, 1e8)), 5e-5);
}

TEST(ProfileTable, InterpolatesGemmThroughputInLogWork) {
  auto t = load(profile_json());
  // m = 2048 lies halfway (in log work) between m = 1024 and m = 4096: 150
  // TFLOP/s. The far n = 512 shape (10 TFLOP/s) is not a neighbour.
  const double w = work(2048, 4096, 4096);
  EXPECT_NEAR(t->kernel_time_s(gemm(KernelKind::kFc1Gemm, Pass::kForward, 2048, 4096, 4096)),
              w / 150e12, 1e-12 * w / 150e12 + 1e-18);
  // A quarter of the way: m = 1448 ~ 1024 * 2^0.5 -> 100 + 100 * log(1448/1024)/log(4).
  const double w2 = work(1448, 4096, 4096);
  const double tput = 100e12 + 100e12 * std::log(1448.0 / 1024) / std::log(4.0);
  EXPECT_NEAR(t->kernel_time_s(gemm(KernelKind::kFc1Gemm, Pass::kForward, 1448, 4096, 4096)),
              w2 / tput, 1e-9 * w2 / tput);
  EXPECT_EQ(t->fallback_counts().total(), 0);
}

TEST(ProfileTable, ClampsGemmThroughputOutsideTheMeasuredRange) {
  auto t = load(profile_json());
  // Bigger than anything measured: 200 TFLOP/s, not extrapolated upwards.
  EXPECT_DOUBLE_EQ(t->kernel_time_s(gemm(KernelKind::kFc1Gemm, Pass::kForward, 65536, 4096, 4096)),
                   work(65536, 4096, 4096) / 200e12);
  // Less work than every entry: the throughput of the nearest shape above it
  // (m = 1024, log-distance 3; the n = 512 shape is at distance 5).
  const double w = work(128, 4096, 4096);
  const double got = t->kernel_time_s(gemm(KernelKind::kFc1Gemm, Pass::kForward, 128, 4096, 4096));
  EXPECT_DOUBLE_EQ(got, w / 100e12);
}

TEST(ProfileTable, InterpolatesMemoryBandwidthInLogBytes) {
  auto t = load(profile_json());
  // 1e7 bytes: halfway in log(bytes) between 1 TB/s and 2 TB/s.
  EXPECT_NEAR(t->kernel_time_s(memory(KernelKind::kLayerNorm, Pass::kForward, 1e7)), 1e7 / 1.5e12,
              1e-20);
  // Outside: the nearest end's bandwidth.
  EXPECT_DOUBLE_EQ(t->kernel_time_s(memory(KernelKind::kLayerNorm, Pass::kForward, 1e9)),
                   1e9 / 2e12);
  EXPECT_DOUBLE_EQ(t->kernel_time_s(memory(KernelKind::kLayerNorm, Pass::kForward, 1e5)),
                   1e5 / 1e12);
  // The optimizer step has no backward; any pass finds the fwd entry.
  EXPECT_DOUBLE_EQ(t->kernel_time_s(memory(KernelKind::kOptimizerStep, Pass::kBackward, 3e6)),
                   2e-6);
}

TEST(ProfileTable, Fp8GemmsAndCastTransposesHaveTheirOwnKeys) {
  // fc1 forward in FP8 at 4096^3 (800 TFLOP/s) beside the bf16 entry (200),
  // and the FP8 cast-transpose forward at 4 MB.
  const double fp8_s = work(4096, 4096, 4096) / 800e12;
  char extra[512];
  std::snprintf(extra, sizeof extra,
                R"(,
    {"kind": "fc1_gemm", "pass": "fwd", "precision": "fp8", "m": 4096, "n": 4096, "k": 4096,
     "time_s": %.17g},
    {"kind": "fp8_cast_transpose", "pass": "fwd", "precision": "fp8", "bytes": 4000000,
     "time_s": 2e-6, "elements": 1000000})",
                fp8_s);
  auto t = load(profile_json(extra));
  ASSERT_NE(t, nullptr);
  KernelDesc g = gemm(KernelKind::kFc1Gemm, Pass::kForward, 4096, 4096, 4096);
  EXPECT_NEAR(t->kernel_time_s(g), work(4096, 4096, 4096) / 200e12, 1e-12);  // bf16
  g.precision = Precision::kFp8;
  EXPECT_DOUBLE_EQ(t->kernel_time_s(g), fp8_s);
  KernelDesc cast = memory(KernelKind::kFp8CastTranspose, Pass::kForward, 4e6);
  EXPECT_EQ(t->kernel_time_s(cast), 1.0);  // bf16 has no cast entries: fallback
  cast.precision = Precision::kFp8;
  EXPECT_DOUBLE_EQ(t->kernel_time_s(cast), 2e-6);
  cast.pass = Pass::kBackward;
  EXPECT_EQ(t->kernel_time_s(cast), 1.0);  // not measured
  EXPECT_EQ(t->fallback_counts().kernels[static_cast<size_t>(KernelKind::kFp8CastTranspose)], 2);
  // Written back with the same names.
  const std::string text = profile_to_json(t->profile());
  EXPECT_NE(text.find("\"fp8_cast_transpose\""), std::string::npos);
  EXPECT_NE(text.find("\"fp8\""), std::string::npos);
  Result<Profile> again = parse_profile(text, "again.json");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, t->profile());
  // Casts have fwd and bwd only; unknown precisions list fp8 among the values.
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "fp8_cast_transpose", "pass": "bwd_data", "precision": "fp8", "bytes": 4,
     "time_s": 1e-6})"))
                .find("fp8_cast_transpose entries use"),
            std::string::npos);
  EXPECT_NE(error_of(profile_json(R"(,
    {"kind": "layernorm", "pass": "fwd", "precision": "fp4", "bytes": 4, "time_s": 1e-6})"))
                .find("bf16, fp16, fp8"),
            std::string::npos);
}

TEST(ProfileTable, FallsBackAndCountsWhatIsNotMeasured) {
  auto t = load(profile_json());
  // No bwd_data entries for fc1, no fc2 at all, no fp16, no flash attention.
  EXPECT_EQ(t->kernel_time_s(gemm(KernelKind::kFc1Gemm, Pass::kBackwardData, 1024, 4096, 4096)),
            1.0);
  EXPECT_EQ(t->kernel_time_s(gemm(KernelKind::kFc2Gemm, Pass::kForward, 1024, 4096, 4096)), 1.0);
  KernelDesc fp16 = gemm(KernelKind::kFc1Gemm, Pass::kForward, 1024, 4096, 4096);
  fp16.precision = Precision::kFp16;
  EXPECT_EQ(t->kernel_time_s(fp16), 1.0);
  EXPECT_EQ(
      t->kernel_time_s(gemm(KernelKind::kFlashAttention, Pass::kForward, 2048, 2048, 128, 32)),
      1.0);
  // A memory-bound lookup without bytes cannot be answered from the table.
  EXPECT_EQ(t->kernel_time_s(memory(KernelKind::kLayerNorm, Pass::kForward, 0)), 1.0);
  const ProfileFallbacks f = t->fallback_counts();
  EXPECT_EQ(f.kernels[static_cast<size_t>(KernelKind::kFc1Gemm)], 2);
  EXPECT_EQ(f.kernels[static_cast<size_t>(KernelKind::kFc2Gemm)], 1);
  EXPECT_EQ(f.kernels[static_cast<size_t>(KernelKind::kFlashAttention)], 1);
  EXPECT_EQ(f.kernels[static_cast<size_t>(KernelKind::kLayerNorm)], 1);
  EXPECT_EQ(f.total(), 5);
}

TEST(ProfileTable, CollectivesUseCurvesInsideANodeOnly) {
  auto t = load(profile_json());
  EXPECT_DOUBLE_EQ(t->collective_time_s({CollectiveKind::kAllReduce, 1536, {8, 8}}), 1.5e-5);
  // ranks_per_node beyond the group size is still one node.
  EXPECT_DOUBLE_EQ(t->collective_time_s({CollectiveKind::kAllReduce, 4096, {8, 16}}), 4e-5);
  EXPECT_EQ(t->fallback_counts().total(), 0);
  // Spanning two nodes, another group size, another kind: fallback.
  EXPECT_EQ(t->collective_time_s({CollectiveKind::kAllReduce, 1536, {16, 8}}), 2.0);
  EXPECT_EQ(t->collective_time_s({CollectiveKind::kAllReduce, 1536, {4, 4}}), 2.0);
  EXPECT_EQ(t->collective_time_s({CollectiveKind::kAllGather, 1536, {8, 8}}), 2.0);
  // One rank: nothing to communicate.
  EXPECT_EQ(t->collective_time_s({CollectiveKind::kAllReduce, 1536, {1, 1}}), 0.0);
  const ProfileFallbacks f = t->fallback_counts();
  EXPECT_EQ(f.collectives[static_cast<size_t>(CollectiveKind::kAllReduce)], 2);
  EXPECT_EQ(f.collectives[static_cast<size_t>(CollectiveKind::kAllGather)], 1);
  EXPECT_EQ(f.total(), 3);
}

TEST(ProfileTable, OverheadsFromTheProfileElseTheFallback) {
  auto without = load(profile_json());
  EXPECT_EQ(without->microbatch_overhead_s(), 0.5);
  EXPECT_EQ(without->iteration_overhead_s(), 0.25);
  auto with = load(profile_json("", R"(, "overheads": {"microbatch_s": 0.001})"));
  EXPECT_EQ(with->microbatch_overhead_s(), 0.001);
  EXPECT_EQ(with->iteration_overhead_s(), 0.25);
}

TEST(ProfileTable, FallbackCountsAreExactAcrossThreads) {
  auto t = load(profile_json());
  const KernelDesc missing = gemm(KernelKind::kFc2Gemm, Pass::kForward, 1024, 4096, 4096);
  const KernelDesc present = gemm(KernelKind::kFc1Gemm, Pass::kForward, 2048, 4096, 4096);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 1000; ++j) {
        t->kernel_time_s(missing);
        t->kernel_time_s(present);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(t->fallback_counts().kernels[static_cast<size_t>(KernelKind::kFc2Gemm)], 8000);
  EXPECT_EQ(t->fallback_counts().total(), 8000);
}

TEST(ProfileTable, WriteThenReadGivesTheSameProfile) {
  Result<Profile> p =
      parse_profile(profile_json("", R"(, "overheads": {"iteration_s": 0.02})"), "p.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  const std::string text = profile_to_json(*p);
  Result<Profile> again = parse_profile(text, "again.json");
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << text;
  EXPECT_EQ(*again, *p);
  EXPECT_EQ(profile_to_json(*again), text);
}

TEST(ProfileTable, LoadsFromAFileAndRejectsANullFallback) {
  const std::string path = std::string(LLMPLAN_BINARY_DIR) + "/profile_table_test.json";
  {
    std::ofstream out(path);
    out << profile_json();
  }
  auto r = load_profile_table(path, constant());
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::shared_ptr<const CostModel> model = *r;  // usable as a plain CostModel
  EXPECT_EQ(model->describe(), "profile " + path + " (Test GPU), fallback constant");
  auto missing = load_profile_table(path + ".absent", constant());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto null = load_profile_table(path, nullptr);
  ASSERT_FALSE(null.ok());
  EXPECT_NE(null.status().message().find("no fallback"), std::string::npos);
}

// The profile measured on an H100 (data/profiles/README.md) stays loadable,
// and its GEMMs stay physically plausible: below the 989 TFLOP/s dense bf16
// peak, above a third of it for a large square-ish GEMM.
TEST(ProfileTable, LoadsTheCommittedH100Profile) {
  const std::string path = std::string(LLMPLAN_DATA_DIR) + "/profiles/h100-sxm-2026-11-22.json";
  auto r = load_profile_table(path, constant());
  ASSERT_TRUE(r.ok()) << r.status().message();
  KernelDesc fc1;
  fc1.kind = KernelKind::kFc1Gemm;
  fc1.pass = Pass::kForward;
  fc1.gemm = {2048, 16384, 4096, 1};  // b*s = 2048, h = 4096, f = 4h, t = 1
  fc1.flops = 2.0 * 2048 * 16384 * 4096;
  const double t = (*r)->kernel_time_s(fc1);
  ASSERT_NE(t, 1.0) << "answered by the fallback, not the profile";
  const double tflops = fc1.flops / t / 1e12;
  EXPECT_LT(tflops, 989.0);
  EXPECT_GT(tflops, 330.0);
}

TEST(ProfileShapes, ReadsAShapesDocument) {
  auto r = parse_profile_shapes(R"({"note": "GPT-3 2.7B, t=1,2",
    "shapes": [{"hidden": 2560, "heads": 32, "seq": 2048, "micro_batch": 1, "tp": 1},
               {"hidden": 2560, "heads": 32, "seq": 2048, "micro_batch": 1, "tp": 2,
                "activation": "swiglu", "ffn": 6912, "vocab": 32000, "kv_heads": 8}]})",
                                "s.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].activation, Activation::kSwiglu);
  EXPECT_EQ((*r)[1].kv_heads, 8);
  auto empty = parse_profile_shapes(R"({"shapes": []})", "s.json");
  EXPECT_FALSE(empty.ok());
  auto bad = parse_profile_shapes(
      R"({"shapes": [{"hidden": 2560, "heads": 32, "seq": 2048, "micro_batch": 1}]})", "s.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("s.json: shapes[0].tp: missing required field"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace llmplan::simulator

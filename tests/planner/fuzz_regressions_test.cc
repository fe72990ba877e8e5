// Inputs the fuzz targets (tests/fuzz) found, each fixed in its reader and
// kept here, inline, so that the ordinary suite keeps them fixed. One test
// per finding, named after the target that found it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "presets/catalog.h"
#include "presets/sim_config.h"
#include "scaling/law.h"
#include "simulator/collective_curve.h"
#include "simulator/profile_table_json.h"
#include "base/status.h"
#include "base/strict_json.h"

namespace llmplan {
namespace {

bool one_line(const std::string& m) {
  return !m.empty() && m.find_first_of("\r\n") == std::string::npos;
}

// A small simulate config on a hand-written cluster; `gpu_fields` completes
// its GPU (peak_fp16_flops, optionally tdp_w).
std::string lab_config(const std::string& gpu_fields) {
  return R"({
    "model": {"layers": 4, "hidden": 512, "heads": 8, "seq": 1024, "vocab": 32000},
    "plan": {"tp": 2, "pp": 2, "dp": 2, "micro_batch": 2, "global_batch": 32},
    "cluster": {"name": "lab", "gpus_per_node": 4, "nic_bytes_per_s": 2.5e10,
                "gpu": {"peak_bf16_flops": 3.12e14, "hbm_bytes": 8e10, "hbm_bytes_per_s": 2.0e12,
                        "nvlink_bytes_per_s": 6e11, "num_sms": 108, )" +
         gpu_fields + "}}}";
}

// fuzz_law: a key holding an escaped carriage return ("des:\ription" after a
// mutation) was echoed into "unknown key ..." and broke the one-line error.
// Now every JSON reader refuses control characters in keys and strings.
TEST(FuzzRegressions, LawKeyWithControlCharacter) {
  const std::string text =
      "{\"name\": \"chinchilla\", \"des:\\ription\": \"x\", \"E\": 1.69, \"A\": 406.4, "
      "\"B\": 410.7, \"alpha\": 0.34, \"beta\": 0.28}";
  Result<scaling::LossLaw> law = scaling::parse_law_text(text, "law.json");
  ASSERT_FALSE(law.ok());
  EXPECT_EQ(law.status().message(),
            "law.json: key \"des:\\ription\" holds a control character (U+000D)");
  EXPECT_TRUE(one_line(law.status().message()));
  // In a string value too, naming its path.
  law = scaling::parse_law_text("{\"name\": \"a\\nb\"}", "law.json");
  EXPECT_EQ(law.status().message(), "law.json: name: a string holds a control character (U+000A)");
}

// fuzz_nccl_tests: a carriage return inside a row (not at its end) was
// echoed into "bad size ..." and broke the one-line error.
TEST(FuzzRegressions, NcclTestsRowWithCarriageReturn) {
  const std::string text =
      "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n"
      "104gggg\rgggg8576,262134,float,92000,19.8,92500,19.9\n";
  Result<simulator::CollectiveCurve> curve = simulator::parse_nccl_tests_text(text, "lut");
  ASSERT_FALSE(curve.ok());
  EXPECT_EQ(curve.status().message(), "lut:2: control character in the line");
  // Long cells are cut short in messages.
  curve = simulator::parse_nccl_tests_text(
      "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n" + std::string(100, 'g') +
          ",1,float,1,1,1,1\n",
      "lut");
  EXPECT_EQ(curve.status().message(), "lut:2: bad size \"" + std::string(40, 'g') + "...\"");
}

// fuzz_nccl_tests: sizes of 1.03e208 and 1.04e308 bytes were read, and the
// curve extrapolated to three times the largest size gave an infinite time.
// Sizes above 2^64 bytes (and times above 1e6 s) are now refused.
TEST(FuzzRegressions, NcclTestsSizeBeyondSixtyFourBits) {
  const std::string header = "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n";
  Result<simulator::CollectiveCurve> curve = simulator::parse_nccl_tests_text(
      header + "103E206,262144,float,9200091.,8,92500,19.9\n", "lut");
  ASSERT_FALSE(curve.ok());
  EXPECT_EQ(curve.status().message(), "lut:2: size \"103E206\" above 2^64 bytes");
  curve = simulator::parse_nccl_tests_text(header + "1048576,262144,float,2e15,8,2e15,8\n", "lut");
  ASSERT_FALSE(curve.ok());
  EXPECT_EQ(curve.status().message(), "lut:2: time out of range");
  curve = simulator::parse_nccl_tests_text(header + "1.8e19,262144,float,9200,8,9250,8\n", "lut");
  ASSERT_TRUE(curve.ok()) << curve.status().message();
  EXPECT_TRUE(std::isfinite(curve->time_s(3 * curve->bytes.back())));
  simulator::CollectiveCurve big;
  big.bytes = {1e20};
  big.seconds = {1.0};
  EXPECT_FALSE(simulator::validate(big).ok());
}

// fuzz_sim_config: a config with "peak_fp16_flops": 3.12e41 did not read
// back equal from sim_config_to_json. Boost.JSON 1.81 parsed 3.12e41 one ulp
// low, the writer printed that double exactly (3.1199999999999997e+41), and
// Boost parsed that text to yet another double. Numbers are now converted
// from their text by std::from_chars, correctly rounded.
TEST(FuzzRegressions, SimConfigWithLargeExponentRoundTrips) {
  const std::string text = lab_config(R"("peak_fp16_flops": 3.12e41, "tdp_w": 400)");
  const presets::Catalog catalog = presets::Catalog::builtin().value();
  Result<presets::SimConfig> config = presets::load_sim_config_text(text, "run.json", catalog);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->cluster.gpu.peak_fp16_flops, 3.12e41);  // the double nearest to the text
  Result<presets::SimConfig> again =
      presets::load_sim_config_text(presets::sim_config_to_json(*config), "again.json", catalog);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->cluster, config->cluster);
  EXPECT_EQ(json::parse("[1.2345678901234567e-300, 9007199254740993.0]", "x")->as_array()[0],
            1.2345678901234567e-300);
}

// fuzz_sim_config (issue 31's 10-minute campaign): a config whose GPU gives no
// tdp_w (0: not given) was written back with "tdp_w": 0, which the reader
// refuses ("must be positive"). The writer now leaves an unknown TDP out.
TEST(FuzzRegressions, SimConfigWithoutTdpRoundTrips) {
  const std::string text = lab_config(R"("peak_fp16_flops": 3.12e14)");
  const presets::Catalog catalog = presets::Catalog::builtin().value();
  Result<presets::SimConfig> config = presets::load_sim_config_text(text, "run.json", catalog);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->cluster.gpu.tdp_w, 0);
  Result<presets::SimConfig> again =
      presets::load_sim_config_text(presets::sim_config_to_json(*config), "again.json", catalog);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->cluster, config->cluster);
}

// fuzz_profile (issue 31's 10-minute campaign): a kernel of 3e21 bytes made
// profile_to_json convert the double to int64 before checking its range
// (undefined behaviour, UBSan: "3e+21 is outside the range of representable
// values of type 'long'"). Large values are now written as doubles.
TEST(FuzzRegressions, ProfileWithHugeByteCountRoundTrips) {
  const std::string text = R"({
    "format": "llmplan-profile", "format_version": 1, "llmplan_version": "0.1.0",
    "date": "2025-01-01T00:00:00Z", "host": "node1",
    "gpu": {"name": "Test GPU", "count": 8, "compute_capability": "9.0", "sm_count": 132,
            "memory_bytes": 80000000000, "sm_clock_mhz": 1980, "memory_clock_mhz": 2619,
            "memory_bus_width_bits": 5120},
    "software": {"driver": "13.0", "cuda_runtime": "13.0", "cublas": "13.0.0", "nccl": "2.28.9",
                 "cupti": "api 28"},
    "timing": {"method": "cupti_activity", "warmup": 0, "repeats": 20, "statistic": "median"},
    "kernels": [{"kind": "optimizer_step", "pass": "fwd", "precision": "bf16",
                 "bytes": 3000002222222222222200, "time_s": 2e-6}],
    "collectives": []})";
  Result<simulator::Profile> profile = simulator::parse_profile(text, "p.json");
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  Result<simulator::Profile> again =
      simulator::parse_profile(simulator::profile_to_json(*profile), "again.json");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, *profile);
}

// fuzz_vtrain_config (issue 31's 10-minute campaign): without num_gpus,
// t * d * p was computed in int and overflowed (UBSan: "16 * 1111111119
// cannot be represented in type 'int'"). Now 64-bit and bounded.
TEST(FuzzRegressions, VtrainConfigHugeParallelSizes) {
  const std::string text = R"({"tensor_parallel_size": 8, "data_parallel_size": 2,
    "pipeline_parallel_size": 1111111119, "global_batch_size": 74, "micro_batch_size": 2,
    "num_layers": 24, "node_size": 6, "trace_path": "trace/"})";
  const presets::Catalog catalog = presets::Catalog::builtin().value();
  Result<presets::SimConfig> config =
      presets::load_vtrain_config_text(text, "v.json", catalog, presets::VtrainLoadOptions{});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("t * d * p = 17777777904 GPUs, more than the 1048576"),
            std::string::npos)
      << config.status().message();
  EXPECT_TRUE(one_line(config.status().message()));
}

// Found while fixing the above: a key repeated in one object was accepted
// (one of the values silently won). Strict readers refuse it, naming the
// line and column.
TEST(FuzzRegressions, DuplicateKeysAreRefused) {
  Result<boost::json::value> v =
      json::parse("{\n  \"model\": {\"layers\": 2,\n  \"layers\": 3}}", "x.json");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kParseError);
  EXPECT_EQ(v.status().message(),
            "x.json:3:10: duplicate key \"layers\" (each key may appear once in an object)");
  // The same key in different objects is fine.
  EXPECT_TRUE(json::parse(R"({"a": {"x": 1}, "b": {"x": 2}, "x": 3})", "x.json").ok());
}

}  // namespace
}  // namespace llmplan

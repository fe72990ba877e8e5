#include "simulator/collective_curve.h"

#include <gtest/gtest.h>

#include <string>

namespace llmplan::simulator {
namespace {

const std::string kLut =
    std::string(LLMPLAN_DATA_DIR) + "/vtrain/allreduce_lut/a100/AR_GPU8_1M_1024M_LUT";

CollectiveCurve doubling_curve() {
  CollectiveCurve c;
  c.bytes = {1024, 2048, 4096, 8192};
  c.seconds = {10e-6, 12e-6, 16e-6, 24e-6};
  return c;
}

TEST(CollectiveCurve, InterpolatesLinearlyInBytes) {
  const CollectiveCurve c = doubling_curve();
  ASSERT_TRUE(validate(c).ok());
  EXPECT_DOUBLE_EQ(c.time_s(2048), 12e-6);          // exact point
  EXPECT_DOUBLE_EQ(c.time_s(3072), 14e-6);          // halfway 2048..4096
  EXPECT_DOUBLE_EQ(c.time_s(1024 + 256), 10.5e-6);  // a quarter of the first segment
}

TEST(CollectiveCurve, ClampsBelowTheSmallestSize) {
  const CollectiveCurve c = doubling_curve();
  EXPECT_DOUBLE_EQ(c.time_s(1), 10e-6);
  EXPECT_DOUBLE_EQ(c.time_s(0), 10e-6);
}

TEST(CollectiveCurve, ExtrapolatesWithTheLastSegmentsBandwidth) {
  const CollectiveCurve c = doubling_curve();
  // Last segment 4096 -> 8192 costs 8 us per 4096 bytes.
  EXPECT_DOUBLE_EQ(c.time_s(16384), 24e-6 + 8192 * (8e-6 / 4096));
}

TEST(CollectiveCurve, ExtrapolationUsesAWideSecantOnDenseGrids) {
  // Dense grid whose last two points are noisy (the last step is slower
  // than the trend): the slope comes from half the largest size upwards.
  CollectiveCurve c;
  for (int i = 1; i <= 10; ++i) {
    c.bytes.push_back(i * 1e6);
    c.seconds.push_back(1e-5 + i * 1e-6);  // 1 GB/s marginal
  }
  c.seconds[9] = c.seconds[8];  // flat last segment
  const double slope = (c.seconds[9] - c.seconds[4]) / (10e6 - 5e6);
  EXPECT_DOUBLE_EQ(c.time_s(20e6), c.seconds[9] + slope * 10e6);
  EXPECT_GT(c.time_s(20e6), c.seconds[9]);
}

TEST(CollectiveCurve, SinglePointScalesProportionally) {
  CollectiveCurve c;
  c.bytes = {1e6};
  c.seconds = {1e-4};
  EXPECT_DOUBLE_EQ(c.time_s(4e6), 4e-4);
  EXPECT_DOUBLE_EQ(c.time_s(1e5), 1e-4);
}

TEST(CollectiveCurve, ValidateNamesTheBadPoint) {
  CollectiveCurve c = doubling_curve();
  c.bytes[2] = 2048;
  EXPECT_NE(validate(c).message().find("points[2]"), std::string::npos);
  c = doubling_curve();
  c.seconds[1] = 0;
  EXPECT_NE(validate(c).message().find("points[1]"), std::string::npos);
  EXPECT_FALSE(validate(CollectiveCurve{}).ok());
}

TEST(NcclTestsFile, ReadsVtrainLut) {
  Result<CollectiveCurve> c = read_nccl_tests_file(kLut);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->bytes.size(), 1024u);  // 1 MiB .. 1 GiB in 1 MiB steps
  EXPECT_EQ(c->bytes.front(), 1048576);
  EXPECT_EQ(c->bytes.back(), 1073741824);
  // First row: 92790 ns out-of-place, 92150 ns in-place.
  EXPECT_DOUBLE_EQ(c->seconds.front(), (92790 + 92150) / 2 * 1e-9);
  EXPECT_DOUBLE_EQ(c->seconds.back(), (8193000 + 8196400) / 2 * 1e-9);
  // The file's bus bandwidth (229.3 GB/s at 1 GiB on 8 GPUs) is 2(n-1)/n S / t.
  const double busbw = 2.0 * 7 / 8 * 1073741824 / c->time_s(1073741824);
  EXPECT_NEAR(busbw / 1e9, 229.3, 0.1);
  EXPECT_TRUE(validate(*c).ok());
}

TEST(NcclTestsFile, ReadsNcclTestsStdout) {
  const std::string text =
      "# nThread 1 nGpus 8 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5\n"
      "#\n"
      "#                                                              out-of-place                 "
      "      in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
      "(us)  (GB/s)  (GB/s)\n"
      "node1:123:123 [0] NCCL INFO Channel 00/24 : 0 1 2 3\n"
      "        1024           256     float     sum      -1    20.00    0.05    0.09      0    "
      "22.00    0.05    0.08      0\n"
      "        2048           512     float     sum      -1    24.00    0.09    0.15    N/A    "
      "26.00    0.08    0.14    N/A\r\n"
      "        4096          1024     float     sum      -1    30.00    0.14    0.24      0    "
      "30.00    0.14    0.24      0\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 0.15\n";
  Result<CollectiveCurve> c = parse_nccl_tests_text(text, "ar.txt");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->bytes.size(), 3u);
  EXPECT_DOUBLE_EQ(c->seconds[0], 21e-6);
  EXPECT_DOUBLE_EQ(c->seconds[1], 25e-6);
  EXPECT_DOUBLE_EQ(c->bytes[2], 4096);
}

TEST(NcclTestsFile, AcceptsByteOrderMarkAndCrlf) {
  Result<CollectiveCurve> c = parse_nccl_tests_text(
      "\xEF\xBB\xBFsize(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\r\n"
      "1024,256,float,1000,1.0,3000,1.0\r\n",
      "lut");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->seconds[0], 2e-6);
}

TEST(NcclTestsFile, RejectsMalformedFiles) {
  const std::string header = "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n";
  struct Case {
    std::string text;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{
           {"", "no nccl-tests header"},
           {"1024,256,float,1000,1.0,1000,1.0\n", "lut:1: data before an nccl-tests header"},
           {header, "no data rows"},
           {header + "1024,256,float,1000,1.0\n", "lut:2: expected 7 columns, got 5"},
           {header + "1024,256,float,abc,1.0,1000,1.0\n", "lut:2: bad time \"abc\""},
           {header + "1024,256,float,-5,1.0,1000,1.0\n", "lut:2: bad time"},
           {header + "x,256,float,5,1.0,1000,1.0\n", "lut:2: bad size \"x\""},
           {header + "2048,1,float,5,1,5,1\n1024,1,float,5,1,5,1\n",
            "lut:3: sizes must be strictly"},
       }) {
    Result<CollectiveCurve> r = parse_nccl_tests_text(c.text, "lut");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kParseError);
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().message();
  }
}

TEST(NcclTestsFile, MissingFileIsNotFound) {
  Result<CollectiveCurve> r = read_nccl_tests_file("/nonexistent/AR_LUT");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/AR_LUT"), std::string::npos);
}

}  // namespace
}  // namespace llmplan::simulator

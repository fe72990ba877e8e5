// Inputs the fuzz targets (tests/fuzz) found, each fixed in its reader and
// kept here, inline, so that the ordinary suite keeps them fixed. One test
// per finding, named after the target that found it.
#include <gtest/gtest.h>

#include <string>

#include "scaling/law.h"
#include "simulator/collective_curve.h"
#include "simulator/status.h"

namespace llmplan {
namespace {

bool one_line(const std::string& m) {
  return !m.empty() && m.find_first_of("\r\n") == std::string::npos;
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

}  // namespace
}  // namespace llmplan

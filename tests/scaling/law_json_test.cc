#include "scaling/law_json.h"

#include <gtest/gtest.h>

#include <cmath>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/strict_json.h"

namespace llmplan::scaling {
namespace {

boost::json::value parse(const std::string& text) { return json::parse(text, "test").value(); }

TEST(LawJson, ReadsBareAndSourcedNumbers) {
  Result<LossLaw> law =
      law_from_json(parse(R"({"name": "x", "E": 1.5, "A": {"value": 400, "source": "paper"},
                "B": 300, "alpha": {"value": 0.3, "source": "paper"}, "beta": 0.25,
                "source": "made up", "description": "a test law"})"),
                    "laws.json: laws[0]");
  ASSERT_TRUE(law.ok()) << law.status().message();
  EXPECT_EQ(law->name, "x");
  EXPECT_EQ(law->E, 1.5);
  EXPECT_EQ(law->A, 400);
  EXPECT_EQ(law->B, 300);
  EXPECT_EQ(law->alpha, 0.3);
  EXPECT_EQ(law->beta, 0.25);
  EXPECT_EQ(law->source, "made up");
  EXPECT_EQ(law->description, "a test law");
}

TEST(LawJson, ErrorsNameThePathAndField) {
  const std::string path = "laws.json: laws[1]";
  auto message = [&](const std::string& text) {
    Result<LossLaw> law = law_from_json(parse(text), path);
    return law.ok() ? std::string("OK") : law.status().message();
  };
  EXPECT_EQ(message(R"({"name": "x", "E": 1, "A": 1, "B": 1, "alpha": 0.3})"),
            "laws.json: laws[1].beta: missing required field");
  EXPECT_EQ(message(R"({"name": "x", "E": 1, "A": 1, "B": 1, "alpha": 0.3, "beta": 0.2,
                       "gamma": 1})"),
            "laws.json: laws[1]: unknown key \"gamma\"");
  EXPECT_EQ(message(R"({"name": "x", "E": 1, "A": "big", "B": 1, "alpha": 0.3, "beta": 0.2})"),
            "laws.json: laws[1].A: expected a number, got a string");
  EXPECT_NE(message(R"({"name": "x", "E": 1, "A": -4, "B": 1, "alpha": 0.3, "beta": 0.2})")
                .find("laws.json: laws[1]: law x: A must be > 0 and <= 1e+12"),
            std::string::npos);
  EXPECT_NE(message(R"({"name": "", "E": 1, "A": 1, "B": 1, "alpha": 0.3, "beta": 0.2})")
                .find("laws[1].name: must not be empty"),
            std::string::npos);
  EXPECT_NE(message("[1, 2]").find("expected an object"), std::string::npos);
}

// Issue 31, item 5: E = 1e308 gave "loss": null with exit 0, A = 1e308 or
// alpha = 1e-300 failed only after the whole search, alpha = 100 gave
// "best": null. Every constant is bounded by magnitude when the file is read.
TEST(LawJson, BoundsEveryConstantByMagnitude) {
  auto message = [](const std::string& fields) {
    Result<LossLaw> law = law_from_json(parse(R"({"name": "x", )" + fields + "}"), "law.json");
    return law.ok() ? std::string("OK") : law.status().message();
  };
  const std::string ok = R"("E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28)";
  EXPECT_EQ(message(ok), "OK");
  const struct {
    const char* fields;
    const char* error;
  } cases[] = {
      {R"("E": 1e308, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28)",
       "E must be >= 0 and <= 100"},
      {R"("E": 1.69, "A": 1e308, "B": 410.7, "alpha": 0.34, "beta": 0.28)",
       "A must be > 0 and <= 1e+12"},
      {R"("E": 1.69, "A": 406.4, "B": 1e13, "alpha": 0.34, "beta": 0.28)",
       "B must be > 0 and <= 1e+12"},
      {R"("E": 1.69, "A": 406.4, "B": 410.7, "alpha": 1e-300, "beta": 0.28)",
       "alpha must be >= 0.01 and <= 2"},
      {R"("E": 1.69, "A": 406.4, "B": 410.7, "alpha": 100, "beta": 0.28)",
       "alpha must be >= 0.01 and <= 2"},
      {R"("E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 2.5)",
       "beta must be >= 0.01 and <= 2"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(message(c.fields), std::string("law.json: law x: ") + c.error) << c.fields;
  }
  EXPECT_EQ(message(ok + R"(, "moe": {"a": -1e200, "b": -0.108, "c": 0.009, "d": 1.104,
                                     "e_start": 1.847, "e_max": 314.6})"),
            "law.json: law x: moe.a must be finite and at most 100 in magnitude");
  EXPECT_EQ(message(ok + R"(, "moe": {"a": -0.082, "b": -0.108, "c": 0.009, "d": 1.104,
                                     "e_start": 1.847, "e_max": 1e300})"),
            "law.json: law x: moe.e_max must be finite, > moe.e_start and <= 1e6");
  // At the bounds a law still gives finite losses and compute-optimal sizes.
  for (const char* bounds : {R"("E": 100, "A": 1e12, "B": 1e12, "alpha": 0.01, "beta": 0.01)",
                             R"("E": 0, "A": 1e12, "B": 1e-12, "alpha": 2, "beta": 2)"}) {
    Result<LossLaw> law = law_from_json(parse(std::string(R"({"name": "x", )") + bounds + "}"),
                                        "law.json");
    ASSERT_TRUE(law.ok()) << law.status().message();
    for (double n : {1e6, 1e12, 1e16}) {
      EXPECT_TRUE(std::isfinite(law->loss(n, 20 * n))) << bounds << " N=" << n;
    }
  }
}

TEST(LawJson, RoundTripsExactly) {
  LossLaw law{"fit",       1.8172234567, 482.0123456789, 2085.43,
              0.347812345, 0.365854321,  "a fit",        "desc",  {}};
  Result<LossLaw> back = law_from_json(law_to_json(law), "round trip");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, law);
}

TEST(LawJson, BuiltInPresetFileHasBothLawsWithSources) {
  Result<boost::json::value> doc = json::parse_file(LLMPLAN_SOURCE_DIR "/presets/laws.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const boost::json::array& laws = doc->at("laws").as_array();
  ASSERT_EQ(laws.size(), 4u);
  for (size_t i = 0; i < laws.size(); ++i) {
    Result<LossLaw> law = law_from_json(laws[i], "laws.json: laws[" + std::to_string(i) + "]");
    ASSERT_TRUE(law.ok()) << law.status().message();
    EXPECT_FALSE(law->source.empty());
    EXPECT_FALSE(law->description.empty());
    // A joint law's dense constants are derived (its own constants are
    // sourced: tests/scaling/joint_moe_test.cc).
    if (law->joint.present) {
      for (const auto& [key, v] : laws[i].at("joint_moe").as_object()) {
        if (v.is_object()) {
          EXPECT_FALSE(v.at("source").as_string().empty()) << key;
        }
        EXPECT_TRUE(v.is_object() || v.is_string()) << law->name << ".joint_moe." << key << " has no source";
      }
      continue;
    }
    for (const char* key : {"E", "A", "B", "alpha", "beta"}) {
      const boost::json::value& v = laws[i].at(key);
      ASSERT_TRUE(v.is_object()) << law->name << "." << key << " has no source";
      EXPECT_FALSE(v.at("source").as_string().empty()) << law->name << "." << key;
    }
  }
  const LossLaw chinchilla = *law_from_json(laws[0], "chinchilla");
  EXPECT_EQ(chinchilla.name, "chinchilla");
  EXPECT_EQ((std::vector<double>{chinchilla.E, chinchilla.A, chinchilla.B, chinchilla.alpha,
                                 chinchilla.beta}),
            (std::vector<double>{1.69, 406.4, 410.7, 0.34, 0.28}));
  const LossLaw epoch = *law_from_json(laws[1], "epoch");
  EXPECT_EQ(epoch.name, "epoch");
  EXPECT_EQ((std::vector<double>{epoch.E, epoch.A, epoch.B, epoch.alpha, epoch.beta}),
            (std::vector<double>{1.8172, 482.01, 2085.43, 0.3478, 0.3658}));
}

TEST(LawJson, ReadLawFile) {
  const std::string path = testing::TempDir() + "/llmplan_law_json_test.json";
  {
    std::ofstream out(path);
    out << R"({"name": "mine", "E": 2, "A": 100, "B": 200, "alpha": 0.3, "beta": 0.3})";
  }
  Result<LossLaw> law = read_law_file(path);
  ASSERT_TRUE(law.ok()) << law.status().message();
  EXPECT_EQ(law->name, "mine");
  std::remove(path.c_str());
  EXPECT_EQ(read_law_file(path).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace llmplan::scaling

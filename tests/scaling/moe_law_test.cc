// The MoE term of a loss law (scaling/law.h MoeLawTerm): Clark et al. 2022's
// saturating expert transform and effective parameter count, its JSON form
// and the built-in clark-moe preset.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "scaling/law.h"
#include "scaling/law_json.h"
#include "base/strict_json.h"

namespace llmplan::scaling {
namespace {

// The constants of the clark-moe preset (S-BASE row of Clark et al. 2022).
MoeLawTerm s_base() {
  MoeLawTerm t;
  t.present = true;
  t.a = -0.082;
  t.b = -0.108;
  t.c = 0.009;
  t.d = 1.104;
  t.e_start = 1.847;
  t.e_max = 314.6;
  return t;
}

LossLaw clark_moe() {
  LossLaw law{"clark-moe", 1.69, 406.4, 410.7, 0.34, 0.28, "", "", {}};
  law.moe = s_base();
  return law;
}

TEST(MoeLaw, ExpertTransformStartsAtEStartAndSaturatesAtEMax) {
  const MoeLawTerm t = s_base();
  EXPECT_NEAR(expert_transform(t, 1), 1.847, 1e-12);
  // By hand: 1/(1/(16 - 1 + 1/(1/0.847 - 1/314.6)) + 1/314.6) + 1 = 16.0891.
  EXPECT_NEAR(expert_transform(t, 16), 16.0891, 1e-4);
  EXPECT_LT(expert_transform(t, 1e9), 314.6 + 1);
  EXPECT_GT(expert_transform(t, 1e9), 314.0);
}

TEST(MoeLaw, EffectiveParamsHandChecked) {
  const MoeLawTerm t = s_base();
  // E = 1 (dense) and a law without the term: N itself.
  EXPECT_DOUBLE_EQ(effective_params(t, 7e9, 1.0), 7e9);
  EXPECT_DOUBLE_EQ(effective_params(MoeLawTerm{}, 7e9, 16.0), 7e9);
  // N = 1e10, E = 16 by hand: lE = log10 16.0891 = 1.20653, lE1 = log10
  // 1.847 = 0.26646; log10 Nbar = ((-0.082 + 0.009 lE) 10 - 0.108 (lE - lE1))
  // / (-0.082 + 0.009 lE1) = 10.21257, Nbar = 1.6314e10.
  EXPECT_NEAR(effective_params(t, 1e10, 16) / 1e10, 1.6314, 1e-3);
  // Clark et al.: routing helps less as the dense base grows.
  EXPECT_GT(effective_params(t, 1e9, 16) / 1e9, effective_params(t, 1e11, 16) / 1e11);
  EXPECT_GT(effective_params(t, 1e10, 64), effective_params(t, 1e10, 16));
}

TEST(MoeLaw, MoeLossReducesToTheDenseLaw) {
  const LossLaw law = clark_moe();
  EXPECT_DOUBLE_EQ(law.moe_loss(1e10, 1.0, 2e11), law.loss(1e10, 2e11));
  // By hand with Nbar = 1.6314e10: 1.69 + 406.4 / Nbar^0.34 + 410.7 / (2e11)^0.28 = 2.1083.
  EXPECT_NEAR(law.moe_loss(1e10, 16, 2e11), 2.1083, 1e-3);
  EXPECT_LT(law.moe_loss(1e10, 16, 2e11), law.loss(1e10, 2e11));
}

TEST(MoeLaw, ValidateNamesTheMoeField) {
  LossLaw law = clark_moe();
  EXPECT_TRUE(validate(law).ok());
  law.moe.e_max = 1.5;
  EXPECT_EQ(validate(law).message(), "law clark-moe: moe.e_max must be finite, > moe.e_start and <= 1e6");
  law = clark_moe();
  law.moe.a = 0.1;
  EXPECT_NE(validate(law).message().find("law clark-moe: moe.a"), std::string::npos);
  law = clark_moe();
  law.moe.e_start = 1.0;
  EXPECT_EQ(validate(law).message(), "law clark-moe: moe.e_start must be finite and > 1");
}

TEST(MoeLaw, JsonRoundTripAndErrors) {
  LossLaw law = clark_moe();
  law.moe.max_fitted_active_params = 1.3e9;
  law.moe.max_fitted_expansion = 512;
  law.moe.assumption = "MassiveText";
  Result<LossLaw> back = law_from_json(law_to_json(law), "round trip");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, law);
  auto message = [](const std::string& text) {
    Result<boost::json::value> v = json::parse(text, "law.json");
    Result<LossLaw> l = law_from_json(v.value(), "law.json");
    return l.ok() ? std::string("OK") : l.status().message();
  };
  const std::string dense = R"("name": "x", "E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28)";
  EXPECT_EQ(message("{" + dense + R"(, "moe": {"a": -0.08, "b": -0.1, "c": 0.01, "d": 1, "e_start": 2})" + "}"),
            "law.json.moe.e_max: missing required field");
  EXPECT_EQ(message("{" + dense +
                    R"(, "moe": {"a": -0.08, "b": -0.1, "c": 0.01, "d": 1, "e_start": 2, "e_max": 300, "k": 1})" +
                    "}"),
            "law.json.moe: unknown key \"k\"");
}

TEST(MoeLaw, BuiltInPresetHasSourcedMoeConstants) {
  Result<boost::json::value> doc = json::parse_file(LLMPLAN_SOURCE_DIR "/presets/laws.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const boost::json::value* found = nullptr;
  for (const boost::json::value& v : doc->at("laws").as_array()) {
    if (v.at("name").as_string() == "clark-moe") found = &v;
  }
  ASSERT_NE(found, nullptr);
  Result<LossLaw> law = law_from_json(*found, "clark-moe");
  ASSERT_TRUE(law.ok()) << law.status().message();
  EXPECT_TRUE(law->moe.present);
  const MoeLawTerm want = s_base();
  EXPECT_EQ((std::vector<double>{law->moe.a, law->moe.b, law->moe.c, law->moe.d, law->moe.e_start,
                                 law->moe.e_max}),
            (std::vector<double>{want.a, want.b, want.c, want.d, want.e_start, want.e_max}));
  EXPECT_EQ(law->moe.max_fitted_active_params, 1.3e9);
  EXPECT_EQ(law->moe.max_fitted_expansion, 512);
  EXPECT_FALSE(law->moe.assumption.empty());
  for (const char* key : {"a", "b", "c", "d", "e_start", "e_max"}) {
    const boost::json::value& v = found->at("moe").at(key);
    ASSERT_TRUE(v.is_object()) << key << " has no source";
    EXPECT_FALSE(v.at("source").as_string().empty()) << key;
  }
  // Its dense part is the chinchilla law.
  EXPECT_EQ((std::vector<double>{law->E, law->A, law->B, law->alpha, law->beta}),
            (std::vector<double>{1.69, 406.4, 410.7, 0.34, 0.28}));
}

}  // namespace
}  // namespace llmplan::scaling

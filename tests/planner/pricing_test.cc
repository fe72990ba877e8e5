// --cost-model: the owned cost of a GPU-hour (planner/search/pricing.h), the
// built-in presets/ownership.json, and owned prices in the planner's search,
// report and frontier.
#include "planner/search/pricing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "planner/search/report_tables.h"
#include "reports/plan_report.h"
#include "reports/plan_report_json.h"
#include "planner/search/search.h"
#include "planner/study/frontier.h"
#include "presets/catalog.h"
#include "tests/planner/search_fixtures.h"

namespace llmplan::planner {
namespace {

simulator::Cluster cluster(const std::string& name) { return fixtures::builtin_cluster(name); }

TEST(Pricing, OwnedCostFormulaWithStatedNumbers) {
  // $40,000 over 5 years of 8,766 h: 40000 / 43830 = 0.912617 $/h. Power:
  // 700 W x 1.5 = 1,050 W, x PUE 1.5 = 1.575 kW, x $0.10/kWh = 0.1575 $/h.
  const OwnedCost c = owned_cost(40000, 5, 1.5, 0.10, 700, 0.5);
  EXPECT_DOUBLE_EQ(c.it_power_w, 1050);
  EXPECT_NEAR(c.capex_usd_per_gpu_hour, 0.912617, 1e-6);
  EXPECT_NEAR(c.power_usd_per_gpu_hour, 0.1575, 1e-12);
  EXPECT_NEAR(c.usd_per_gpu_hour, 1.070117, 1e-6);
  // Twice the years halves the capex part only.
  const OwnedCost d = owned_cost(40000, 10, 1.5, 0.10, 700, 0.5);
  EXPECT_NEAR(d.capex_usd_per_gpu_hour * 2, c.capex_usd_per_gpu_hour, 1e-12);
  EXPECT_DOUBLE_EQ(d.power_usd_per_gpu_hour, c.power_usd_per_gpu_hour);
}

TEST(Pricing, BuiltinFileHasSourcedDefaultsAndEveryBlackwellGpu) {
  auto f = builtin_ownership();
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_DOUBLE_EQ(f->amortisation_years.value, 5);
  EXPECT_DOUBLE_EQ(f->pue.value, 1.58);
  EXPECT_DOUBLE_EQ(f->usd_per_kwh.value, 0.0806);
  for (const Sourced* s : {&f->amortisation_years, &f->pue, &f->usd_per_kwh,
                           &f->non_gpu_power_share}) {
    EXPECT_FALSE(s->source.empty());
  }
  for (const char* gpu :
       {"a100-40gb", "a100-80gb", "h100-sxm", "h200-sxm", "b200", "gb200", "b300", "gb300"}) {
    const OwnershipGpu* e = f->find(gpu);
    ASSERT_NE(e, nullptr) << gpu;
    EXPECT_GT(e->capex_usd_per_gpu.value, 10000) << gpu;
    EXPECT_LT(e->capex_usd_per_gpu.value, 200000) << gpu;
    EXPECT_FALSE(e->capex_usd_per_gpu.source.empty()) << gpu;
    EXPECT_FALSE(e->system_power_w.source.empty()) << gpu;
  }
}

// Every built-in GPU preset can be priced as owned.
TEST(Pricing, EveryBuiltinGpuPresetHasAnOwnershipEntry) {
  auto catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  auto f = builtin_ownership();
  ASSERT_TRUE(f.ok());
  for (const presets::PresetInfo& info : catalog->list()) {
    if (info.kind != presets::PresetKind::kGpu) continue;
    auto gpu = catalog->gpu(info.name);
    ASSERT_TRUE(gpu.ok());
    auto c = resolve_owned_cost(*f, *gpu, {});
    ASSERT_TRUE(c.ok()) << info.name << ": " << c.status().message();
    EXPECT_GT(c->usd_per_gpu_hour, 0.3) << info.name;
    EXPECT_LT(c->usd_per_gpu_hour, 5.0) << info.name;
  }
}

// The reverse link: every ownership entry names a GPU preset.
TEST(Pricing, EveryOwnershipEntryIsAGpuPreset) {
  auto catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  auto f = builtin_ownership();
  ASSERT_TRUE(f.ok());
  for (const OwnershipGpu& e : f->gpus) EXPECT_TRUE(catalog->gpu(e.gpu).ok()) << e.gpu;
}

TEST(Pricing, H100OwnedCostFromTheBuiltinFile) {
  auto f = builtin_ownership();
  ASSERT_TRUE(f.ok());
  const simulator::Cluster h100 = cluster("dgx-h100");
  auto c = resolve_owned_cost(*f, h100.gpu, {});
  ASSERT_TRUE(c.ok());
  // $317,000 / 8 over 5 years; DGX H100 10.2 kW / 8 = 1,275 W (non-GPU share
  // 1275 / 700 - 1) x PUE 1.58 x $0.0806/kWh.
  EXPECT_DOUBLE_EQ(c->capex_usd_per_gpu, 39625);
  EXPECT_DOUBLE_EQ(c->tdp_w, 700);
  EXPECT_NEAR(c->non_gpu_power_share, 1275.0 / 700.0 - 1.0, 1e-12);
  EXPECT_NEAR(c->it_power_w, 1275, 1e-9);
  EXPECT_NEAR(c->capex_usd_per_gpu_hour, 39625.0 / (5 * 8766.0), 1e-12);
  EXPECT_NEAR(c->power_usd_per_gpu_hour, 1.275 * 1.58 * 0.0806, 1e-12);
  EXPECT_NEAR(c->usd_per_gpu_hour, 1.0664, 1e-4);
  // Overrides win, and name themselves as the source.
  OwnershipOverrides o;
  o.capex_usd_per_gpu = 30000;
  o.amortisation_years = 4;
  o.pue = 1.2;
  o.usd_per_kwh = 0.15;
  auto d = resolve_owned_cost(*f, h100.gpu, o);
  ASSERT_TRUE(d.ok());
  EXPECT_NEAR(d->usd_per_gpu_hour, 30000 / (4 * 8766.0) + 1.275 * 1.2 * 0.15, 1e-12);
  EXPECT_EQ(d->capex_source, "--capex-usd-per-gpu");
  EXPECT_EQ(d->pue_source, "--pue");
}

TEST(Pricing, MissingEntryNeedsCapexAndBadOverridesNameTheFlag) {
  auto f = builtin_ownership();
  ASSERT_TRUE(f.ok());
  simulator::GpuSpec gpu = cluster("dgx-h100").gpu;
  gpu.name = "custom";
  auto c = resolve_owned_cost(*f, gpu, {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUsage);
  EXPECT_NE(c.status().message().find("--capex-usd-per-gpu"), std::string::npos);
  OwnershipOverrides o;
  o.capex_usd_per_gpu = 20000;
  auto d = resolve_owned_cost(*f, gpu, o);
  ASSERT_TRUE(d.ok());
  EXPECT_NEAR(d->non_gpu_power_share, f->non_gpu_power_share.value, 1e-12);
  for (auto [field, flag] : {std::pair{&OwnershipOverrides::pue, "--pue"},
                             {&OwnershipOverrides::usd_per_kwh, "--usd-per-kwh"},
                             {&OwnershipOverrides::amortisation_years, "--amortisation-years"},
                             {&OwnershipOverrides::capex_usd_per_gpu, "--capex-usd-per-gpu"}}) {
    for (double bad : {-1.0, double(NAN), double(INFINITY), 1e12}) {
      OwnershipOverrides b;
      b.*field = bad;
      const Status s = check_overrides(b);
      EXPECT_EQ(s.code(), StatusCode::kUsage) << flag << " " << bad;
      EXPECT_EQ(s.message().rfind(std::string(flag) + ": ", 0), 0u) << s.message();
    }
  }
}

TEST(Pricing, ParseErrorsNameTheField) {
  const std::string good_gpu =
      R"({"gpu": "x", "capex_usd_per_gpu": {"value": 1000, "source": "s"},
          "system_power_w": {"value": 8000, "source": "s"}, "system_gpus": {"value": 8, "source": "s"}})";
  auto file = [&](const std::string& pue, const std::string& gpus) {
    return R"({"amortisation_years": {"value": 5, "source": "s"}, "pue": )" + pue +
           R"(, "usd_per_kwh": {"value": 0.1, "source": "s"},
              "non_gpu_power_share": {"value": 0.8, "source": "s"}, "gpus": [)" + gpus + "]}";
  };
  EXPECT_TRUE(parse_ownership(file(R"({"value": 1.5, "source": "s"})", good_gpu), "t").ok());
  auto e1 = parse_ownership(file(R"({"value": 0.9, "source": "s"})", good_gpu), "t");
  ASSERT_FALSE(e1.ok());
  EXPECT_EQ(e1.status().message(), "t: pue.value: 0.9 is out of range (>= 1, <= 5)");
  auto e2 = parse_ownership(file(R"({"value": 1.5})", good_gpu), "t");
  ASSERT_FALSE(e2.ok());
  EXPECT_EQ(e2.status().message(), "t: pue.source: expected a non-empty string");
  auto e3 = parse_ownership(file(R"({"value": 1.5, "source": "s"})", good_gpu + "," + good_gpu), "t");
  ASSERT_FALSE(e3.ok());
  EXPECT_EQ(e3.status().message(), "t: gpus[1].gpu: \"x\" is listed twice");
}

// A small plan space on dgx-h100 (seconds): search_fixtures.h.
SearchOptions small_options() { return fixtures::small_h100_options(); }

TEST(Pricing, OwnedH100PlanCostsTheOwnedPriceAndTheReportSaysSo) {
  auto f = builtin_ownership();
  ASSERT_TRUE(f.ok());
  simulator::Cluster cloud = cluster("dgx-h100");
  simulator::Cluster owned = cloud;
  SearchOptions co = small_options(), oo = small_options();
  auto pc = make_pricing("cloud", true, cloud, *f, {});
  auto po = make_pricing("owned", true, owned, *f, {});
  ASSERT_TRUE(pc.ok() && po.ok());
  co.pricing = *pc;
  oo.pricing = *po;
  owned.usd_per_gpu_hour = po->usd_per_gpu_hour();
  EXPECT_DOUBLE_EQ(pc->usd_per_gpu_hour(), 6.88);  // the price preset (AWS p5, after the cut)
  auto rc = search(cloud, co);
  auto ro = search(owned, oo);
  ASSERT_TRUE(rc.ok() && ro.ok());
  ASSERT_GE(rc->best, 0);
  ASSERT_EQ(rc->best, ro->best);  // no budget: the same answer, priced differently
  const Candidate& a = rc->candidates[rc->best];
  const Candidate& b = ro->candidates[ro->best];
  EXPECT_EQ(a.best_plan, b.best_plan);
  EXPECT_NEAR(b.cost_usd / a.cost_usd, po->usd_per_gpu_hour() / 6.88, 1e-12);
  const int gpus = ro->plans[b.best_plan].gpus_used;
  EXPECT_NEAR(b.cost_usd, b.days * 24 * gpus * 1.0664, b.cost_usd * 1e-4);

  PlanReportView view{owned, oo, *ro, "test", {}, nullptr, {}, {}, false};
  const reports::PlanReport tables = plan_report_tables(view);
  const boost::json::object j = reports::plan_report_to_json(tables);
  const boost::json::object& as = j.at("assumptions").as_object();
  EXPECT_EQ(as.at("cost_model").as_string(), "owned");
  EXPECT_NEAR(as.at("usd_per_gpu_hour").to_number<double>(), 1.0664, 1e-4);
  const boost::json::object& w = as.at("ownership").as_object();
  for (const char* key : {"capex_usd_per_gpu", "amortisation_years", "pue", "usd_per_kwh", "tdp_w",
                          "capex_usd_per_gpu_hour", "power_usd_per_gpu_hour"}) {
    EXPECT_TRUE(w.contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(w.at("tdp_w").to_number<double>(), 700);
  EXPECT_TRUE(w.at("sources").as_object().contains("capex"));
  const std::string md = reports::plan_report_markdown(tables);
  EXPECT_NE(md.find("- Cost model: owned: $1.07/GPU-hour"), std::string::npos);
  EXPECT_NE(md.find("PUE 1.58"), std::string::npos);

  // Without --cost-model the JSON has no cost-model keys (unchanged output).
  SearchOptions plain = small_options();
  PlanReportView v2{cloud, plain, *rc, "test", {}, nullptr, {}, {}, false};
  const boost::json::object j2 = reports::plan_report_to_json(plan_report_tables(v2));
  EXPECT_FALSE(j2.at("assumptions").as_object().contains("cost_model"));
  EXPECT_FALSE(j2.at("assumptions").as_object().contains("ownership"));
}

TEST(Pricing, OwnedBudgetBuysMoreThanTheSameCloudBudget) {
  auto f = builtin_ownership();
  ASSERT_TRUE(f.ok());
  simulator::Cluster cloud = cluster("dgx-h100");
  simulator::Cluster owned = cloud;
  auto po = make_pricing("owned", true, owned, *f, {});
  ASSERT_TRUE(po.ok());
  owned.usd_per_gpu_hour = po->usd_per_gpu_hour();
  SearchOptions o = small_options();
  o.budget_usd = 600;  // 16 GPUs x 24 h x $6.88 = $2,642 a day on the cloud
  auto rc = search(cloud, o);
  auto ro = search(owned, o);
  ASSERT_TRUE(rc.ok() && ro.ok());
  ASSERT_GE(ro->best, 0);
  const double owned_params = ro->candidates[ro->best].params;
  const double cloud_params = rc->best >= 0 ? rc->candidates[rc->best].params : 0;
  EXPECT_GT(owned_params, cloud_params);
  EXPECT_LE(ro->candidates[ro->best].cost_usd, 600);
}

TEST(Pricing, FrontierCellsCarryTheCostOfEachModel) {
  auto f = builtin_ownership();
  ASSERT_TRUE(f.ok());
  FrontierStudy s;
  for (const char* name : {"dgx-h100", "dgx-b200"}) {
    FrontierHardware h{cluster(name), small_options(), {}};
    for (const char* m : {"cloud", "owned"}) {
      auto p = make_pricing(m, true, h.cluster, *f, {});
      ASSERT_TRUE(p.ok());
      h.pricings.push_back(*p);
    }
    h.options.pricing = h.pricings[0];
    s.hardware.push_back(std::move(h));
  }
  s.gpus = {8, 16};
  s.days = {1};
  s.family = "gpt";
  s.cost_models = {"cloud", "owned"};
  auto t = run_frontier(s, ProcessGroup{}, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->cost_models, (std::vector<std::string>{"cloud", "owned"}));
  ASSERT_EQ(t->pricing.size(), 2u);
  EXPECT_EQ(t->pricing[0][1].cost_model, "owned");
  EXPECT_NEAR(t->pricing[0][1].usd_per_gpu_hour, 1.0664, 1e-4);
  EXPECT_DOUBLE_EQ(t->pricing[1][1].tdp_w, 1000);
  ASSERT_EQ(t->cells.size(), 4u);
  for (const reports::FrontierCell& c : t->cells) {
    ASSERT_TRUE(c.found) << c.hardware << " " << c.gpus;
    ASSERT_EQ(c.costs_usd.size(), 2u);
    const size_t h = c.hardware == "dgx-h100" ? 0 : 1;
    EXPECT_TRUE(std::isnan(c.costs_usd[0]) || c.costs_usd[0] == c.cost_usd);
    for (size_t m = 0; m < 2; ++m) {
      const double price = t->pricing[h][m].usd_per_gpu_hour;
      if (price > 0) {
        EXPECT_NEAR(c.costs_usd[m], c.gpu_days * 24 * price, c.costs_usd[m] * 1e-12);
      } else {
        EXPECT_TRUE(std::isnan(c.costs_usd[m]));  // no price (b200's cloud price, today)
      }
    }
  }
}

}  // namespace
}  // namespace llmplan::planner

#include "reports/frontier_report.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reports/svg_heatmap.h"
#include "tests/reports/svg_balanced.h"

namespace llmplan::reports {
namespace {

using testing::balanced;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

FrontierCell answer(const std::string& hw, int gpus, double days, double params, double loss,
                    double cost) {
  FrontierCell c;
  c.hardware = hw;
  c.gpu = "h100-sxm";
  c.gpus = gpus;
  c.days = days;
  c.found = true;
  c.model = "llama-l80-h8192";
  c.architecture = "80 layers, hidden 8192, 64 heads";
  c.params = params;
  c.active_params = params;
  c.tokens = 20 * params;
  c.loss = loss;
  c.plan = "t8 p4 d32 b1 B1536 SP ZeRO-1";
  c.gpus_used = gpus;
  c.train_days = days * 0.9;
  c.mfu = 0.41;
  c.mfu_precision_peak = 0.205;
  c.model_tflops_per_gpu = 405.49;
  c.precision = "fp8";
  c.cp = 2;
  c.ep = 1;
  c.etp = 1;
  c.experts = 0;
  c.cost_usd = cost;
  c.gpu_days = gpus * c.train_days;
  return c;
}

FrontierCell none(const std::string& hw, int gpus, double days, const std::string& why) {
  FrontierCell c;
  c.hardware = hw;
  c.gpu = "h100-sxm";
  c.gpus = gpus;
  c.days = days;
  c.why = why;
  return c;
}

// One hardware, GPUs {1024, 2048}, deadlines {14, 30, 60}, no budget.
FrontierTable study() {
  FrontierTable t;
  t.hardware = {"dgx-h100"};
  t.gpu_names = {"h100-sxm"};
  t.gpu_price_usd_per_hour = {6.88};
  t.gpus = {1024, 2048};
  t.days = {14, 30, 60};
  t.budgets_usd = {0};
  t.objective = "largest";
  t.law = "chinchilla";
  t.family = "llama";
  t.simulations = 120;
  t.plan_lookups = 480;
  t.command_line = {"llmplan", "frontier", "--gpus", "1024,2048", "--days", "14,30,60"};
  t.cells = {none("dgx-h100", 1024, 14, "memory"),
             answer("dgx-h100", 1024, 30, 30e9, 2.20, 1.0e6),
             answer("dgx-h100", 1024, 60, 70.2e9, 2.05, 2.5e6),
             answer("dgx-h100", 2048, 14, 34e9, 2.18, 1.2e6),
             answer("dgx-h100", 2048, 30, 80e9, 2.02, 2.0e6),
             answer("dgx-h100", 2048, 60, 150e9, 2.03, 3.0e6)};
  t.cells[2].caveats = {"mfu-above-validated"};
  t.cells[4].caveats = {"mfu-above-validated", "uncalibrated-gpu"};
  return t;
}

TEST(FrontierReport, CostPerLossPoint) {
  const FrontierTable t = study();
  // 1024 GPUs, 60 d vs 30 d: ($2.5M - $1.0M) / ((2.20 - 2.05) / 0.01) = $100K.
  EXPECT_NEAR(cost_per_loss_point(t, 2), 1.5e6 / 15, 1e-6);
  // 2048 GPUs, 30 d vs 14 d: ($2.0M - $1.2M) / 16 = $50K.
  EXPECT_NEAR(cost_per_loss_point(t, 4), 0.8e6 / 16, 1e-6);
  EXPECT_TRUE(std::isnan(cost_per_loss_point(t, 3)));   // shortest deadline
  EXPECT_TRUE(std::isnan(cost_per_loss_point(t, 1)));   // previous cell has no answer
  EXPECT_TRUE(std::isnan(cost_per_loss_point(t, 0)));   // no answer
  EXPECT_TRUE(std::isnan(cost_per_loss_point(t, 5)));   // loss got worse
  EXPECT_TRUE(std::isnan(cost_per_loss_point(t, 99)));  // out of range
  // Cheaper and better: negative.
  FrontierTable u = t;
  u.cells[2].cost_usd = 0.5e6;
  EXPECT_NEAR(cost_per_loss_point(u, 2), -0.5e6 / 15, 1e-6);
  // No price: undefined.
  u.cells[2].cost_usd = 0;
  EXPECT_TRUE(std::isnan(cost_per_loss_point(u, 2)));
  // Cells in any order, deadlines listed in any order.
  FrontierTable r = t;
  std::swap(r.cells[1], r.cells[2]);
  std::swap(r.days[0], r.days[2]);
  EXPECT_NEAR(cost_per_loss_point(r, 1), 1.5e6 / 15, 1e-6);
}

// Two hardware entries priced under two cost models (--cost-model
// cloud,owned): the study() grid on dgx-h100 at $6.88 (cloud) / $1.07
// (owned), and dgx-b200 with a larger model at every cell, no cloud price,
// $1.70 owned.
FrontierTable priced_study() {
  FrontierTable t = study();
  t.hardware = {"dgx-h100", "dgx-b200"};
  t.gpu_names = {"h100-sxm", "b200"};
  t.gpu_price_usd_per_hour = {6.88, 0};
  t.cost_models = {"cloud", "owned"};
  FrontierPricing cloud_h, owned_h, cloud_b, owned_b;
  cloud_h.cost_model = cloud_b.cost_model = "cloud";
  cloud_h.usd_per_gpu_hour = 6.88;
  owned_h.cost_model = owned_b.cost_model = "owned";
  owned_h.usd_per_gpu_hour = 1.07;
  owned_h.capex_usd_per_gpu = 39625;
  owned_h.amortisation_years = 5;
  owned_h.pue = 1.58;
  owned_h.usd_per_kwh = 0.0806;
  owned_h.tdp_w = 700;
  owned_h.it_power_w = 1275;
  owned_h.capex_source = "capex source";
  owned_h.years_source = "years source";
  owned_b = owned_h;
  owned_b.usd_per_gpu_hour = 1.70;
  owned_b.tdp_w = 1000;
  t.pricing = {{cloud_h, owned_h}, {cloud_b, owned_b}};
  const size_t n = t.cells.size();
  for (size_t i = 0; i < n; ++i) {
    FrontierCell& h = t.cells[i];
    if (h.found) h.costs_usd = {h.cost_usd, h.gpu_days * 24 * 1.07};
    FrontierCell b = h;
    b.hardware = "dgx-b200";
    b.gpu = "b200";
    if (b.found) {
      b.params = h.params * 1.5;
      b.loss = h.loss - 0.02;
      b.cost_usd = NAN;
      b.costs_usd = {NAN, b.gpu_days * 24 * 1.70};
    }
    t.cells.push_back(b);
  }
  return t;
}

TEST(FrontierReport, CostModelsAddColumnsKeysAndTheHardwareComparison) {
  const FrontierTable t = priced_study();
  // CSV: one cost column per model, appended after the existing ones.
  const std::string csv = frontier_csv(t);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",model_tflops_per_gpu,cost_usd_cloud,cost_usd_owned"), std::string::npos)
      << header;
  // dgx-h100, 1024 GPUs, 30 days: 1024 x 27 days x 24 h x $1.07 = $710,000.64.
  EXPECT_NE(csv.find(",405.49,1000000,710000.64\n"), std::string::npos) << csv;
  // dgx-b200: no cloud price, an empty field.
  EXPECT_NE(csv.find(",405.49,,1128038.4\n"), std::string::npos) << csv;

  // JSON: cost_models, per hardware the pricing with the ownership block,
  // per cell the cost under each model (null when unknown).
  auto v = boost::json::parse(frontier_json(t));
  const auto& o = v.as_object();
  ASSERT_TRUE(o.contains("cost_models"));
  EXPECT_EQ(o.at("cost_models").as_array().size(), 2u);
  const auto& p = o.at("pricing").as_array();
  ASSERT_EQ(p.size(), 2u);
  const auto& h100 = p[0].as_object().at("by_cost_model").as_array();
  EXPECT_TRUE(h100[0].as_object().at("ownership").is_null());
  const auto& w = h100[1].as_object().at("ownership").as_object();
  for (const char* key : {"capex_usd_per_gpu", "amortisation_years", "pue", "usd_per_kwh", "tdp_w",
                          "capex_usd_per_gpu_hour", "power_usd_per_gpu_hour", "sources"}) {
    EXPECT_TRUE(w.contains(key)) << key;
  }
  const auto& cell = o.at("cells").as_array()[1].as_object();
  EXPECT_DOUBLE_EQ(cell.at("costs_usd").as_object().at("owned").to_number<double>(), 710000.64);
  const auto& b200 = o.at("cells").as_array()[t.cells.size() / 2 + 1].as_object();
  EXPECT_TRUE(b200.at("costs_usd").as_object().at("cloud").is_null());

  // Markdown: the cost models in the assumptions, and the comparison table
  // with one row per hardware for each GPU count x deadline.
  const std::string md = frontier_markdown(t);
  EXPECT_NE(md.find("- Cost models: cloud, owned"), std::string::npos);
  EXPECT_NE(md.find("  - dgx-h100, owned: $1.07 per GPU-hour = capex $39.6K / (5 years x 8,766 h)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("years: years source"), std::string::npos);
  const size_t cmp = md.find("## Hardware comparison");
  ASSERT_NE(cmp, std::string::npos);
  const std::string section = md.substr(cmp, md.find("## Answers") - cmp);
  EXPECT_NE(section.find("| GPUs | days | hardware | model | loss | train days | GPUs used | "
                         "cost cloud | $/B params cloud | $/0.01 loss vs ref cloud | cost owned | "
                         "$/B params owned | $/0.01 loss vs ref owned |"),
            std::string::npos)
      << section;
  // 2 GPU counts x 3 deadlines x 2 hardware rows, plus header and rule.
  EXPECT_EQ(count(section, "\n| "), 12u + 1u) << section;
  // 1024 GPUs, 30 days: h100 is the reference; b200 is 0.02 lower in loss
  // for 27,648 GPU-days x 24 h x $1.70 = $1,128,038.40 against $710,000.64
  // owned: $209,018.88 per 0.01.
  EXPECT_NE(section.find("| 1024 | 30 | dgx-h100 (ref) | 30.0B | 2.200 | 27.0 | 1024 | $1.00M | "
                         "$33.3K | ref | $710.0K | $23.7K | ref |"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("| 1024 | 30 | dgx-b200 | 45.0B | 2.180 | 27.0 | 1024 | n/a | n/a | n/a | "
                         "$1.13M | $25.1K | $209.0K |"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("| 1024 | 14 | dgx-b200 | — no plan fits"), std::string::npos) << section;

  // Without --cost-model none of this appears.
  const FrontierTable plain = study();
  EXPECT_EQ(frontier_markdown(plain).find("Hardware comparison"), std::string::npos);
  EXPECT_EQ(frontier_markdown(plain).find("Cost model"), std::string::npos);
  EXPECT_EQ(frontier_json(plain).find("cost_models"), std::string::npos);
  EXPECT_EQ(frontier_csv(plain).find("cost_usd_cloud"), std::string::npos);
}

TEST(FrontierReport, CsvHeaderAndValues) {
  FrontierTable t = study();
  t.cells[2].plan = "t8 p4, \"quoted\"";
  const std::string csv = frontier_csv(t);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(
      header.rfind("hardware,gpu,gpus,days,budget_usd,found,why,model,params,active_params,tokens,"
                   "loss,plan,gpus_used,train_days,mfu,cost_usd,gpu_days,caveats",
                   0),
      0u);
  EXPECT_EQ(count(csv, "\n"), 1u + t.cells.size());
  EXPECT_NE(csv.find("\ndgx-h100,h100-sxm,1024,14,0,0,memory,,,"), std::string::npos);
  EXPECT_NE(csv.find("\ndgx-h100,h100-sxm,1024,60,0,1,,llama-l80-h8192,70200000000,70200000000,"
                     "1404000000000,2.05,\"t8 p4, \"\"quoted\"\"\",1024,54,0.41,2500000,55296,"
                     "mfu-above-validated,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("mfu-above-validated;uncalibrated-gpu"), std::string::npos);
  // The cost per loss point of cell 2 (about $100K), then (issue 25) the
  // plan's precision, cp, ep, etp, experts and both MFU figures end its row.
  EXPECT_NE(header.find(",cost_per_loss_point_usd,precision,cp,ep,etp,experts,mfu_precision_peak,"
                        "model_tflops_per_gpu"),
            std::string::npos)
      << header;
  const size_t row2 = csv.find("\ndgx-h100,h100-sxm,1024,60,");
  const size_t end2 = csv.find('\n', row2 + 1);
  const std::string tail = ",fp8,2,1,1,0,0.205,405.49";
  ASSERT_EQ(csv.compare(end2 - tail.size(), tail.size(), tail), 0) << csv.substr(row2, end2 - row2);
  const size_t before = end2 - tail.size();
  EXPECT_NEAR(std::stod(csv.substr(csv.rfind(',', before - 1) + 1, before)), 1e5, 1e-6);
  // A cell without an answer has the same number of fields.
  const size_t row0 = csv.find("\ndgx-h100,h100-sxm,1024,14,");
  EXPECT_EQ(count(csv.substr(row0, csv.find('\n', row0 + 1) - row0), ","), count(header, ","));
}

TEST(FrontierReport, JsonParsesAndRoundTrips) {
  const FrontierTable t = study();
  const std::string text = frontier_json(t);
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(text, ec);
  ASSERT_FALSE(ec) << text;
  const boost::json::object& o = v.as_object();
  // Top-level keys in a fixed order.
  std::vector<std::string> keys;
  for (const auto& kv : o) keys.emplace_back(kv.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"hardware", "gpu_names", "gpu_price_usd_per_hour", "gpus",
                                      "days", "budgets_usd", "objective", "law", "family",
                                      "simulations", "plan_lookups", "command_line", "cells"}));
  EXPECT_EQ(o.at("hardware").as_array().at(0).as_string(), "dgx-h100");
  EXPECT_EQ(o.at("gpus").as_array().at(1).to_number<int>(), 2048);
  EXPECT_EQ(o.at("days").as_array().at(2).to_number<double>(), 60.0);
  EXPECT_EQ(o.at("gpu_price_usd_per_hour").as_array().at(0).to_number<double>(), 6.88);
  EXPECT_EQ(o.at("simulations").to_number<long>(), 120);
  EXPECT_EQ(o.at("plan_lookups").to_number<long>(), 480);
  EXPECT_EQ(o.at("law").as_string(), "chinchilla");
  EXPECT_EQ(o.at("command_line").as_array().size(), t.command_line.size());
  const boost::json::array& cells = o.at("cells").as_array();
  ASSERT_EQ(cells.size(), t.cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    const boost::json::object& c = cells[i].as_object();
    const FrontierCell& e = t.cells[i];
    EXPECT_EQ(c.at("hardware").as_string(), e.hardware);
    EXPECT_EQ(c.at("gpu").as_string(), e.gpu);
    EXPECT_EQ(c.at("gpus").to_number<int>(), e.gpus);
    EXPECT_EQ(c.at("days").to_number<double>(), e.days);
    EXPECT_EQ(c.at("budget_usd").to_number<double>(), e.budget_usd);
    EXPECT_EQ(c.at("found").as_bool(), e.found);
    EXPECT_EQ(c.at("why").as_string(), e.why);
    EXPECT_EQ(c.at("model").as_string(), e.model);
    EXPECT_EQ(c.at("architecture").as_string(), e.architecture);
    EXPECT_EQ(c.at("params").to_number<double>(), e.params);
    EXPECT_EQ(c.at("active_params").to_number<double>(), e.active_params);
    EXPECT_EQ(c.at("tokens").to_number<double>(), e.tokens);
    EXPECT_EQ(c.at("loss").to_number<double>(), e.loss);
    EXPECT_EQ(c.at("plan").as_string(), e.plan);
    EXPECT_EQ(c.at("gpus_used").to_number<int>(), e.gpus_used);
    EXPECT_EQ(c.at("train_days").to_number<double>(), e.train_days);
    EXPECT_EQ(c.at("mfu").to_number<double>(), e.mfu);
    EXPECT_EQ(c.at("mfu_precision_peak").to_number<double>(), e.mfu_precision_peak);
    EXPECT_EQ(c.at("model_tflops_per_gpu").to_number<double>(), e.model_tflops_per_gpu);
    EXPECT_EQ(c.at("precision").as_string(), e.precision);
    EXPECT_EQ(c.at("cp").to_number<int>(), e.cp);
    EXPECT_EQ(c.at("ep").to_number<int>(), e.ep);
    EXPECT_EQ(c.at("etp").to_number<int>(), e.etp);
    EXPECT_EQ(c.at("experts").to_number<int>(), e.experts);
    EXPECT_EQ(c.at("cost_usd").to_number<double>(), e.cost_usd);
    EXPECT_EQ(c.at("gpu_days").to_number<double>(), e.gpu_days);
    EXPECT_EQ(c.at("caveats").as_array().size(), e.caveats.size());
  }
  EXPECT_TRUE(cells[0].as_object().at("cost_per_loss_point_usd").is_null());
  EXPECT_NEAR(cells[2].as_object().at("cost_per_loss_point_usd").to_number<double>(), 1e5, 1e-6);
}

TEST(FrontierReport, MarkdownHasReuseLineTablesFiguresAndNotes) {
  const FrontierTable t = study();
  const std::string md = frontier_markdown(t);
  EXPECT_NE(md.find("120 simulations served 480 plan evaluations across 6 cells (reuse factor "
                    "4.0)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("`llmplan frontier --gpus 1024,2048 --days 14,30,60`"), std::string::npos);
  EXPECT_NE(md.find("| GPUs | 14 d | 30 d | 60 d |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1024 | — memory | 30.0B · 600.0B tok · loss 2.20 · 27.0 d · $1.00M | "
                    "70.2B · 1.40T tok · loss 2.05 · 54.0 d · $2.50M |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("## Plans per cell"), std::string::npos);
  EXPECT_NE(md.find("t8 p4 d32 b1 B1536 SP ZeRO-1"), std::string::npos);
  EXPECT_NE(md.find("41.0 %"), std::string::npos);
  for (const std::string& name : frontier_svg_names(t)) {
    EXPECT_NE(md.find("](" + name + ")"), std::string::npos) << name;
  }
  EXPECT_NE(md.find("Cost per loss point:"), std::string::npos);
  EXPECT_NE(md.find("Caveat `mfu-above-validated`"), std::string::npos);
  EXPECT_NE(md.find("2 cells: dgx-h100: 1024 GPUs at 60 d, 2048 GPUs at 30 d\n"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- No answer, memory (no plan fits in GPU memory), 1 cell: dgx-h100: 1024 "
                    "GPUs at 14 d\n"),
            std::string::npos)
      << md;
  // Summary: the largest model and where; the cheapest loss point.
  EXPECT_NE(md.find("- **dgx-h100**: an answer in 5 of 6 cells; the largest model is 150.0B "
                    "(2048 GPUs, 60 d: loss 2.03, $3.00M)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("the cheapest loss point is $50.0K per 0.01 at 2048 GPUs, 30 d"),
            std::string::npos);
  // Figures are linked with a description.
  EXPECT_NE(md.find("![Largest model (parameters): dgx-h100](frontier-params-dgx-h100.svg)"),
            std::string::npos);
  // A caveat on every answer of a hardware is summarised.
  FrontierTable all = t;
  for (FrontierCell& c : all.cells) c.caveats = {"uncalibrated-gpu"};
  EXPECT_NE(frontier_markdown(all).find("5 cells: all 5 answers on dgx-h100\n"), std::string::npos);
}

TEST(FrontierReport, SvgFilesHaveSafeNamesAndHeatmapsOneRectPerCell) {
  const FrontierTable t = study();
  const std::vector<SvgFile> files = frontier_svg_files(t);
  std::vector<std::string> names;
  for (const SvgFile& f : files) names.push_back(f.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"frontier-params-dgx-h100.svg", "frontier-loss-dgx-h100.svg",
                                      "frontier-cost-per-loss-point-dgx-h100.svg",
                                      "frontier-params-vs-gpu-days.svg"}));
  EXPECT_EQ(names, frontier_svg_names(t));
  for (const SvgFile& f : files) {
    EXPECT_TRUE(balanced(f.svg)) << f.name;
    EXPECT_EQ(f.svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << f.name;
  }
  const std::string& params = files[0].svg;
  // Background, six cells, colour bar.
  EXPECT_EQ(count(params, "<rect"), 1u + 6u + 1u);
  EXPECT_EQ(count(params, ">none</text>"), 1u);
  EXPECT_NE(params.find(">70.2B</text>"), std::string::npos);
  EXPECT_NE(params.find(">30 d</text>"), std::string::npos);
  EXPECT_NE(params.find(">2048</text>"), std::string::npos);
  EXPECT_NE(params.find("linearGradient"), std::string::npos);
  const std::string& cost = files[2].svg;
  EXPECT_EQ(count(cost, ">n/a</text>"), 3u);  // 2048x14, 1024x30, 2048x60
  EXPECT_NE(cost.find(">$100.0K</text>"), std::string::npos);
  EXPECT_NE(cost.find("Extra cost over the next shorter deadline per 0.01 of loss gained"),
            std::string::npos);
  EXPECT_NE(files[3].svg.find(">dgx-h100</text>"), std::string::npos);
}

TEST(FrontierReport, LossObjectiveAndSmallerPlans) {
  FrontierTable t = study();
  t.objective = "loss";
  t.cells[4].gpus_used = 1536;
  t.cells[4].active_params = 20e9;  // an MoE answer
  const std::string md = frontier_markdown(t);
  EXPECT_NE(md.find("# llmplan frontier: the lowest loss per cluster size and deadline"),
            std::string::npos);
  EXPECT_NE(md.find("the lowest loss is reached by 80.0B (2048 GPUs, 30 d: loss 2.02"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 80.0B (20.0B active) · 1.60T tok · loss 2.02 · 27.0 d · $2.00M · on 1536 "
                    "GPUs |"),
            std::string::npos)
      << md;
  // The loss heatmap: lower is brighter, legend ticks with shared decimals.
  const std::string loss = frontier_svg_files(t)[1].svg;
  for (const char* tick : {">2.05</text>", ">2.10</text>", ">2.15</text>", ">2.20</text>"}) {
    EXPECT_NE(loss.find(tick), std::string::npos) << tick;
  }
  const size_t best = loss.find(">2.020</text>");
  ASSERT_NE(best, std::string::npos);
  const size_t rect = loss.rfind("<rect", best);
  EXPECT_EQ(loss.find("fill=\"" + viridis_color(1) + "\"", rect), loss.find(" fill=", rect) + 1);
}

TEST(FrontierReport, OutputsAreByteIdenticalForTheSameTable) {
  const FrontierTable a = study(), b = study();
  EXPECT_EQ(frontier_csv(a), frontier_csv(b));
  EXPECT_EQ(frontier_json(a), frontier_json(b));
  EXPECT_EQ(frontier_markdown(a), frontier_markdown(b));
  const std::vector<SvgFile> fa = frontier_svg_files(a), fb = frontier_svg_files(b);
  ASSERT_EQ(fa.size(), fb.size());
  for (size_t i = 0; i < fa.size(); ++i) {
    EXPECT_EQ(fa[i].name, fb[i].name);
    EXPECT_EQ(fa[i].svg, fb[i].svg);
  }
}

TEST(FrontierReport, SeveralBudgetsAndOddHardwareNames) {
  FrontierTable t;
  t.hardware = {"DGX <H100> | \"x\"", "../a100 pod"};
  t.gpu_names = {"h100-sxm", "a100-80gb"};
  t.gpu_price_usd_per_hour = {6.88, 0};
  t.gpus = {64};
  t.days = {7};
  t.budgets_usd = {1e5, 1e6};
  for (const std::string& hw : t.hardware) {
    for (double b : t.budgets_usd) {
      FrontierCell c = answer(hw, 64, 7, 1e9, 2.9, 1e4);
      c.budget_usd = b;
      t.cells.push_back(c);
    }
  }
  const std::vector<SvgFile> files = frontier_svg_files(t);
  ASSERT_EQ(files.size(), 2u * 2u * 3u + 1u);
  EXPECT_EQ(files[0].name, "frontier-params-dgx-h100-x-budget-100000.svg");
  EXPECT_EQ(files[3].name, "frontier-params-dgx-h100-x-budget-1000000.svg");
  EXPECT_EQ(files[6].name, "frontier-params-a100-pod-budget-100000.svg");
  for (const SvgFile& f : files) {
    EXPECT_EQ(f.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_."),
              std::string::npos)
        << f.name;
    EXPECT_TRUE(balanced(f.svg)) << f.name;
    EXPECT_EQ(f.svg.find("<H100>"), std::string::npos);
  }
  EXPECT_NE(files[0].svg.find("DGX &lt;H100&gt; | &quot;x&quot;"), std::string::npos);
  const std::string md = frontier_markdown(t);
  EXPECT_NE(md.find("### DGX <H100> \\| \"x\", budget $100.0K"), std::string::npos) << md;
  EXPECT_NE(md.find("### ../a100 pod, budget $1.00M"), std::string::npos);
  EXPECT_NE(md.find("no price: costs not shown"), std::string::npos);
  // Equal answers: ties go to the first hardware listed.
  EXPECT_NE(md.find("which hardware gives the larger model (of 2 cells with an answer; ties to "
                    "the first listed): DGX <H100> \\| \"x\" in 2 cells, ../a100 pod in 0 cells"),
            std::string::npos)
      << md;
  // Every table row has as many unescaped pipes as its header.
  const std::string csv = frontier_csv(t);
  EXPECT_NE(csv.find("\"DGX <H100> | \"\"x\"\"\""), std::string::npos);
  EXPECT_FALSE(boost::json::parse(frontier_json(t)).as_object().empty());
}

TEST(FrontierReport, EdgeCasesNeverCrash) {
  std::vector<FrontierTable> tables;
  tables.emplace_back();  // empty
  FrontierTable one = study();
  one.gpus = {1024};
  one.days = {30};
  one.cells = {study().cells[1]};
  tables.push_back(one);
  FrontierTable missing = study();
  for (FrontierCell& c : missing.cells) c = none(c.hardware, c.gpus, c.days, "deadline");
  tables.push_back(missing);
  FrontierTable weird = study();
  weird.cells[1].params = NAN;
  weird.cells[2].loss = INFINITY;
  weird.cells[3].cost_usd = -INFINITY;
  weird.cells[4].params = 0;
  weird.cells[4].mfu = NAN;
  weird.cells[5].gpu_days = 0;
  weird.days.push_back(NAN);
  weird.simulations = 0;
  tables.push_back(weird);
  FrontierTable ragged = study();  // cells the axes do not list, one missing
  ragged.cells.pop_back();
  ragged.cells.push_back(answer("other", 8, 1, 1e8, 3.5, 10));
  ragged.hardware.clear();
  tables.push_back(ragged);
  for (const FrontierTable& t : tables) {
    const std::string json = frontier_json(t);
    boost::system::error_code ec;
    boost::json::parse(json, ec);
    EXPECT_FALSE(ec) << json;
    const std::string md = frontier_markdown(t);
    EXPECT_NE(md.find("simulations served"), std::string::npos);
    EXPECT_EQ(count(frontier_csv(t), "\n"), 1u + t.cells.size());
    const std::vector<SvgFile> files = frontier_svg_files(t);
    EXPECT_FALSE(files.empty());
    for (const SvgFile& f : files) {
      EXPECT_TRUE(balanced(f.svg)) << f.name;
      EXPECT_EQ(f.svg.find(">nan"), std::string::npos) << f.name;
      EXPECT_EQ(f.svg.find("inf<"), std::string::npos) << f.name;
    }
    for (size_t i = 0; i < t.cells.size() + 1; ++i) (void)cost_per_loss_point(t, i);
  }
  EXPECT_NE(frontier_markdown(tables[0]).find("The study has no cells."), std::string::npos);
  EXPECT_NE(frontier_markdown(tables[3]).find("reuse factor n/a"), std::string::npos);
  // All cells without answer: every heatmap cell grey, no colour bar.
  const std::vector<SvgFile> grey = frontier_svg_files(missing);
  EXPECT_EQ(count(grey[0].svg, ">none</text>"), 6u);
  EXPECT_EQ(grey[0].svg.find("linearGradient"), std::string::npos);
  EXPECT_NE(grey[3].svg.find("no cell has an answer"), std::string::npos);
  // The ragged table still lists the extra hardware.
  EXPECT_NE(frontier_markdown(ragged).find("### other"), std::string::npos);
}

TEST(FrontierReport, RandomTablesNeverCrash) {
  const double odd[] = {1.5, 0, -1, NAN, INFINITY, -INFINITY, 1e300, 1e-300, 3e10, 2.1};
  const std::string names[] = {"", "dgx-h100", "a|b", "<&>\"'", "x\ny", "ü-ß", "../..", "`c`"};
  uint64_t state = 12345;
  auto next = [&](uint64_t n) {  // a fixed LCG: the same tables on every run
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>((state >> 33) % n);
  };
  for (int round = 0; round < 60; ++round) {
    FrontierTable t;
    for (size_t h = next(3); h > 0; --h) t.hardware.push_back(names[next(8)]);
    for (size_t g = next(4); g > 0; --g) t.gpus.push_back(static_cast<int>(next(5)) * 512 - 512);
    for (size_t d = next(4); d > 0; --d) t.days.push_back(odd[next(10)]);
    for (size_t b = next(3); b > 0; --b) t.budgets_usd.push_back(odd[next(10)]);
    t.simulations = static_cast<long>(next(3)) - 1;
    t.plan_lookups = static_cast<long>(next(100));
    t.objective = next(2) ? "loss" : "largest";
    for (size_t c = next(12); c > 0; --c) {
      FrontierCell cell = answer(names[next(8)], static_cast<int>(next(4)) * 8, odd[next(10)],
                                 odd[next(10)], odd[next(10)], odd[next(10)]);
      cell.found = next(3) != 0;
      cell.budget_usd = odd[next(10)];
      cell.gpu_days = odd[next(10)];
      cell.why = cell.found ? "" : names[next(8)];
      if (next(2)) cell.caveats = {names[next(8)]};
      t.cells.push_back(cell);
    }
    const std::string json = frontier_json(t);
    boost::system::error_code ec;
    boost::json::parse(json, ec);
    EXPECT_FALSE(ec) << round;
    EXPECT_EQ(count(frontier_csv(t), "\n"), 1u + t.cells.size()) << round;
    EXPECT_NE(frontier_markdown(t).find("simulations served"), std::string::npos);
    const std::vector<SvgFile> files = frontier_svg_files(t);
    const std::vector<std::string> names_only = frontier_svg_names(t);
    ASSERT_EQ(files.size(), names_only.size());
    for (size_t i = 0; i < files.size(); ++i) EXPECT_EQ(files[i].name, names_only[i]);
    for (const SvgFile& f : files) {
      EXPECT_TRUE(balanced(f.svg)) << round << " " << f.name;
      EXPECT_EQ(f.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_."),
                std::string::npos)
          << f.name;
      EXPECT_NE(f.name[0], '.');
    }
    for (size_t i = 0; i <= t.cells.size(); ++i) {
      const double v = cost_per_loss_point(t, i);
      EXPECT_TRUE(std::isnan(v) || std::isfinite(v));
    }
  }
}

TEST(FrontierReport, HugeGridStaysLinear) {
  FrontierTable t;
  t.hardware = {"a", "b"};
  for (int g = 1; g <= 40; ++g) t.gpus.push_back(8 * g);
  for (int d = 1; d <= 30; ++d) t.days.push_back(d);
  t.budgets_usd = {0};
  for (const std::string& hw : t.hardware) {
    for (int g : t.gpus) {
      for (double d : t.days) {
        t.cells.push_back(answer(hw, g, d, 1e8 * g * d, 3.0 - 0.001 * g - 0.01 * d, 1e3 * g * d));
      }
    }
  }
  const std::vector<SvgFile> files = frontier_svg_files(t);
  ASSERT_EQ(files.size(), 2u * 3u + 1u);
  EXPECT_EQ(count(files[0].svg, "<rect"), 1u + 40u * 30u + 1u);
  EXPECT_TRUE(balanced(files[0].svg));
  EXPECT_NE(frontier_markdown(t).find("2400 cells"), std::string::npos);
}

TEST(SvgHeatmap, ColoursLabelsAndLegend) {
  Heatmap map;
  map.title = "t";
  map.row_labels = {"r1", "r2"};
  map.column_labels = {"c1", "c2", "c3"};
  map.values = {{1, 10, 100}, {NAN, 1000, 0}};
  map.log_scale = true;
  map.legend_title = "value";
  const std::string svg = render_heatmap_svg(map);
  EXPECT_TRUE(balanced(svg));
  EXPECT_EQ(count(svg, "<rect"), 1u + 6u + 1u);
  EXPECT_EQ(count(svg, ">none</text>"), 2u);  // NaN, and 0 on a log scale
  EXPECT_NE(svg.find("fill=\"" + viridis_color(0) + "\""), std::string::npos);  // 1: lowest
  EXPECT_NE(svg.find("fill=\"" + viridis_color(1) + "\""), std::string::npos);  // 1000
  EXPECT_NE(svg.find("fill=\"#d9d9d9\""), std::string::npos);
  // Light text on the dark end, dark text on the bright end.
  const size_t low = svg.find("fill=\"" + viridis_color(0) + "\"");
  EXPECT_NE(svg.find("fill=\"white\">1</text>", low), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#111\">1e3</text>"), std::string::npos) << svg;
  for (const char* tick : {">1</text>", ">10</text>", ">100</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(viridis_color(0), "#440154");
  EXPECT_EQ(viridis_color(1), "#fde725");
  EXPECT_EQ(viridis_color(2), "#fde725");
  EXPECT_EQ(viridis_color(NAN), "#440154");
  map.reverse = true;
  const std::string rev = render_heatmap_svg(map);
  EXPECT_NE(rev.find("fill=\"" + viridis_color(1) + "\" stroke=\"white\"/>\n<text"),
            std::string::npos);
  EXPECT_NE(rev, svg);
}

TEST(SvgHeatmap, EmptyAndOddInputs) {
  Heatmap empty;
  empty.title = "nothing & more";
  const std::string e = render_heatmap_svg(empty);
  EXPECT_TRUE(balanced(e));
  EXPECT_NE(e.find(">no data</text>"), std::string::npos);
  EXPECT_NE(e.find("nothing &amp; more"), std::string::npos);
  Heatmap odd;
  odd.row_labels = {"<a>"};
  odd.values = {{5, 5}, {5}};  // ragged, more rows than labels, one value
  odd.cell_labels = {{"x\"y"}};
  const std::string o = render_heatmap_svg(odd);
  EXPECT_TRUE(balanced(o));
  EXPECT_EQ(count(o, "<rect"), 1u + 4u + 1u);
  EXPECT_NE(o.find("&lt;a&gt;"), std::string::npos);
  EXPECT_NE(o.find(">x&quot;y</text>"), std::string::npos);
  EXPECT_EQ(render_heatmap_svg(odd), o);
  odd.cell_width_px = -3;  // clamped to 16 px: labels are cut
  const std::string tiny = render_heatmap_svg(odd);
  EXPECT_TRUE(balanced(tiny));
  EXPECT_NE(tiny.find(">x...</text>"), std::string::npos);
}

}  // namespace
}  // namespace llmplan::reports

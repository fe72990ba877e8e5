#include "reports/frontier_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <cstdint>

#include "reports/frontier_internal.h"
#include "reports/ownership_json.h"
#include "reports/table.h"
#include "base/strict_json.h"

namespace llmplan::reports {

using frontier_internal::cost_per_loss_point_in;
using frontier_internal::Grid;
using frontier_internal::join;
using frontier_internal::num;

double cost_per_loss_point(const FrontierTable& t, size_t cell) {
  if (cell >= t.cells.size()) return NAN;
  return cost_per_loss_point_in(Grid(t), t, cell);
}

std::string frontier_csv(const FrontierTable& t) {
  const Grid grid(t);
  std::vector<std::string> header = {"hardware",      "gpu",          "gpus",
               "days",          "budget_usd",   "found",
               "why",           "model",        "params",
               "active_params", "tokens",       "loss",
               "plan",          "gpus_used",    "train_days",
               "mfu",           "cost_usd",     "gpu_days",
               "caveats",       "architecture", "cost_per_loss_point_usd",
               "precision",     "cp",           "ep",
               "etp",           "experts",      "mfu_precision_peak",
               "model_tflops_per_gpu"};
  // --cost-model: one cost column per model, appended (no existing column
  // moves).
  for (const std::string& m : t.cost_models) header.push_back("cost_usd_" + m);
  if (t.failures) {  // issue 28, appended
    for (const char* h : {"compute_days", "expected_interruptions", "goodput", "checkpoint_interval_s"}) {
      header.push_back(h);
    }
  }
  Table table(std::move(header));
  for (size_t i = 0; i < t.cells.size(); ++i) {
    const FrontierCell& c = t.cells[i];
    std::vector<std::string> row = {
        c.hardware,          c.gpu, std::to_string(c.gpus), num(c.days), num(c.budget_usd),
        c.found ? "1" : "0", c.why};
    if (c.found) {
      row.insert(row.end(), {c.model, num(c.params), num(c.active_params), num(c.tokens),
                             num(c.loss), c.plan, std::to_string(c.gpus_used), num(c.train_days),
                             num(c.mfu), num(c.cost_usd), num(c.gpu_days), join(c.caveats, ";"),
                             c.architecture, num(cost_per_loss_point_in(grid, t, i)),
                             c.precision, std::to_string(c.cp), std::to_string(c.ep),
                             std::to_string(c.etp), std::to_string(c.experts),
                             num(c.mfu_precision_peak), num(c.model_tflops_per_gpu)});
    } else {
      row.insert(row.end(), 21, "");
    }
    for (size_t m = 0; m < t.cost_models.size(); ++m) {
      row.push_back(c.found && m < c.costs_usd.size() ? num(c.costs_usd[m]) : "");
    }
    if (t.failures) {
      const bool f = c.found && c.failures;
      row.insert(row.end(), {f ? num(c.compute_days) : "", f ? num(c.expected_interruptions) : "",
                             f ? num(c.goodput) : "", f ? num(c.checkpoint_interval_s) : ""});
    }
    for (std::string& cell : row) {  // one record per line
      std::replace(cell.begin(), cell.end(), '\n', ' ');
      std::replace(cell.begin(), cell.end(), '\r', ' ');
    }
    table.add_row(std::move(row));
  }
  return table.csv();
}

namespace {

namespace bj = boost::json;

bj::array json_strings(const std::vector<std::string>& v) {
  bj::array a;
  for (const std::string& s : v) a.emplace_back(s);
  return a;
}

template <typename T>
bj::array json_numbers(const std::vector<T>& v) {
  bj::array a;
  for (auto x : v) a.emplace_back(x);
  return a;
}

// Per hardware entry: {"hardware", "by_cost_model": [...]} (--cost-model).
bj::array frontier_pricing_json(const FrontierTable& t) {
  bj::array pricing;  // per hardware entry: {"hardware", "by_cost_model": [...]}
  for (size_t h = 0; h < t.pricing.size(); ++h) {
    bj::array models;
    for (const FrontierPricing& p : t.pricing[h]) {
      bj::object m;
      m["cost_model"] = p.cost_model;
      m["usd_per_gpu_hour"] = p.usd_per_gpu_hour;
      if (p.cost_model == "owned") {
        bj::object w;
        add_owned_cost_numbers(p, &w);
        w["sources"] = owned_cost_sources(p);
        m["ownership"] = std::move(w);
      } else {
        m["ownership"] = nullptr;
      }
      models.push_back(std::move(m));
    }
    bj::object e;
    e["hardware"] = h < t.hardware.size() ? t.hardware[h] : std::string();
    e["by_cost_model"] = std::move(models);
    pricing.push_back(std::move(e));
  }
  return pricing;
}

// Cell i's object.
bj::object frontier_cell_json(const FrontierTable& t, const Grid& grid, size_t i) {
  const FrontierCell& c = t.cells[i];
  bj::object j;
  j["hardware"] = c.hardware;
  j["gpu"] = c.gpu;
  j["gpus"] = c.gpus;
  j["days"] = c.days;
  j["budget_usd"] = c.budget_usd;
  j["found"] = c.found;
  j["why"] = c.why;
  j["model"] = c.model;
  j["architecture"] = c.architecture;
  j["params"] = c.params;
  j["active_params"] = c.active_params;
  j["tokens"] = c.tokens;
  j["loss"] = c.loss;
  j["plan"] = c.plan;
  j["gpus_used"] = c.gpus_used;
  j["train_days"] = c.train_days;
  j["mfu"] = c.mfu;
  j["mfu_precision_peak"] = c.mfu_precision_peak;
  j["model_tflops_per_gpu"] = c.model_tflops_per_gpu;
  j["precision"] = c.precision;
  j["cp"] = c.cp;
  j["ep"] = c.ep;
  j["etp"] = c.etp;
  j["experts"] = c.experts;
  j["cost_usd"] = c.cost_usd;
  j["gpu_days"] = c.gpu_days;
  j["caveats"] = json_strings(c.caveats);
  if (c.failures) {  // issue 28
    j["compute_days"] = c.compute_days;
    j["expected_interruptions"] = c.expected_interruptions;
    j["goodput"] = c.goodput;
    j["checkpoint_interval_s"] = c.checkpoint_interval_s;
  }
  const double cpl = cost_per_loss_point_in(grid, t, i);
  if (std::isfinite(cpl)) {
    j["cost_per_loss_point_usd"] = cpl;
  } else {
    j["cost_per_loss_point_usd"] = nullptr;
  }
  if (!t.cost_models.empty()) {
    bj::object costs;
    for (size_t m = 0; m < t.cost_models.size(); ++m) {
      if (c.found && m < c.costs_usd.size()) {
        costs[t.cost_models[m]] = c.costs_usd[m];
      } else {
        costs[t.cost_models[m]] = nullptr;
      }
    }
    j["costs_usd"] = std::move(costs);
  }
  return j;
}

}  // namespace

std::string frontier_json(const FrontierTable& t) {
  const Grid grid(t);
  bj::object o;
  o["hardware"] = json_strings(t.hardware);
  o["gpu_names"] = json_strings(t.gpu_names);
  o["gpu_price_usd_per_hour"] = json_numbers(t.gpu_price_usd_per_hour);
  o["gpus"] = json_numbers(t.gpus);
  o["days"] = json_numbers(t.days);
  o["budgets_usd"] = json_numbers(t.budgets_usd);
  o["objective"] = t.objective;
  o["law"] = t.law;
  o["family"] = t.family;
  o["simulations"] = static_cast<int64_t>(t.simulations);
  o["plan_lookups"] = static_cast<int64_t>(t.plan_lookups);
  o["command_line"] = json_strings(t.command_line);
  if (!t.cost_models.empty()) {
    o["cost_models"] = json_strings(t.cost_models);
    o["pricing"] = frontier_pricing_json(t);
  }
  bj::array cells;
  for (size_t i = 0; i < t.cells.size(); ++i) cells.push_back(frontier_cell_json(t, grid, i));
  o["cells"] = std::move(cells);
  // Non-finite numbers (which JSON cannot hold) are written as null.
  return llmplan::json::pretty(o);
}

}  // namespace llmplan::reports

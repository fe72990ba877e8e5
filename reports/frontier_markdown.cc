#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/format.h"
#include "reports/frontier_internal.h"
#include "reports/frontier_report.h"
#include "reports/table.h"

namespace llmplan::reports {

using frontier_internal::budget_text;
using frontier_internal::cost_per_loss_point_in;
using frontier_internal::days_text;
using frontier_internal::Figure;
using frontier_internal::figure_title;
using frontier_internal::figures;
using frontier_internal::Grid;
using frontier_internal::join;
using frontier_internal::kNone;
using frontier_internal::md_code;
using frontier_internal::md_escape;
using frontier_internal::safe_count;
using frontier_internal::safe_fixed;
using frontier_internal::why_text;

namespace {

// Cells listed by name in a note before "and N more".
constexpr size_t kListedCells = 12;

std::string caveat_text(const std::string& code) {
  if (code == "uncalibrated-gpu") {
    return "the GPU's cost-model constants were not fitted to measurements of it: the error is "
           "unknown";
  }
  if (code == "mfu-above-validated") {
    return "the predicted MFU is above the highest MFU of the runs the constants were fitted on";
  }
  if (code == "flash-attention-unfitted") {
    return "flash-attention efficiency is an assumed constant, not a fitted one";
  }
  if (code == "efficiency-above-ceiling") {
    return "a cost-model efficiency is above the GPU's physical ceiling";
  }
  if (code == "moe-uncalibrated") {
    return "mixture-of-experts layers are costed with dense-run constants (large error on "
           "published MoE runs)";
  }
  if (code == "nvfp4-unvalidated") {
    return "the FP4 GEMM efficiency was never fitted to NVFP4 runs: error unknown";
  }
  if (code == "moe-law-extrapolated") {
    return "the MoE loss law is used beyond the sizes or expert counts it was fitted on: the "
           "loss is a trend";
  }
  return "see the simulator's caveats";
}

// The Markdown text of one cell of the answers table.
std::string answer_text(const FrontierCell* c) {
  if (c == nullptr) return "— (not computed)";
  if (!c->found) return "— " + md_escape(c->why.empty() ? "no answer" : c->why);
  std::string params = safe_count(c->params);
  if (c->active_params > 0 && std::isfinite(c->active_params) &&
      c->active_params < 0.999 * c->params) {
    params += " (" + safe_count(c->active_params) + " active)";
  }
  std::string s = fmt::format("{} · {} tok · loss {} · {} d", params, safe_count(c->tokens),
                              safe_fixed(c->loss, 2), safe_fixed(c->train_days, 1));
  if (std::isfinite(c->cost_usd) && c->cost_usd > 0) s += " · " + usd_human(c->cost_usd);
  if (c->gpus_used > 0 && c->gpus_used < c->gpus) s += fmt::format(" · on {} GPUs", c->gpus_used);
  return s;
}

// True when answer `a` beats `b` for the objective (a larger model, or a
// lower loss; the other figure breaks ties).
bool better(const FrontierCell& a, const FrontierCell& b, bool largest) {
  if (largest) return a.params > b.params || (a.params == b.params && a.loss < b.loss);
  return a.loss < b.loss || (a.loss == b.loss && a.params > b.params);
}

// "## Summary": per hardware the range of answers, and which hardware wins
// each cell when there are several.
std::string summary_markdown(const FrontierTable& t, const Grid& grid, bool largest) {
  const bool several_budgets = grid.budgets.size() > 1;
  std::string md = "## Summary\n\n";
  auto where = [&](const FrontierCell& c) {
    std::string s = fmt::format("{} GPUs, {} d", c.gpus, days_text(c.days));
    if (several_budgets) s += ", budget " + budget_text(c.budget_usd);
    return s;
  };
  for (size_t h = 0; h < grid.hardware.size(); ++h) {
    size_t cells = 0, answered = 0;
    const FrontierCell* best = nullptr;
    const FrontierCell* smallest_setup = nullptr;
    const FrontierCell* cheapest_point = nullptr;
    double cheapest = NAN;
    for (size_t i = 0; i < t.cells.size(); ++i) {
      const FrontierCell& c = t.cells[i];
      if (c.hardware != grid.hardware[h]) continue;
      ++cells;
      if (!c.found) continue;
      ++answered;
      if (best == nullptr || better(c, *best, largest)) best = &c;
      if (smallest_setup == nullptr || c.gpu_days < smallest_setup->gpu_days) smallest_setup = &c;
      const double cpl = cost_per_loss_point_in(grid, t, i);
      if (!std::isnan(cpl) && (std::isnan(cheapest) || cpl < cheapest)) {
        cheapest = cpl;
        cheapest_point = &c;
      }
    }
    md += fmt::format("- **{}**: an answer in {} of {} cells", md_escape(grid.hardware[h]),
                      answered, cells);
    if (best != nullptr) {
      md += fmt::format("; {} {} ({}: loss {}{})",
                        largest ? "the largest model is" : "the lowest loss is reached by",
                        safe_count(best->params), where(*best), safe_fixed(best->loss, 2),
                        std::isfinite(best->cost_usd) && best->cost_usd > 0
                            ? ", " + usd_human(best->cost_usd)
                            : "");
    }
    if (smallest_setup != nullptr && smallest_setup != best) {
      md += fmt::format("; the fewest GPU-days with an answer ({}) train {} ({})",
                        safe_fixed(smallest_setup->gpu_days, 0), safe_count(smallest_setup->params),
                        where(*smallest_setup));
    }
    if (cheapest_point != nullptr) {
      md += fmt::format(
          "; the cheapest loss point is {} per 0.01 at {} (against the shorter deadline)",
          usd_human(cheapest), where(*cheapest_point));
    }
    md += "\n";
  }
  if (grid.hardware.size() > 1) {
    std::vector<size_t> wins(grid.hardware.size(), 0);
    size_t contested = 0;
    for (size_t g = 0; g < grid.gpus.size(); ++g) {
      for (size_t d = 0; d < grid.days.size(); ++d) {
        for (size_t b = 0; b < grid.budgets.size(); ++b) {
          size_t winner = kNone;
          for (size_t h = 0; h < grid.hardware.size(); ++h) {
            const FrontierCell* c = grid.at(h, g, d, b);
            if (c == nullptr || !c->found) continue;
            if (winner == kNone || better(*c, *grid.at(winner, g, d, b), largest)) winner = h;
          }
          if (winner == kNone) continue;
          ++contested;
          ++wins[winner];
        }
      }
    }
    std::vector<std::string> parts;
    for (size_t h = 0; h < grid.hardware.size(); ++h) {
      parts.push_back(fmt::format("{} in {} cell{}", md_escape(grid.hardware[h]), wins[h],
                                  wins[h] == 1 ? "" : "s"));
    }
    md += fmt::format(
        "- Same GPU count, deadline and budget, which hardware gives {} (of {} cells with an "
        "answer; ties to the first listed): {}\n",
        largest ? "the larger model" : "the lower loss", contested, join(parts, ", "));
  }
  return md + "\n";
}

// --cost-model: how each hardware entry's GPU-hour is priced, every number
// of the owned cost with its source.
std::string pricing_markdown(const FrontierTable& t) {
  std::string md = fmt::format(
      "- Cost model{}: {} (the first prices each cell's cost and the budgets; "
      "\"Hardware comparison\" below shows all)\n",
      t.cost_models.size() > 1 ? "s" : "", md_escape(join(t.cost_models, ", ")));
  const FrontierPricing* shared = nullptr;
  for (size_t h = 0; h < t.pricing.size() && h < t.hardware.size(); ++h) {
    for (const FrontierPricing& p : t.pricing[h]) {
      if (p.cost_model != "owned") {
        md += fmt::format("  - {}, cloud: {}\n", md_escape(t.hardware[h]),
                          p.usd_per_gpu_hour > 0 ? usd_human(p.usd_per_gpu_hour) + " per GPU-hour"
                                                 : std::string("no price"));
        continue;
      }
      md += fmt::format(
          "  - {}, owned: {} per GPU-hour = capex {} / ({:g} years x 8,766 h) = {} + power "
          "{:.0f} W (TDP {:.0f} W x (1 + non-GPU share {:.3f})) x PUE {:g} x ${:g}/kWh = {}. "
          "Capex: {}. Power: {}\n",
          md_escape(t.hardware[h]), usd_human(p.usd_per_gpu_hour), usd_human(p.capex_usd_per_gpu),
          p.amortisation_years, usd_human(p.capex_usd_per_gpu_hour), p.it_power_w, p.tdp_w,
          p.non_gpu_power_share, p.pue, p.usd_per_kwh, usd_human(p.power_usd_per_gpu_hour),
          md_escape(p.capex_source), md_escape(p.power_source));
      if (shared == nullptr) shared = &p;
    }
  }
  // Years, PUE and $/kWh are the same for every hardware entry (the same
  // defaults and flags).
  if (shared != nullptr) {
    md += fmt::format(
        "  - Owned, every hardware: years: {}. PUE: {}. $/kWh: {}. Not included: datacentre "
        "space, staff, scale-out network, storage (the owned cost is a floor)\n",
        md_escape(shared->years_source), md_escape(shared->pue_source),
        md_escape(shared->kwh_source));
  }
  return md;
}

// --cost-model: per GPU count, deadline (and budget) the hardware side by
// side: the answer, its cost under each cost model, dollars per billion
// parameters trained, and dollars per 0.01 of loss gained over the first
// hardware listed.
std::string comparison_markdown(const FrontierTable& t, const Grid& grid) {
  std::string md = "## Hardware comparison\n\n";
  const std::string ref = grid.hardware.empty() ? std::string() : grid.hardware.front();
  md += fmt::format(
      "Per GPU count and deadline, each hardware's answer side by side. For a buyer: the "
      "cost of the run under each cost model; $/B params, the cost per billion parameters "
      "trained (what a dollar buys in model size); and $/0.01 loss vs {}, the extra cost per "
      "0.01 of predicted loss gained over the first hardware listed, (cost - cost_ref) / "
      "((loss_ref - loss) / 0.01): negative means better and cheaper, n/a where the loss is "
      "not lower (compare the costs then) or a cost is unknown.\n\n",
      md_escape(ref));
  std::vector<std::string> header = {"GPUs", "days"};
  if (grid.budgets.size() > 1) header.push_back("budget");
  for (const char* c : {"hardware", "model", "loss", "train days", "GPUs used"}) header.push_back(c);
  for (const std::string& m : t.cost_models) {
    header.push_back("cost " + m);
    header.push_back("$/B params " + m);
    header.push_back("$/0.01 loss vs ref " + m);
  }
  Table table(header);
  for (size_t g = 0; g < grid.gpus.size(); ++g) {
    for (size_t d = 0; d < grid.days.size(); ++d) {
      for (size_t b = 0; b < grid.budgets.size(); ++b) {
        const FrontierCell* r = grid.at(0, g, d, b);
        for (size_t h = 0; h < grid.hardware.size(); ++h) {
          const FrontierCell* c = grid.at(h, g, d, b);
          std::vector<std::string> row = {std::to_string(grid.gpus[g]), days_text(grid.days[d])};
          if (grid.budgets.size() > 1) row.push_back(budget_text(grid.budgets[b]));
          row.push_back(md_escape(grid.hardware[h]) + (h == 0 ? " (ref)" : ""));
          if (c == nullptr || !c->found) {
            row.push_back(c == nullptr ? "—" : "— " + md_escape(why_text(c->why)));
            row.insert(row.end(), 3 + 3 * t.cost_models.size(), "");
            table.add_row(std::move(row));
            continue;
          }
          row.push_back(safe_count(c->params));
          row.push_back(safe_fixed(c->loss, 3));
          row.push_back(safe_fixed(c->train_days, 1));
          row.push_back(std::to_string(c->gpus_used));
          for (size_t m = 0; m < t.cost_models.size(); ++m) {
            const double cost = m < c->costs_usd.size() ? c->costs_usd[m] : NAN;
            const bool priced = std::isfinite(cost) && cost > 0;
            row.push_back(priced ? usd_human(cost) : "n/a");
            row.push_back(priced && c->params > 0 ? usd_human(cost / (c->params / 1e9)) : "n/a");
            std::string vs = "n/a";
            if (h == 0) {
              vs = "ref";
            } else if (priced && r != nullptr && r->found && m < r->costs_usd.size() &&
                       std::isfinite(r->costs_usd[m]) && r->costs_usd[m] > 0 &&
                       r->loss - c->loss > 0) {
              const double x = (cost - r->costs_usd[m]) / ((r->loss - c->loss) / 0.01);
              vs = x < 0 ? "-" + usd_human(-x) : usd_human(x);
            }
            row.push_back(vs);
          }
          table.add_row(std::move(row));
        }
      }
    }
  }
  return md + table.markdown() + "\n";
}

// "a, b, c and 4 more".
std::string list_cells(const std::vector<std::string>& names) {
  std::vector<std::string> shown(
      names.begin(),
      names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), kListedCells)));
  std::string s = join(shown, ", ");
  if (names.size() > shown.size()) s += fmt::format(" and {} more", names.size() - shown.size());
  return s;
}

// Where the cells of a note are: per hardware, every one ("all N answers on
// H" when they are all `total[h]` of it) or a list of them.
std::string cells_where(const Grid& grid, const std::vector<const FrontierCell*>& cells,
                        const std::vector<size_t>& total, const char* noun) {
  const bool several_budgets = grid.budgets.size() > 1;
  std::vector<std::string> groups;
  for (size_t h = 0; h < grid.hardware.size(); ++h) {
    std::vector<std::string> names;
    for (const FrontierCell* c : cells) {
      if (c->hardware != grid.hardware[h]) continue;
      std::string n = fmt::format("{} GPUs at {} d", c->gpus, days_text(c->days));
      if (several_budgets) n += " (" + budget_text(c->budget_usd) + ")";
      names.push_back(n);
    }
    if (names.empty()) continue;
    const std::string hw = md_escape(grid.hardware[h]);
    groups.push_back(names.size() == total[h] && names.size() > 1
                         ? fmt::format("all {} {} on {}", names.size(), noun, hw)
                         : hw + ": " + list_cells(names));
  }
  return join(groups, "; ");
}

// The title, the command and the study's assumptions (hardware, grid, reuse).
std::string frontier_header_markdown(const FrontierTable& t, const Grid& grid, bool largest) {
  std::string md;
  md += largest
            ? "# llmplan frontier: the largest model per cluster size and deadline\n\n"
            : "# llmplan frontier: the lowest loss per cluster size and deadline\n\n";
  if (!t.command_line.empty()) {
    std::vector<std::string> args;
    for (const std::string& a : t.command_line) args.push_back(shell_quote(a));
    md += "Command: " + md_code(join(args, " ")) + "\n\n";
  }
  md += fmt::format("- Objective: {} ({}); loss law: {}; model family: {}\n",
                    md_escape(t.objective.empty() ? "largest" : t.objective),
                    largest ? "the largest model that trains within the deadline"
                            : "the lowest predicted loss within the deadline",
                    md_escape(t.law.empty() ? "n/a" : t.law),
                    md_escape(t.family.empty() ? "n/a" : t.family));
  for (size_t h = 0; h < grid.hardware.size(); ++h) {
    const std::string gpu = grid.gpu_name(h);
    const double price = grid.price(h);
    md += fmt::format("- Hardware: {}{}{}\n", md_escape(grid.hardware[h]),
                      gpu.empty() ? "" : " (" + md_escape(gpu) + ")",
                      std::isfinite(price) && price > 0 ? ", " + usd_human(price) + " per GPU-hour"
                                                        : ", no price: costs not shown");
  }
  if (!t.cost_models.empty()) md += pricing_markdown(t);
  {
    std::vector<std::string> g, d, b;
    for (int x : grid.gpus) g.push_back(std::to_string(x));
    for (double x : grid.days) d.push_back(days_text(x));
    for (double x : grid.budgets) b.push_back(budget_text(x));
    md += fmt::format("- GPU counts: {}; deadlines (days): {}; budgets: {}\n", join(g, ", "),
                      join(d, ", "), join(b, ", "));
  }
  const std::string factor =
      t.simulations > 0 ? fmt::format("{:.1f}", static_cast<double>(t.plan_lookups) / t.simulations)
                        : "n/a";
  md += fmt::format(
      "- Reuse: {} simulations served {} plan evaluations across {} cells (reuse factor {}): "
      "deadline and budget do not change a simulation, so each (hardware, model, plan) was "
      "simulated once and shared by every cell that could use it\n\n",
      t.simulations, t.plan_lookups, t.cells.size(), factor);

  return md;
}

// "Answers": a table per hardware (and budget) of GPUs x deadlines.
std::string answers_markdown(const FrontierTable& t, const Grid& grid) {
  const bool several_budgets = grid.budgets.size() > 1;
  std::string md;
  // Answers.
  md += "## Answers\n\n";
  md +=
      "Rows: GPUs available; columns: deadline in days. Each cell reads: model size (total "
      "parameters) · training tokens · predicted loss · simulated training days · cost "
      "(GPUs used x hours x price per GPU-hour). The planner may use fewer GPUs than a row "
      "offers when that trains the same model in time more cheaply (see \"Plans per cell\"). "
      "\"—\" marks a cell without an answer, with the reason.\n\n";
  if (t.cells.empty()) md += "The study has no cells.\n\n";
  for (size_t h = 0; h < grid.hardware.size(); ++h) {
    for (size_t b = 0; b < grid.budgets.size(); ++b) {
      md += "### " + md_escape(grid.hardware[h]);
      if (several_budgets) md += ", budget " + budget_text(grid.budgets[b]);
      md += "\n\n";
      std::vector<std::string> header = {"GPUs"};
      for (double d : grid.days) header.push_back(days_text(d) + " d");
      Table table(header);
      for (size_t g = 0; g < grid.gpus.size(); ++g) {
        std::vector<std::string> row = {std::to_string(grid.gpus[g])};
        for (size_t d = 0; d < grid.days.size(); ++d)
          row.push_back(answer_text(grid.at(h, g, d, b)));
        table.add_row(std::move(row));
      }
      md += table.markdown() + "\n";
    }
  }

  return md;
}

// "Plans per cell": each answer's layout, GPUs, MFU and cost per loss point.
std::string plans_markdown(const FrontierTable& t, const Grid& grid) {
  const bool several_budgets = grid.budgets.size() > 1;
  std::string md;
  // Plans.
  md += "## Plans per cell\n\n";
  md +=
      "The parallel layout of each answer (t tensor, p pipeline, d data parallel, b micro "
      "batch, B global batch), the GPUs it uses, its model FLOP utilisation, and the cost "
      "per loss point (defined under Figures).\n\n";
  {
    std::vector<std::string> header = {"hardware", "GPUs", "days"};
    if (several_budgets) header.push_back("budget");
    for (const char* h : {"model", "plan", "GPUs used", "MFU (16-bit peak)",
                          "model TFLOP/s per GPU", "GPU-days", "$ per 0.01 loss"}) {
      header.push_back(h);
    }
    Table table(header);
    for (size_t i = 0; i < t.cells.size(); ++i) {
      const FrontierCell& c = t.cells[i];
      std::vector<std::string> row = {md_escape(c.hardware), std::to_string(c.gpus),
                                      days_text(c.days)};
      if (several_budgets) row.push_back(budget_text(c.budget_usd));
      if (c.found) {
        const double cpl = cost_per_loss_point_in(grid, t, i);
        row.insert(row.end(),
                   {md_escape(c.model), md_escape(c.plan), std::to_string(c.gpus_used),
                    std::isfinite(c.mfu) ? percent(c.mfu) : "n/a",
                    safe_fixed(c.model_tflops_per_gpu, 0), safe_fixed(c.gpu_days, 0),
                    std::isnan(cpl) ? "n/a" : usd_human(cpl)});
      } else {
        row.insert(row.end(), {"—", "no answer: " + md_escape(c.why.empty() ? "unknown" : c.why),
                               "", "", "", "", ""});
      }
      table.add_row(std::move(row));
    }
    md += table.markdown() + "\n";
  }

  return md;
}

// "Figures": the cost per loss point defined, and the figures' links.
std::string figures_markdown(const Grid& grid) {
  std::string md;
  // Figures.
  md += "## Figures\n\n";
  md +=
      "Cost per loss point: for a cell with an answer, the extra dollars its deadline costs "
      "over the previous (next shorter) deadline's cell with the same hardware, GPUs and "
      "budget, per 0.01 of predicted loss gained: (cost - cost_prev) / ((loss_prev - loss) / "
      "0.01). \"n/a\" at the shortest deadline, where the loss did not improve, or without a "
      "GPU price. A negative value means the longer deadline is both better and cheaper.\n\n";
  for (const Figure& f : figures(grid)) {
    std::string alt =
        f.h == kNone ? "Largest model vs GPU-days used, per hardware" : figure_title(grid, f);
    std::string escaped;
    for (char c : alt) {
      if (c == '[' || c == ']' || c == '\\') escaped += '\\';
      escaped += c == '\n' ? ' ' : c;
    }
    md += fmt::format("![{}]({})\n\n", escaped, f.name);
  }

  return md;
}

// "Notes": caveats and missing answers, by the cells they concern.
std::string notes_markdown(const FrontierTable& t, const Grid& grid) {
  std::string md;
  // Notes.
  md += "## Notes\n\n";
  // The cells a note is about, grouped by hardware.
  std::vector<size_t> answered(grid.hardware.size(), 0), listed(grid.hardware.size(), 0);
  std::map<std::string, std::vector<const FrontierCell*>> caveats, missing;
  for (const FrontierCell& c : t.cells) {
    const size_t h = grid.hardware_index(c.hardware);
    ++listed[h];
    if (c.found) {
      ++answered[h];
      for (const std::string& k : c.caveats) caveats[k].push_back(&c);
    } else {
      missing[c.why].push_back(&c);
    }
  }
  if (caveats.empty()) {
    md += "- No simulated answer carries a caveat.\n";
  } else {
    for (const auto& [code, cells] : caveats) {
      md += fmt::format("- Caveat {} ({}), {} cell{}: {}\n", md_code(code),
                        md_escape(caveat_text(code)), cells.size(), cells.size() == 1 ? "" : "s",
                        cells_where(grid, cells, answered, "answers"));
    }
  }
  if (missing.empty()) {
    md += t.cells.empty() ? "- No cells.\n" : "- Every cell has an answer.\n";
  } else {
    for (const auto& [why, cells] : missing) {
      md += fmt::format("- No answer, {} ({}), {} cell{}: {}\n",
                        md_escape(why.empty() ? "unknown" : why), md_escape(why_text(why)),
                        cells.size(), cells.size() == 1 ? "" : "s", cells_where(grid, cells, listed, "cells"));
    }
  }
  md +=
      "- Predictions come from the simulator and the loss law; treat a cell as a plan to "
      "validate with a short run on the real cluster, not as a guarantee.\n";
  return md;
}

}  // namespace

std::string frontier_markdown(const FrontierTable& t) {
  const Grid grid(t);
  const bool largest = t.objective != "loss";
  std::string md = frontier_header_markdown(t, grid, largest);
  md += summary_markdown(t, grid, largest);
  if (!t.cost_models.empty()) md += comparison_markdown(t, grid);
  md += answers_markdown(t, grid);
  md += plans_markdown(t, grid);
  md += figures_markdown(grid);
  md += notes_markdown(t, grid);
  return md;
}

}  // namespace llmplan::reports

#include "planner/plan_report.h"

#include <algorithm>
#include <fmt/format.h>

#include "reports/format.h"
#include "reports/svg_plot.h"
#include "reports/table.h"

namespace llmplan::planner {

using reports::count_human;
using reports::percent;
using reports::seconds_human;
using reports::usd_human;

std::string plan_label(const simulator::Plan& p) {
  std::string s = fmt::format("t{} p{} d{} b{} B{}", p.tensor_parallel, p.pipeline_parallel,
                              p.data_parallel, p.micro_batch_size, p.global_batch_size);
  if (p.virtual_stages > 1) s += fmt::format(" v{}", p.virtual_stages);
  if (p.recompute != simulator::Recompute::kNone) s += std::string(" ") + simulator::to_string(p.recompute);
  if (p.sequence_parallel) s += " SP";
  if (p.distributed_optimizer) s += " ZeRO-1";
  return s;
}

namespace {

std::string days_str(double d) { return d > 1e9 ? "inf" : fmt::format("{:.1f}", d); }

std::string usd_str(double usd, double price) { return price > 0 ? usd_human(usd) : "n/a"; }

reports::Table candidate_table(const PlanReportView& v, bool all) {
  reports::Table t({"params", "layers", "hidden", "heads", "tokens", "plan", "iteration", "days",
                    "MFU", "cost", "loss", "status"});
  const SearchResult& r = v.result;
  std::vector<int> rows;
  for (int i = static_cast<int>(r.candidates.size()) - 1; i >= 0; --i) rows.push_back(i);
  if (!all) {
    // Top candidates: the best, then the feasible ones by the objective, then
    // the smallest infeasible above it.
    std::vector<int> keep;
    if (r.best >= 0) keep.push_back(r.best);
    for (int i : rows) {
      if (i == r.best || keep.size() >= 8) continue;
      if (r.candidates[i].feasible || (r.best >= 0 && i > r.best && i <= r.best + 3)) keep.push_back(i);
    }
    std::sort(keep.begin(), keep.end(), [](int a, int b) { return a > b; });
    rows = keep;
  }
  for (int i : rows) {
    const Candidate& c = r.candidates[i];
    std::string plan = "-", iter = "-", mfu = "-";
    if (c.best_plan >= 0) {
      const PlanResult& p = r.plans[c.best_plan];
      plan = plan_label(p.plan);
      iter = seconds_human(p.iteration_time_s);
      mfu = percent(p.mfu);
    }
    std::string status = c.feasible ? (i == r.best ? "BEST" : "ok") : "too slow: " + c.why;
    if (!c.feasible && c.why == "memory") status = "no plan fits memory";
    t.add_row({count_human(c.params), std::to_string(c.model.num_layers),
               std::to_string(c.model.hidden_size), std::to_string(c.model.num_heads),
               count_human(c.tokens), plan, iter, c.best_plan >= 0 ? days_str(c.days) : "-", mfu,
               c.best_plan >= 0 ? usd_str(c.cost_usd, v.cluster.usd_per_gpu_hour) : "-",
               c.best_plan >= 0 ? fmt::format("{:.3f}", c.loss) : "-", status});
  }
  return t;
}

}  // namespace

std::vector<int> best_pareto(const PlanReportView& v) {
  const SearchResult& r = v.result;
  if (r.best < 0) return {};
  const Candidate& c = r.candidates[r.best];
  std::vector<int> idx;
  std::vector<double> time, cost;
  for (int i = 0; i < static_cast<int>(r.plans.size()); ++i) {
    const PlanResult& p = r.plans[i];
    if (p.shape != r.best || !p.fits || !(p.tokens_per_s > 0)) continue;
    const double d = training_days(p, c.tokens);
    idx.push_back(i);
    time.push_back(d);
    cost.push_back(d * 24.0 * p.gpus_used);  // GPU-hours (dollars when priced)
  }
  std::vector<int> out;
  for (int k : pareto_front(time, cost)) out.push_back(idx[k]);
  return out;
}

std::string plan_report_markdown(const PlanReportView& v) {
  const SearchResult& r = v.result;
  const SearchOptions& o = v.options;
  const double price = v.cluster.usd_per_gpu_hour;
  std::string md;
  md += fmt::format("# llmplan: the best model {} x {} can train in {} days\n\n", o.gpus,
                    v.cluster.gpu.name, o.days);
  md += "## Question and assumptions\n\n";
  md += fmt::format("- Cluster: {} ({} GPUs per node, {} peak bf16 per GPU){}\n", v.cluster.name,
                    v.cluster.gpus_per_node, fmt::format("{:.0f} TFLOP/s", v.cluster.gpu.peak_bf16_flops / 1e12),
                    price > 0 ? fmt::format(", {}/GPU-hour", usd_human(price)) : "");
  md += fmt::format("- Up to {} GPUs for {} days{}\n", o.gpus, o.days,
                    o.budget_usd > 0 ? ", budget " + usd_human(o.budget_usd) : "");
  md += fmt::format("- Objective: {}; law: {}; tokens: {}\n",
                    o.objective == Objective::kLargest ? "largest model" : "lowest predicted loss",
                    v.law_name,
                    o.objective == Objective::kLoss ? "as many as finish in time"
                    : o.tokens.use_law              ? "law's compute-optimal D for N"
                                       : fmt::format("{} per parameter", o.tokens.tokens_per_param));
  md += fmt::format("- Shapes: GPT-style, seq {}, vocab {}, head dim 128; global batch near {} tokens\n",
                    o.seq_length, o.vocab_size, count_human(o.target_batch_tokens));
  for (const std::string& n : v.notes) md += "- " + n + "\n";
  md += "\n## Answer\n\n";
  if (r.best < 0) {
    md += "**No feasible model**: no candidate finishes its tokens by the deadline";
    md += o.budget_usd > 0 ? " within the budget" : "";
    md += " with a plan that fits in memory.\n\n";
  } else {
    const Candidate& c = r.candidates[r.best];
    const PlanResult& p = r.plans[c.best_plan];
    md += fmt::format(
        "**{} parameters** ({} layers, hidden {}, {} heads) trained on **{} tokens** in **{} "
        "days** with plan **{}** on {} GPUs: iteration {}, MFU {}, cost {}, predicted loss "
        "{:.3f}.\n\n",
        count_human(c.params), c.model.num_layers, c.model.hidden_size, c.model.num_heads,
        count_human(c.tokens), days_str(c.days), plan_label(p.plan), p.gpus_used,
        seconds_human(p.iteration_time_s), percent(p.mfu), usd_str(c.cost_usd, price), c.loss);
  }
  md += "## Naive vs simulated\n\n";
  reports::Table nv({"", "naive (100% of peak)", "simulated"});
  const Candidate* best = r.best >= 0 ? &r.candidates[r.best] : nullptr;
  nv.add_row({"compute", fmt::format("{:.3g} FLOP", r.naive_flops),
              best ? fmt::format("{:.3g} FLOP (6ND)", 6.0 * best->params * best->tokens) : "-"});
  nv.add_row({"parameters", count_human(r.naive_params), best ? count_human(best->params) : "-"});
  nv.add_row({"tokens", count_human(r.naive_tokens), best ? count_human(best->tokens) : "-"});
  nv.add_row({"days for the naive model", fmt::format("{} (assumed)", o.days),
              r.naive_days > 0 ? days_str(r.naive_days) + " (simulated)" : "no plan fits"});
  nv.add_row({"days for the answer", "-", best ? days_str(best->days) : "-"});
  md += nv.markdown() + "\n";
  if (r.naive_days > o.days) {
    md += fmt::format("The naive Chinchilla model assumes every FLOP of peak is usable; simulated, "
                      "it needs {} days, {:.1f}x the deadline.\n\n",
                      days_str(r.naive_days), r.naive_days / o.days);
  }
  md += "## Top candidates\n\n" + candidate_table(v, false).markdown() + "\n";
  md += "## Time-cost Pareto front of plans for the chosen model\n\n";
  const std::vector<int> front = best_pareto(v);
  if (front.empty()) {
    md += "(no chosen model)\n\n";
  } else {
    reports::Table pt({"plan", "GPUs", "iteration", "days", "MFU", "GPU-hours", "cost"});
    for (int i : front) {
      const PlanResult& p = r.plans[i];
      const double d = training_days(p, best->tokens);
      pt.add_row({plan_label(p.plan), std::to_string(p.gpus_used), seconds_human(p.iteration_time_s),
                  days_str(d), percent(p.mfu), count_human(d * 24 * p.gpus_used),
                  usd_str(d * 24 * p.gpus_used * price, price)});
    }
    md += pt.markdown() + "\n";
  }
  md += "## Why larger models failed\n\n";
  int shown = 0;
  for (int i = r.best + 1; i < static_cast<int>(r.candidates.size()) && shown < 6; ++i, ++shown) {
    const Candidate& c = r.candidates[i];
    if (c.feasible) continue;
    if (c.why == "memory") {
      md += fmt::format("- {} ({} layers, hidden {}): no plan fits in {} of GPU memory\n",
                        count_human(c.params), c.model.num_layers, c.model.hidden_size,
                        reports::bytes_human(v.cluster.gpu.hbm_bytes));
    } else {
      md += fmt::format("- {} ({} layers, hidden {}): {} days at best ({}), {}\n", count_human(c.params),
                        c.model.num_layers, c.model.hidden_size, days_str(c.days),
                        c.best_plan >= 0 ? plan_label(r.plans[c.best_plan].plan) : "-",
                        c.why == "budget" ? "over the budget" : "misses the deadline");
    }
  }
  if (shown == 0) md += "- (none larger were evaluated)\n";
  md += fmt::format("\n{} candidate shapes and {} plans simulated.\n", r.candidates.size(),
                    r.plans_evaluated);
  return md;
}

std::string candidates_csv(const PlanReportView& v) { return candidate_table(v, true).csv(); }

std::string plans_csv(const PlanReportView& v) {
  const SearchResult& r = v.result;
  reports::Table t({"params", "layers", "hidden", "tp", "pp", "dp", "micro_batch", "global_batch",
                    "virtual_stages", "recompute", "sequence_parallel", "distributed_optimizer",
                    "gpus", "fits", "iteration_s", "mfu", "peak_memory_bytes", "days", "cost_usd"});
  for (const PlanResult& p : r.plans) {
    const Candidate& c = r.candidates[p.shape];
    const double tokens = c.tokens > 0 ? c.tokens : rule_tokens(v.options.tokens, v.options.law, c.params);
    const double d = training_days(p, tokens);
    t.add_row({fmt::format("{:.0f}", c.params), std::to_string(c.model.num_layers),
               std::to_string(c.model.hidden_size), std::to_string(p.plan.tensor_parallel),
               std::to_string(p.plan.pipeline_parallel), std::to_string(p.plan.data_parallel),
               std::to_string(p.plan.micro_batch_size), std::to_string(p.plan.global_batch_size),
               std::to_string(p.plan.virtual_stages), simulator::to_string(p.plan.recompute),
               p.plan.sequence_parallel ? "1" : "0", p.plan.distributed_optimizer ? "1" : "0",
               std::to_string(p.gpus_used), p.fits ? "1" : "0",
               fmt::format("{:.6g}", p.iteration_time_s), fmt::format("{:.4f}", p.mfu),
               fmt::format("{:.0f}", p.peak_memory_bytes), p.fits ? fmt::format("{:.3f}", d) : "",
               p.fits ? fmt::format("{:.0f}", training_cost_usd(p, d, v.cluster.usd_per_gpu_hour)) : ""});
  }
  return t.csv();
}

std::string days_vs_params_svg(const PlanReportView& v) {
  reports::Plot plot;
  plot.title = "Training days vs model size";
  plot.x = {"parameters", true};
  plot.y = {"days (best plan)", true};
  reports::PlotSeries ok{"finishes in time", reports::SeriesKind::kScatter, {}, {}, "#2a7", false};
  reports::PlotSeries late{"misses deadline/budget", reports::SeriesKind::kScatter, {}, {}, "#c33", false};
  for (const Candidate& c : v.result.candidates) {
    if (c.best_plan < 0 || !(c.days > 0) || c.days > 1e9) continue;
    auto& s = c.feasible ? ok : late;
    s.x.push_back(c.params);
    s.y.push_back(c.days);
  }
  if (!ok.x.empty()) plot.series.push_back(ok);
  if (!late.x.empty()) plot.series.push_back(late);
  plot.references.push_back({reports::ReferenceKind::kHorizontal, v.options.days, "deadline"});
  if (v.result.naive_params > 0) {
    plot.references.push_back({reports::ReferenceKind::kVertical, v.result.naive_params, "naive Chinchilla N"});
  }
  auto svg = reports::render_svg(plot);
  return svg.ok() ? svg.value() : "";
}

std::string pareto_svg(const PlanReportView& v) {
  const SearchResult& r = v.result;
  if (r.best < 0) return "";
  const Candidate& c = r.candidates[r.best];
  reports::Plot plot;
  plot.title = "Plans for the chosen model: time vs GPU-hours";
  plot.x = {"days", true};
  plot.y = {"GPU-hours", true};
  reports::PlotSeries all{"plans", reports::SeriesKind::kScatter, {}, {}, "#999", false};
  for (const PlanResult& p : r.plans) {
    if (p.shape != r.best || !p.fits || !(p.tokens_per_s > 0)) continue;
    const double d = training_days(p, c.tokens);
    all.x.push_back(d);
    all.y.push_back(d * 24 * p.gpus_used);
  }
  reports::PlotSeries front{"Pareto front", reports::SeriesKind::kLine, {}, {}, "#36c", false};
  for (int i : best_pareto(v)) {
    const double d = training_days(r.plans[i], c.tokens);
    front.x.push_back(d);
    front.y.push_back(d * 24 * r.plans[i].gpus_used);
  }
  if (all.x.empty()) return "";
  plot.series = {all, front};
  plot.references.push_back({reports::ReferenceKind::kVertical, v.options.days, "deadline"});
  auto svg = reports::render_svg(plot);
  return svg.ok() ? svg.value() : "";
}

}  // namespace llmplan::planner

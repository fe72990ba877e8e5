// The report's training-objective section (issue 29): --tokens,
// --unique-tokens, --inference-tokens (planner/search/objective.h), in
// Markdown and as result.json's "training_objective".
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "reports/plan_report.h"
#include "reports/plan_report_json.h"
#include "reports/format.h"
#include "reports/table.h"
#include "scaling/objectives.h"

namespace llmplan::reports {
namespace {


boost::json::value num(double x) {
  return std::isfinite(x) ? boost::json::value(x) : boost::json::value(nullptr);
}

double active_of(const CandidateRow& c) { return c.active_params > 0 ? c.active_params : c.params; }

// Inference GPU-hours of `params` active parameters serving T tokens at the
// serving MFU on the cluster's GPU (0 without --serving-mfu).
double inference_gpu_hours(const PlanReport& v, double params) {
  const TrainingInputs& t = v.options.training;
  if (!(t.serving_mfu > 0) || !(v.cluster.gpu.peak_bf16_flops > 0)) return 0;
  return 2.0 * params * t.inference_tokens / (v.cluster.gpu.peak_bf16_flops * t.serving_mfu) /
         3600.0;
}

std::string flops_text(double f) { return fmt::format("{:.3g}", f); }

// --unique-tokens: the data limit, the answer's epochs and the best few by loss.
std::string unique_tokens_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  const TrainingInputs& t = v.options.training;
  const CandidateRow* best = r.best >= 0 ? &r.candidates[r.best] : nullptr;
  std::string md;
  const scaling::DataConstrainedConstants k;
  md += fmt::format(
      "- Data limit (--unique-tokens): {} distinct tokens. Candidates train as many tokens as "
      "the deadline allows{} and are ranked by the data-constrained loss (repeated tokens and "
      "parameters beyond the compute-optimal size for the unique data decay in value, R_D* "
      "{:g}, R_N* {:g}; {}).\n",
      count_human(t.unique_tokens), t.tokens > 0 ? " (here: --tokens)" : "", k.r_d_star,
      k.r_n_star, scaling::kDataConstrainedSource);
  if (best != nullptr) {
    md += fmt::format(
        "- The answer trains {} tokens = **{:.2f} epochs** over the unique data; predicted loss "
        "{:.3f}, of which **{:.4f}** is the penalty of repeating (the same model on {} "
        "distinct tokens: {:.3f}).\n",
        count_human(best->tokens), best->epochs, best->loss, best->repeat_penalty,
        count_human(best->tokens), best->loss - best->repeat_penalty);
    // The best few by loss: what more epochs on a smaller model would cost.
    std::vector<int> feasible;
    for (int i = 0; i < static_cast<int>(r.candidates.size()); ++i) {
      if (r.candidates[i].feasible) feasible.push_back(i);
    }
    std::stable_sort(feasible.begin(), feasible.end(), [&](int a, int b) {
      return r.candidates[a].loss < r.candidates[b].loss;
    });
    if (feasible.size() > 5) feasible.resize(5);
    Table table({"parameters", "tokens", "epochs", "loss", "repeat penalty"});
    for (int i : feasible) {
      const CandidateRow& c = r.candidates[i];
      table.add_row({count_human(c.params) + (i == r.best ? " (answer)" : ""),
                     count_human(c.tokens), fmt::format("{:.2f}", c.epochs),
                     fmt::format("{:.4f}", c.loss), fmt::format("{:.4f}", c.repeat_penalty)});
    }
    md += "\n" + table.markdown();
  }
  return md;
}

// --inference-tokens: the lifetime compute against the compute-optimal answer.
std::string inference_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  const TrainingInputs& t = v.options.training;
  const CandidateRow* best = r.best >= 0 ? &r.candidates[r.best] : nullptr;
  std::string md;
  const InferenceReference& ref = r.inference_reference;
  md += fmt::format(
      "- Inference demand (--inference-tokens): {} tokens served over the model's life, 2 N "
      "FLOPs each; lifetime compute 6 N D + 2 N T (Sardana et al. 2024, Beyond "
      "Chinchilla-Optimal, arXiv:2401.00448). The compute-optimal answer is the planner's "
      "answer without --inference-tokens (its tokens rule); every candidate trains the tokens "
      "that reach that answer's loss, and the answer has the least lifetime compute among "
      "those that finish by the deadline (simulated).\n",
      count_human(t.inference_tokens));
  if (ref.present && best != nullptr) {
    const double n = active_of(*best);
    const double saving = ref.lifetime_flops - best->lifetime_flops;
    md += fmt::format(
        "- The answer is **{:.2f}x the size** of the compute-optimal model ({} vs {} "
        "parameters) trained on **{:.2f}x the tokens** ({:.0f} vs {:.0f} tokens per "
        "parameter) to the same loss {:.3f}; lifetime compute {} vs {} FLOPs: **{} FLOPs "
        "({:.1f} %) saved**.\n",
        n / ref.active_params, count_human(best->params), count_human(ref.params),
        best->tokens / ref.tokens, best->tokens / n, ref.tokens / ref.active_params, ref.loss,
        flops_text(best->lifetime_flops), flops_text(ref.lifetime_flops), flops_text(saving),
        100.0 * saving / ref.lifetime_flops);
    const double price = v.cluster.usd_per_gpu_hour;
    const bool dollars = t.serving_mfu > 0 && price > 0;
    std::vector<std::string> head = {"", "parameters", "tokens", "tokens/param",
                                     "training FLOPs", "inference FLOPs", "lifetime FLOPs",
                                     "days"};
    if (dollars) head.insert(head.end(), {"training $", "inference $", "lifetime $"});
    Table table(head);
    auto row = [&](const std::string& name, double params, double tokens, double days,
                   double train_usd) {
      std::vector<std::string> cells = {
          name, count_human(params), count_human(tokens), fmt::format("{:.0f}", tokens / params),
          flops_text(6 * params * tokens), flops_text(2 * params * t.inference_tokens),
          flops_text(scaling::lifetime_flops(params, tokens, t.inference_tokens)),
          days > 0 ? fmt::format("{:.1f}", days) : "-"};
      if (dollars) {
        const double inf_usd = inference_gpu_hours(v, params) * price;
        cells.insert(cells.end(), {train_usd > 0 ? usd_human(train_usd) : "-", usd_human(inf_usd),
                                   train_usd > 0 ? usd_human(train_usd + inf_usd) : "-"});
      }
      table.add_row(cells);
    };
    row("compute-optimal", ref.active_params, ref.tokens, ref.days, ref.cost_usd);
    row("inference-aware (answer)", n, best->tokens, best->days, best->cost_usd);
    if (ref.formula_params > 0) row("the law alone (no simulation)", ref.formula_params, ref.formula_tokens, 0, 0);
    md += "\n" + table.markdown();
    if (dollars) {
      const double ref_usd = ref.cost_usd + inference_gpu_hours(v, ref.active_params) * price;
      const double ans_usd = best->cost_usd + inference_gpu_hours(v, n) * price;
      md += fmt::format(
          "\nInference priced at serving MFU {:g} on {} at {}/GPU-hour: lifetime {} vs {}, "
          "**{} saved**.\n",
          t.serving_mfu, v.cluster.gpu.name, usd_human(price), usd_human(ans_usd),
          usd_human(ref_usd), usd_human(ref_usd - ans_usd));
    }
  }
  return md;
}

}  // namespace

bool has_training_objective(const TrainingInputs& t) {
  return t.tokens > 0 || t.unique_tokens > 0 || t.inference_tokens > 0;
}

std::string training_objective_markdown(const PlanReport& v) {
  const SearchInputs& o = v.options;
  const ResultTable& r = v.result;
  const TrainingInputs& t = o.training;
  if (!has_training_objective(t)) return "";
  std::string md = "## Training objective\n\n";
  const CandidateRow* best = r.best >= 0 ? &r.candidates[r.best] : nullptr;
  if (t.tokens > 0) {
    md += fmt::format("- Fixed token budget (--tokens): every candidate trains exactly {} tokens",
                      count_human(t.tokens));
    md += best != nullptr
              ? fmt::format("; the answer trains {:.0f} tokens per {}parameter.\n",
                            t.tokens / active_of(*best), best->model.is_moe() ? "active " : "")
              : ".\n";
  }
  if (t.unique_tokens > 0) md += unique_tokens_markdown(v);
  if (t.inference_tokens > 0) md += inference_markdown(v);
  return md + "\n";
}

boost::json::object training_objective_json(const PlanReport& v) {
  const SearchInputs& o = v.options;
  const ResultTable& r = v.result;
  const TrainingInputs& t = o.training;
  boost::json::object out;
  out["tokens"] = t.tokens > 0 ? num(t.tokens) : nullptr;
  out["unique_tokens"] = t.unique_tokens > 0 ? num(t.unique_tokens) : nullptr;
  out["inference_tokens"] = t.inference_tokens > 0 ? num(t.inference_tokens) : nullptr;
  out["serving_mfu"] = t.serving_mfu > 0 ? num(t.serving_mfu) : nullptr;
  const CandidateRow* best = r.best >= 0 ? &r.candidates[r.best] : nullptr;
  out["tokens_per_param"] = best != nullptr ? num(best->tokens / active_of(*best)) : nullptr;
  if (t.unique_tokens > 0) {
    const scaling::DataConstrainedConstants k;
    boost::json::object dc;
    dc["r_d_star"] = k.r_d_star;
    dc["r_n_star"] = k.r_n_star;
    dc["source"] = scaling::kDataConstrainedSource;
    dc["epochs"] = best != nullptr ? num(best->epochs) : nullptr;
    dc["repeat_penalty"] = best != nullptr ? num(best->repeat_penalty) : nullptr;
    out["data_constrained"] = dc;
  }
  if (t.inference_tokens > 0) {
    const InferenceReference& ref = r.inference_reference;
    boost::json::object inf;
    inf["source"] = "Sardana et al. 2024, Beyond Chinchilla-Optimal (arXiv:2401.00448): lifetime "
                    "compute 6 N D + 2 N T";
    if (ref.present && best != nullptr) {
      const double n = active_of(*best);
      boost::json::object co;
      co["params"] = ref.params;
      co["active_params"] = ref.active_params;
      co["tokens"] = ref.tokens;
      co["loss"] = ref.loss;
      co["days"] = num(ref.days);
      co["lifetime_flops"] = num(ref.lifetime_flops);
      inf["compute_optimal"] = co;
      boost::json::object formula;
      formula["params"] = num(ref.formula_params);
      formula["tokens"] = num(ref.formula_tokens);
      formula["lifetime_flops"] = num(ref.formula_flops);
      inf["law_optimum"] = formula;
      inf["lifetime_flops"] = num(best->lifetime_flops);
      inf["params_ratio"] = num(n / ref.active_params);
      inf["tokens_ratio"] = num(best->tokens / ref.tokens);
      inf["lifetime_saving_flops"] = num(ref.lifetime_flops - best->lifetime_flops);
      const double price = v.cluster.usd_per_gpu_hour;
      if (t.serving_mfu > 0 && price > 0) {
        const double ref_usd = ref.cost_usd + inference_gpu_hours(v, ref.active_params) * price;
        const double ans_usd = best->cost_usd + inference_gpu_hours(v, n) * price;
        inf["lifetime_usd"] = num(ans_usd);
        inf["lifetime_saving_usd"] = num(ref_usd - ans_usd);
      }
    }
    out["inference"] = inf;
  }
  return out;
}

}  // namespace llmplan::reports

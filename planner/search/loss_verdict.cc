#include "planner/search/loss_verdict.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "planner/search/search.h"
#include "reports/format.h"

namespace llmplan::planner {

using reports::count_human;

scaling::LossQuery loss_query(const Candidate& c) {
  scaling::LossQuery q;
  q.n_active = c.active_params > 0 ? c.active_params : c.params;
  q.expansion = moe_expansion(c.model);
  q.tokens = std::max(c.tokens, 1.0);
  return q;
}

scaling::LossInterval candidate_loss_interval(const scaling::LossLaw& law, const Candidate& c) {
  return scaling::loss_interval(law, loss_query(c));
}

std::string loss_vs_answer(const scaling::LossLaw& law, const SearchResult& r, int i) {
  if (r.best < 0 || r.candidates[i].best_plan < 0) return "";
  if (i == r.best) return "answer";
  const scaling::LossComparison cmp = scaling::compare_losses(
      law, loss_query(r.candidates[i]), loss_query(r.candidates[r.best]));
  if (!cmp.known) return "unjudged";
  if (!cmp.exceeds) return "indistinguishable";
  return cmp.difference > 0 ? "higher" : "lower";
}

namespace {

std::string interval_text(const scaling::LossInterval& in) {
  return in.known ? fmt::format("{:.3f}-{:.3f}", in.low, in.high) : std::string("unknown");
}

}  // namespace

DenseVerdict dense_verdict(const SearchOptions& o, const SearchResult& moe, const SearchResult* dense) {
  DenseVerdict d;
  if (dense == nullptr || moe.best < 0 || dense->best < 0) return d;
  const Candidate& m = moe.candidates[moe.best];
  const Candidate& n = dense->candidates[dense->best];
  const scaling::LossLaw& law = o.law;
  d.available = true;
  d.objective = o.objective == Objective::kLoss ? "loss" : "largest";
  d.law = law.name;
  d.moe_loss = m.loss;
  d.dense_loss = n.loss;
  d.moe_interval = candidate_loss_interval(law, m);
  d.dense_interval = candidate_loss_interval(law, n);
  d.comparison = scaling::compare_losses(law, loss_query(m), loss_query(n));
  d.headline = n.loss < m.loss ? "dense" : "moe";
  const std::string objective =
      d.objective == "loss"
          ? "lowest predicted loss"
          : "largest model, with MoE and dense compared by predicted loss at their tokens (total "
            "parameters would reward idle experts)";
  const bool dense_wins = d.headline == "dense";
  std::string judged;
  if (!d.comparison.known) {
    judged = fmt::format("law {} publishes no uncertainty, so whether this difference is real "
                         "cannot be judged",
                         law.name);
  } else if (d.comparison.exceeds) {
    judged = fmt::format("the difference exceeds the law's uncertainty (90 % interval of the paired "
                         "difference {:+.4f} to {:+.4f})",
                         d.comparison.low, d.comparison.high);
  } else {
    judged = fmt::format("the difference is within the law's uncertainty (90 % interval of the "
                         "paired difference {:+.4f} to {:+.4f}), so the two are indistinguishable "
                         "by this law",
                         d.comparison.low, d.comparison.high);
  }
  d.sentence = fmt::format(
      "Verdict (objective: {}; law: {}): the {} answer {} has the lower predicted loss, {:.3f} "
      "(interval {}) against {:.3f} (interval {}) for the {} answer {}; {}.",
      objective, law.name, dense_wins ? "dense" : "MoE", dense_wins ? n.model.name : m.model.name,
      std::min(m.loss, n.loss), interval_text(dense_wins ? d.dense_interval : d.moe_interval),
      std::max(m.loss, n.loss), interval_text(dense_wins ? d.moe_interval : d.dense_interval),
      dense_wins ? "MoE" : "dense", dense_wins ? m.model.name : n.model.name, judged);
  const double far = std::max(law_extrapolation_factor(law, m), law_extrapolation_factor(law, n));
  if (far > 1) {
    d.sentence += fmt::format(
        " Here the law is extrapolated up to {:.0f}x beyond its fitted range, where its published "
        "uncertainty no longer bounds the error.",
        far);
  }
  return d;
}

namespace {

struct Factor {
  double value;
  std::string what;
};

std::vector<Factor> factors(const scaling::LossLaw& law, const Candidate& c) {
  std::vector<Factor> out;
  const double active = c.active_params > 0 ? c.active_params : c.params;
  auto add = [&](double x, double max, std::string what) {
    if (max > 0 && x > max) out.push_back({x / max, std::move(what)});
  };
  if (law.joint.present) {
    const scaling::JointMoeTerm& j = law.joint;
    add(active, j.max_fitted_active_params,
        fmt::format("{} active parameters (fitted up to {})", count_human(active),
                    count_human(j.max_fitted_active_params)));
    add(c.params, j.max_fitted_total_params,
        fmt::format("{} parameters in all (fitted up to {})", count_human(c.params),
                    count_human(j.max_fitted_total_params)));
    add(moe_expansion(c.model), j.max_fitted_experts,
        fmt::format("experts / top-k = {:g} (fitted up to {:g})", moe_expansion(c.model),
                    j.max_fitted_experts));
    add(c.tokens / active, j.max_fitted_tokens_per_param,
        fmt::format("{:.0f} tokens per active parameter (fitted up to {:g})", c.tokens / active,
                    j.max_fitted_tokens_per_param));
  } else if (law.moe.present && c.model.is_moe()) {
    add(active, law.moe.max_fitted_active_params,
        fmt::format("{} active parameters (fitted up to {})", count_human(active),
                    count_human(law.moe.max_fitted_active_params)));
    add(moe_expansion(c.model), law.moe.max_fitted_expansion,
        fmt::format("experts / top-k = {:g} (fitted up to {:g})", moe_expansion(c.model),
                    law.moe.max_fitted_expansion));
  }
  return out;
}

}  // namespace

double law_extrapolation_factor(const scaling::LossLaw& law, const Candidate& c) {
  const bool ranged = law.joint.present
                          ? law.joint.max_fitted_active_params > 0
                          : law.moe.present && law.moe.max_fitted_active_params > 0;
  if (!ranged) return 0;
  double f = 1;
  for (const Factor& x : factors(law, c)) f = std::max(f, x.value);
  return f;
}

std::string law_extrapolation_caveat(const scaling::LossLaw& law, const Candidate& c) {
  const std::vector<Factor> fs = factors(law, c);
  if (fs.empty()) return "";
  double f = 1;
  std::vector<std::string> what;
  for (const Factor& x : fs) {
    f = std::max(f, x.value);
    what.push_back(x.what);
  }
  const char* how = f < 2 ? "slightly beyond" : f < 10 ? "beyond" : f < 100 ? "far beyond" : "more than 100x beyond";
  return fmt::format(
      "The loss law {} is used {} its fitted range ({:.0f}x at most): {} has {}; {}",
      law.name, how, f, c.model.name, fmt::join(what, ", "),
      f < 2 ? "its predicted loss is close to fitted values"
      : f < 10 ? "its predicted loss extends the law's trend; its stated uncertainty is a lower bound"
               : "its predicted loss is a long extrapolation of the law's trend and its stated "
                 "uncertainty does not bound the error");
}

std::string moe_law_caveat(const scaling::LossLaw& law, const simulator::Model& m) {
  if (law.joint.present && m.is_moe()) {
    // The joint law's range without tokens (cmd_plan passes the answer's
    // tokens to law_extrapolation_caveat itself).
    Candidate c;
    c.model = m;
    c.params = static_cast<double>(m.parameter_count());
    c.active_params = active_params(m);
    return law_extrapolation_caveat(law, c);
  }
  if (!law.moe.present || !m.is_moe()) return "";
  const double active = active_params(m), expansion = moe_expansion(m);
  const bool params_out =
      law.moe.max_fitted_active_params > 0 && active > law.moe.max_fitted_active_params;
  const bool expansion_out =
      law.moe.max_fitted_expansion > 0 && expansion > law.moe.max_fitted_expansion;
  if (!params_out && !expansion_out) return "";
  std::string what;
  if (params_out) {
    what = fmt::format("{} active parameters (fitted up to {})", count_human(active),
                       count_human(law.moe.max_fitted_active_params));
  }
  if (expansion_out) {
    what += fmt::format("{}experts / top-k = {:g} (fitted up to {:g})", what.empty() ? "" : " and ",
                        expansion, law.moe.max_fitted_expansion);
  }
  return fmt::format("The MoE law {} is extrapolated: {} has {}; its predicted loss is a trend, "
                     "not a fitted value",
                     law.name, m.name, what);
}

}  // namespace llmplan::planner

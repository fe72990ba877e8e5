#include "scaling/results_json.h"

#include <cmath>

#include "scaling/law_json.h"
#include "base/strict_json.h"

namespace llmplan::scaling {
namespace {

boost::json::value number(double x) {
  if (!std::isfinite(x)) return nullptr;
  return x;
}

boost::json::value interval_json(const ConfidenceInterval& ci) {
  return boost::json::object{
      {"low", number(ci.low)}, {"high", number(ci.high)}, {"std_error", number(ci.std_error)}};
}

}  // namespace

std::string fit_to_json(const ScalingFit& fit, const std::string& data_description) {
  boost::json::object o;
  o["E"] = number(fit.law.E);
  o["A"] = number(fit.law.A);
  o["B"] = number(fit.law.B);
  o["alpha"] = number(fit.law.alpha);
  o["beta"] = number(fit.law.beta);
  o["a"] = number(fit.a);
  o["b"] = number(fit.b);
  o["objective"] = number(fit.objective);
  o["huber_delta"] = number(fit.huber_delta);
  o["converged"] = fit.converged;
  o["solver_report"] = fit.solver_report;
  o["iterations"] = fit.iterations;
  o["n_points"] = fit.n_points;
  o["starts"] = fit.starts;
  o["starts_polished"] = fit.starts_polished;
  o["polished_converged"] = fit.polished_converged;
  o["polished_at_best"] = fit.polished_at_best;
  o["seconds"] = number(fit.seconds);
  if (!data_description.empty()) o["data"] = data_description;
  const BootstrapResult& boot = fit.bootstrap;
  if (boot.samples > 0) {
    o["bootstrap"] = boost::json::object{{"samples", boot.samples},
                                         {"failed", boot.failed},
                                         {"confidence_level", boot.confidence_level},
                                         {"seed", boot.seed}};
    o["ci"] = boost::json::object{
        {"E", interval_json(boot.E)},       {"A", interval_json(boot.A)},
        {"B", interval_json(boot.B)},       {"alpha", interval_json(boot.alpha)},
        {"beta", interval_json(boot.beta)}, {"a", interval_json(boot.a)},
        {"b", interval_json(boot.b)}};
  }
  return json::pretty(o);
}

std::string allocation_to_json(const Allocation& allocation, const LossLaw& law,
                               const GpuBudget* budget) {
  boost::json::object o;
  o["rule"] = to_string(allocation.rule);
  o["law"] = law_to_json(law);
  o["flops"] = number(allocation.flops);
  o["n_params"] = number(allocation.n_params);
  o["n_tokens"] = number(allocation.n_tokens);
  o["tokens_per_param"] = number(allocation.tokens_per_param());
  o["loss"] = number(allocation.loss);
  o["limited_by_params"] = allocation.limited_by_params;
  o["limited_by_tokens"] = allocation.limited_by_tokens;
  if (budget != nullptr) {
    o["budget"] = boost::json::object{{"gpu", budget->gpu},
                                      {"gpus", number(budget->gpus)},
                                      {"days", number(budget->days)},
                                      {"peak_flops_per_s", number(budget->peak_flops_per_s)},
                                      {"mfu", number(budget->mfu)}};
  }
  return json::pretty(o);
}

}  // namespace llmplan::scaling

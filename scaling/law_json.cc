#include "scaling/law_json.h"

#include <cmath>
#include <utility>

#include "base/input_file.h"
#include "base/strict_json.h"

namespace llmplan::scaling {

Result<LossLaw> law_from_json(const boost::json::value& v, const std::string& path) {
  json::JsonObjectReader reader(v, path);
  LossLaw law;
  reader.read_string("name", &law.name, /*required=*/true);
  if (reader.status().ok() && law.name.empty()) reader.fail("name", "must not be empty");
  reader.read_string("description", &law.description);
  reader.read_string("source", &law.source);
  reader.ignore("note");
  // A joint law's dense constants are its reduction at one expert: derived,
  // and when a file gives them too (law_to_json writes them) they must agree.
  const bool joint = reader.has("joint_moe");
  reader.read_double("E", &law.E, /*required=*/!joint);
  reader.read_double("A", &law.A, /*required=*/!joint);
  reader.read_double("B", &law.B, /*required=*/!joint);
  reader.read_double("alpha", &law.alpha, /*required=*/!joint);
  reader.read_double("beta", &law.beta, /*required=*/!joint);
  if (const boost::json::value* jv = reader.child("joint_moe")) {
    json::JsonObjectReader m(*jv, reader.field_path("joint_moe"));
    JointMoeTerm& t = law.joint;
    t.present = true;
    for (auto [key, out] : {std::pair{"a", &t.a}, {"alpha", &t.alpha}, {"delta", &t.delta},
                            {"gamma", &t.gamma}, {"b", &t.b}, {"beta", &t.beta},
                            {"omega", &t.omega}, {"zeta", &t.zeta}, {"e_start", &t.e_start},
                            {"e_max", &t.e_max}, {"c", &t.c}}) {
      m.read_double(key, out, /*required=*/true);
    }
    m.read_double("max_fitted_active_params", &t.max_fitted_active_params);
    m.read_double("max_fitted_total_params", &t.max_fitted_total_params);
    m.read_double("max_fitted_experts", &t.max_fitted_experts);
    m.read_double("max_fitted_tokens_per_param", &t.max_fitted_tokens_per_param);
    m.read_string("source", &t.source);
    m.read_string("assumption", &t.assumption);
    m.ignore("note");
    LLMPLAN_RETURN_IF_ERROR(m.finish());
  }
  if (const boost::json::value* uv = reader.child("uncertainty")) {
    json::JsonObjectReader u(*uv, reader.field_path("uncertainty"));
    LawUncertainty& t = law.uncertainty;
    std::string kind;
    u.read_string("kind", &kind, /*required=*/true);
    if (kind == "standard_errors") {
      t.kind = UncertaintyKind::kStandardErrors;
      u.read_double("E", &t.se_E, true);
      u.read_double("A", &t.se_A, true);
      u.read_double("B", &t.se_B, true);
      u.read_double("alpha", &t.se_alpha, true);
      u.read_double("beta", &t.se_beta, true);
    } else if (kind == "fit_rmse") {
      t.kind = UncertaintyKind::kFitRmse;
      u.read_double("rmse", &t.rmse, true);
    } else if (kind == "unknown") {
      t.kind = UncertaintyKind::kUnknown;
    } else if (u.status().ok()) {
      u.fail("kind", "must be unknown, standard_errors or fit_rmse, got \"" + kind + "\"");
    }
    u.read_string("source", &t.source);
    u.ignore("note");
    LLMPLAN_RETURN_IF_ERROR(u.finish());
  }
  if (const boost::json::value* moe = reader.child("moe")) {
    json::JsonObjectReader m(*moe, reader.field_path("moe"));
    MoeLawTerm& t = law.moe;
    t.present = true;
    m.read_double("a", &t.a, /*required=*/true);
    m.read_double("b", &t.b, /*required=*/true);
    m.read_double("c", &t.c, /*required=*/true);
    m.read_double("d", &t.d, /*required=*/true);
    m.read_double("e_start", &t.e_start, /*required=*/true);
    m.read_double("e_max", &t.e_max, /*required=*/true);
    m.read_double("max_fitted_active_params", &t.max_fitted_active_params);
    m.read_double("max_fitted_expansion", &t.max_fitted_expansion);
    m.read_string("source", &t.source);
    m.read_string("assumption", &t.assumption);
    m.read_bool("verified", &t.verified);
    m.ignore("note");
    LLMPLAN_RETURN_IF_ERROR(m.finish());
  }
  LLMPLAN_RETURN_IF_ERROR(reader.finish());
  if (law.joint.present && !law.moe.present) {
    const ChinchillaForm f = joint_reduce(law.joint, 1.0);
    const double derived[] = {f.c, f.m, f.n, -f.mu, -f.nu};
    double* fields[] = {&law.E, &law.A, &law.B, &law.alpha, &law.beta};
    const char* names[] = {"E", "A", "B", "alpha", "beta"};
    for (int i = 0; i < 5; ++i) {
      if (reader.has(names[i]) && !(std::abs(*fields[i] - derived[i]) <= 1e-9 * std::abs(derived[i]))) {
        return Status::invalid_argument(path + "." + names[i] +
                                        ": a joint_moe law's dense constants are its reduction at "
                                        "one expert; leave it out or give that value");
      }
      *fields[i] = derived[i];
    }
  }
  LLMPLAN_RETURN_IF_ERROR(validate(law).with_prefix(path));
  return law;
}

Result<LossLaw> law_from_fit_json(const boost::json::value& v, const std::string& path) {
  json::JsonObjectReader reader(v, path);
  LossLaw law;
  reader.read_double("E", &law.E, /*required=*/true);
  reader.read_double("A", &law.A, /*required=*/true);
  reader.read_double("B", &law.B, /*required=*/true);
  reader.read_double("alpha", &law.alpha, /*required=*/true);
  reader.read_double("beta", &law.beta, /*required=*/true);
  bool converged = false;
  reader.read_bool("converged", &converged, /*required=*/true);
  std::string data;
  reader.read_string("data", &data);
  // The rest of fit_to_json's keys describe the solver run, not the law.
  for (const char* key : {"a", "b", "objective", "huber_delta", "solver_report", "iterations",
                          "n_points", "starts", "starts_polished", "polished_converged",
                          "polished_at_best", "seconds", "bootstrap"}) {
    reader.ignore(key);
  }
  // A fit with --bootstrap: its replicates' standard errors are the law's
  // uncertainty (the summary fit_to_json writes; no covariance).
  if (const boost::json::value* ci = reader.child("ci")) {
    json::JsonObjectReader c(*ci, reader.field_path("ci"));
    LawUncertainty& u = law.uncertainty;
    u.kind = UncertaintyKind::kStandardErrors;
    for (auto [key, out] : {std::pair{"E", &u.se_E}, {"A", &u.se_A}, {"B", &u.se_B},
                            {"alpha", &u.se_alpha}, {"beta", &u.se_beta}}) {
      if (const boost::json::value* one = c.child(key, /*required=*/true)) {
        json::JsonObjectReader o(*one, c.field_path(key));
        o.read_double("std_error", out, /*required=*/true);
        o.ignore("low");
        o.ignore("high");
        LLMPLAN_RETURN_IF_ERROR(o.finish());
      }
    }
    c.ignore("a");
    c.ignore("b");
    LLMPLAN_RETURN_IF_ERROR(c.finish());
    u.source = "bootstrap standard errors of llmplan fit --bootstrap, read from " + path;
  }
  if (reader.status().ok() && !converged) {
    reader.fail("converged",
                "the fit did not converge, so its constants are not a law to plan with; "
                "refit (more data, other columns) or write a law file by hand");
  }
  LLMPLAN_RETURN_IF_ERROR(reader.finish());
  law.name = "fit";
  LLMPLAN_RETURN_IF_ERROR(validate(law).with_prefix(path));
  law.source = "llmplan fit, read from " + path;
  law.description = data.empty() ? "fitted law" : "fitted law (" + data + ")";
  return law;
}

Result<LossLaw> parse_law_text(std::string_view text, const std::string& source_name) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, json::parse(text, source_name));
  // A result of `llmplan fit` (fit.json, or its --format json) is a law file
  // too: it is recognised by its solver keys.
  if (v.is_object() && v.as_object().contains("huber_delta") && !v.as_object().contains("name")) {
    return law_from_fit_json(v, source_name);
  }
  return law_from_json(v, source_name);
}

Result<LossLaw> read_law_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return parse_law_text(text, path);
}

boost::json::value law_to_json(const LossLaw& law) {
  boost::json::object o;
  o["name"] = law.name;
  if (!law.description.empty()) o["description"] = law.description;
  if (!law.source.empty()) o["source"] = law.source;
  o["E"] = law.E;
  o["A"] = law.A;
  o["B"] = law.B;
  o["alpha"] = law.alpha;
  o["beta"] = law.beta;
  if (law.moe.present) {
    const MoeLawTerm& t = law.moe;
    boost::json::object m{
        {"a", t.a}, {"b", t.b}, {"c", t.c}, {"d", t.d}, {"e_start", t.e_start}, {"e_max", t.e_max}};
    if (t.max_fitted_active_params > 0) m["max_fitted_active_params"] = t.max_fitted_active_params;
    if (t.max_fitted_expansion > 0) m["max_fitted_expansion"] = t.max_fitted_expansion;
    if (!t.source.empty()) m["source"] = t.source;
    if (!t.assumption.empty()) m["assumption"] = t.assumption;
    if (!t.verified) m["verified"] = false;
    o["moe"] = m;
  }
  if (law.joint.present) {
    const JointMoeTerm& t = law.joint;
    boost::json::object m{{"a", t.a},         {"alpha", t.alpha}, {"delta", t.delta},
                          {"gamma", t.gamma}, {"b", t.b},         {"beta", t.beta},
                          {"omega", t.omega}, {"zeta", t.zeta},   {"e_start", t.e_start},
                          {"e_max", t.e_max}, {"c", t.c}};
    if (t.max_fitted_active_params > 0) m["max_fitted_active_params"] = t.max_fitted_active_params;
    if (t.max_fitted_total_params > 0) m["max_fitted_total_params"] = t.max_fitted_total_params;
    if (t.max_fitted_experts > 0) m["max_fitted_experts"] = t.max_fitted_experts;
    if (t.max_fitted_tokens_per_param > 0) m["max_fitted_tokens_per_param"] = t.max_fitted_tokens_per_param;
    if (!t.source.empty()) m["source"] = t.source;
    if (!t.assumption.empty()) m["assumption"] = t.assumption;
    o["joint_moe"] = m;
  }
  const LawUncertainty& u = law.uncertainty;
  if (u.kind != UncertaintyKind::kUnknown || !u.source.empty()) {
    boost::json::object m;
    m["kind"] = to_string(u.kind);
    if (u.kind == UncertaintyKind::kStandardErrors) {
      m["E"] = u.se_E;
      m["A"] = u.se_A;
      m["B"] = u.se_B;
      m["alpha"] = u.se_alpha;
      m["beta"] = u.se_beta;
    }
    if (u.kind == UncertaintyKind::kFitRmse) m["rmse"] = u.rmse;
    if (!u.source.empty()) m["source"] = u.source;
    o["uncertainty"] = m;
  }
  return o;
}

}  // namespace llmplan::scaling

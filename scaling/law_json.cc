#include "scaling/law_json.h"

#include "simulator/input_file.h"
#include "simulator/strict_json.h"

namespace llmplan::scaling {

Result<LossLaw> law_from_json(const boost::json::value& v, const std::string& path) {
  json::JsonObjectReader reader(v, path);
  LossLaw law;
  reader.read_string("name", &law.name, /*required=*/true);
  if (reader.status().ok() && law.name.empty()) reader.fail("name", "must not be empty");
  reader.read_string("description", &law.description);
  reader.read_string("source", &law.source);
  reader.ignore("note");
  reader.read_double("E", &law.E, /*required=*/true);
  reader.read_double("A", &law.A, /*required=*/true);
  reader.read_double("B", &law.B, /*required=*/true);
  reader.read_double("alpha", &law.alpha, /*required=*/true);
  reader.read_double("beta", &law.beta, /*required=*/true);
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
    m.ignore("note");
    LLMPLAN_RETURN_IF_ERROR(m.finish());
  }
  LLMPLAN_RETURN_IF_ERROR(reader.finish());
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
                          "polished_at_best", "seconds", "bootstrap", "ci"}) {
    reader.ignore(key);
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
    boost::json::object m;
    m["a"] = t.a;
    m["b"] = t.b;
    m["c"] = t.c;
    m["d"] = t.d;
    m["e_start"] = t.e_start;
    m["e_max"] = t.e_max;
    if (t.max_fitted_active_params > 0) m["max_fitted_active_params"] = t.max_fitted_active_params;
    if (t.max_fitted_expansion > 0) m["max_fitted_expansion"] = t.max_fitted_expansion;
    if (!t.source.empty()) m["source"] = t.source;
    if (!t.assumption.empty()) m["assumption"] = t.assumption;
    o["moe"] = m;
  }
  return o;
}

}  // namespace llmplan::scaling

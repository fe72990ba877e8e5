#include "planner/accuracy/accuracy_json.h"

#include <boost/json.hpp>

#include "simulator/cluster_json.h"
#include "base/input_file.h"
#include "base/strict_json.h"

namespace llmplan::planner {
boost::json::object summary_json(const ErrorSummary& e) {
  return {{"rows", e.rows},
          {"mape", e.mape},
          {"median_ape", e.median_ape},
          {"max_ape", e.max_ape},
          {"mean_signed_error", e.mean_signed}};
}

Result<std::string> validation_to_json(const std::string& source,
                                       const std::vector<AccuracyCase>& cases,
                                       const std::vector<double>& predicted,
                                       const std::vector<std::string>& notes) {
  std::vector<double> measured;
  for (const AccuracyCase& c : cases) measured.push_back(c.run.iteration_time_s);
  boost::json::object o;
  o["source"] = source;
  const boost::json::object summary = summary_json(summarise(predicted, measured));
  for (const auto& [k, v] : summary) o[k] = v;
  boost::json::object groups;
  for (Grouping g : {Grouping::kGpus, Grouping::kModel, Grouping::kPlan, Grouping::kMicroBatch,
                     Grouping::kHidden, Grouping::kTensor, Grouping::kData, Grouping::kPipeline}) {
    boost::json::array a;
    for (const GroupError& ge : group_errors(cases, predicted, g)) {
      boost::json::object e = summary_json(ge.error);
      e.emplace("key", ge.key);
      a.push_back(std::move(e));
    }
    groups[to_string(g)] = std::move(a);
  }
  o["groups"] = std::move(groups);
  boost::json::array runs;
  for (size_t i = 0; i < cases.size(); ++i) {
    const MeasuredRun& r = cases[i].run;
    boost::json::object e;
    e["line"] = r.line;
    if (r.params_billion > 0) e["params_billion"] = r.params_billion;
    e["gpus"] = r.num_gpus;
    e["global_batch"] = r.global_batch;
    e["micro_batch"] = r.micro_batch;
    e["hidden"] = r.hidden_size;
    e["heads"] = r.num_heads;
    e["layers"] = r.num_layers;
    e["seq"] = r.seq_length;
    e["t"] = r.tensor;
    e["d"] = r.data;
    e["p"] = r.pipeline;
    e["measured_s"] = r.iteration_time_s;
    e["predicted_s"] = predicted[i];
    e["ape"] = std::abs(predicted[i] - r.iteration_time_s) / r.iteration_time_s;
    runs.push_back(std::move(e));
  }
  o["runs"] = std::move(runs);
  boost::json::array n;
  for (const std::string& s : notes) n.push_back(boost::json::string(s));
  o["notes"] = std::move(n);
  return json::pretty_finite(o, "validation JSON");
}

Result<std::string> constants_to_json(const std::string& gpu, const AccuracyConstants& constants,
                                      const std::string& roofline_source,
                                      const std::string& network_source,
                                      const boost::json::object* moe,
                                      const boost::json::object* hybrid) {
  boost::json::object o;
  o["gpu"] = gpu;
  boost::json::object r;
  r["source"] = roofline_source;
  const boost::json::value rj = simulator::roofline_to_json(constants.roofline);
  for (const auto& [k, v] : rj.as_object()) r[k] = v;
  boost::json::object n;
  n["source"] = network_source;
  const boost::json::value nj = simulator::network_to_json(constants.network);
  for (const auto& [k, v] : nj.as_object()) n[k] = v;
  o["roofline"] = std::move(r);
  o["network"] = std::move(n);
  if (moe != nullptr) o["moe"] = *moe;
  if (hybrid != nullptr) o["hybrid"] = *hybrid;
  return json::pretty_finite(o, "constants JSON");
}

Status read_constants_text(std::string_view text, const std::string& source_name,
                           AccuracyConstants* constants) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, json::parse(text, source_name));
  if (!v.is_object()) return Status::invalid_argument(source_name + ": expected a JSON object");
  AccuracyConstants out = *constants;
  for (const auto& [key, value] : v.as_object()) {
    if (key == "roofline") {
      LLMPLAN_RETURN_IF_ERROR(
          simulator::apply_roofline_json(value, source_name + ": roofline", &out.roofline));
    } else if (key == "network") {
      LLMPLAN_RETURN_IF_ERROR(
          simulator::apply_network_json(value, source_name + ": network", &out.network));
    } else if (key == "moe" || key == "hybrid") {
      // calibrate's mixture-of-experts / hybrid figures: documentation.
      if (!value.is_object()) {
        return Status::invalid_argument(source_name + ": " + std::string(key) +
                                        ": expected an object");
      }
    } else if (key == "gpu" || key == "source" || key == "note" || key == "description") {
      if (!value.is_string()) {
        return Status::invalid_argument(source_name + ": " + std::string(key) +
                                        ": expected a string");
      }
    } else {
      return Status::invalid_argument(source_name + ": unknown key \"" + std::string(key) +
                                      "\" (expected roofline, network, gpu, moe, hybrid)");
    }
  }
  *constants = out;
  return Status();
}

Status read_constants_file(const std::string& path, AccuracyConstants* constants) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return read_constants_text(text, path, constants);
}

}  // namespace llmplan::planner

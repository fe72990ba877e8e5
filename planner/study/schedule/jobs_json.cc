// read_jobs_json: the JSON job file (see job.h for the format).
#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <string_view>

#include "planner/study/schedule/job.h"
#include "simulator/hf_config.h"
#include "simulator/model_json.h"
#include "base/strict_json.h"

namespace llmplan::planner::schedule {
namespace {

constexpr std::array<std::string_view, 8> kJobKeys = {
    "name", "model", "tokens", "arrival_h", "deadline_h", "min_gpus", "max_gpus", "gpus"};

std::string key_list() {
  std::string s;
  for (std::string_view k : kJobKeys) {
    s += s.empty() ? "" : ", ";
    s += k;
  }
  return s;
}

// The first key of object `v` not in `known` as "<path>.<key>: unknown key
// (expected ...)", else OK. Checked before the fields so that a misspelt
// key is reported as such rather than as a missing field.
template <size_t N>
Status check_keys(const boost::json::value& v, const std::string& path,
                  const std::array<std::string_view, N>& known, const std::string& expected) {
  if (!v.is_object()) return Status();  // the reader reports the type
  for (const auto& kv : v.get_object()) {
    if (std::find(known.begin(), known.end(), std::string_view(kv.key())) == known.end()) {
      return Status::invalid_argument(path + "." + std::string(kv.key()) +
                                      ": unknown key (expected " + expected + ")");
    }
  }
  return Status();
}

// Reads jobs[i]; `path` is "<source>: jobs[i]".
Result<Job> read_job(const boost::json::value& v, const std::string& path, int index,
                     const presets::Catalog& catalog) {
  LLMPLAN_RETURN_IF_ERROR(check_keys(v, path, kJobKeys, key_list()));
  json::JsonObjectReader r(v, path);
  Job job;
  job.line = index + 1;
  double arrival_h = 0, deadline_h = 0;
  r.read_string("name", &job.name);
  const boost::json::value* model = r.child("model", /*required=*/true);
  r.read_double("tokens", &job.tokens, /*required=*/true);
  r.read_double("arrival_h", &arrival_h, /*required=*/true);
  r.read_double("deadline_h", &deadline_h, /*required=*/true);
  r.read_int("min_gpus", &job.min_gpus);
  r.read_int("max_gpus", &job.max_gpus);
  r.read_int("gpus", &job.gpus);
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  if (job.name.empty()) job.name = "job" + std::to_string(index + 1);
  job.arrival_s = arrival_h * kSecondsPerHour;
  job.deadline_s = deadline_h * kSecondsPerHour;

  const std::string model_path = path + ".model";
  if (model->is_string()) {
    job.model_name = std::string(model->get_string());
    Result<simulator::Model> m = resolve_model(job.model_name, catalog);
    if (!m.ok()) return m.status().with_prefix(model_path);
    job.model = std::move(m).value();
  } else if (simulator::is_hf_config(*model)) {
    // A Hugging Face config.json (simulator/hf_config.h); notes on stderr.
    Result<simulator::HfModel> hf = simulator::model_from_hf_config(*model, model_path);
    if (!hf.ok()) return hf.status();
    for (const std::string& line : simulator::hf_config_notes(hf.value(), model_path)) {
      std::cerr << line << "\n";
    }
    job.model = hf.value().model;
    job.model_name = shape_string(job.model);
  } else if (model->is_object()) {
    simulator::Model m = shape_model(0, 0, 0);
    m.name.clear();
    LLMPLAN_RETURN_IF_ERROR(simulator::apply_model_json(*model, model_path, &m));
    if (m.name.empty()) m.name = shape_string(m);
    job.model_name = shape_string(m);
    job.model = std::move(m);
  } else {
    return Status::invalid_argument(model_path +
                                    ": expected a preset name, a shape \"LxHxA\" or a model "
                                    "object");
  }
  LLMPLAN_RETURN_IF_ERROR(validate_job_at_path(job, path));
  return job;
}

}  // namespace

Result<std::vector<Job>> read_jobs_json(const std::string& text_in, const std::string& source,
                                        const presets::Catalog& catalog) {
  // json::parse skips a byte order mark itself; only the emptiness check
  // below looks past it.
  std::string_view text = text_in;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::parse_error(source + ": empty file");
  }
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value root, json::parse(text, source));
  if (!root.is_object()) {
    return Status::invalid_argument(source + ": expected an object {\"jobs\": [...]}");
  }
  for (const auto& kv : root.get_object()) {
    if (kv.key() != "jobs") {
      return Status::invalid_argument(source + ": " + std::string(kv.key()) +
                                      ": unknown key (expected jobs)");
    }
  }
  const auto it = root.get_object().find("jobs");
  if (it == root.get_object().end()) {
    return Status::invalid_argument(source + ": jobs: missing required field");
  }
  if (!it->value().is_array()) {
    return Status::invalid_argument(source + ": jobs: expected an array of job objects");
  }
  const boost::json::array& array = it->value().get_array();
  if (array.empty()) return Status::invalid_argument(source + ": jobs: no jobs");
  if (array.size() > kMaxJobsPerFile) {
    return Status::invalid_argument(source + ": jobs: " + std::to_string(array.size()) +
                                    " jobs, more than the " + std::to_string(kMaxJobsPerFile) +
                                    " a job file may hold");
  }

  std::vector<Job> jobs;
  std::map<std::string, size_t, std::less<>> index_of_name;
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string path = source + ": jobs[" + std::to_string(i) + "]";
    LLMPLAN_ASSIGN_OR_RETURN(Job job, read_job(array[i], path, static_cast<int>(i), catalog));
    const auto [dup, inserted] = index_of_name.emplace(job.name, i);
    if (!inserted) {
      return Status::invalid_argument(path + ".name: duplicate name \"" + job.name +
                                      "\" (first in jobs[" + std::to_string(dup->second) + "])");
    }
    jobs.push_back(std::move(job));
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const Job& a, const Job& b) { return a.arrival_s < b.arrival_s; });
  return jobs;
}

}  // namespace llmplan::planner::schedule

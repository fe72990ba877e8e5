#include "planner/accuracy/runs_file.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>

#include "planner/accuracy/measured_csv.h"
#include "planner/accuracy/runs_cells.h"
#include "base/csv.h"
#include "base/input_file.h"
#include "base/number_text.h"
#include "base/strict_json.h"

namespace llmplan::planner {

using namespace runs_cells;  // NOLINT(google-build-using-namespace): the cell readers

std::string source_section_release(std::string_view cell) {
  constexpr std::string_view kSection = "section '";
  const size_t at = cell.find(kSection);
  if (at == std::string_view::npos) return "";
  const std::string_view rest = cell.substr(at + kSection.size());
  const std::string_view section = rest.substr(0, rest.find('\''));
  // Megatron-Bridge's performance-summary archive names its sections by
  // container ("26.04.01 NeMo Container"); other sections ("Training Speed
  // and Scalability") name no release.
  if (section.find(" NeMo Container") == std::string_view::npos ||
      release_version(section).empty()) {
    return "";
  }
  return std::string(section);
}

std::string source_id(std::string_view cell) {
  constexpr std::string_view kGithub = "github.com/";
  const size_t at = cell.find(kGithub);
  if (at != std::string_view::npos) {
    std::string_view rest = cell.substr(at + kGithub.size());
    const size_t slash = rest.find('/');
    if (slash != std::string_view::npos) {
      rest = rest.substr(slash + 1);
      const size_t end = rest.find_first_of("/ ");
      return std::string(rest.substr(0, end));
    }
  }
  // The NeMo-Framework documentation pages (docs.nvidia.com/nemo-framework).
  if (cell.find("docs.nvidia.com/nemo-framework") != std::string_view::npos) return "NeMo";
  return std::string(cell.substr(0, cell.find(' ')));
}

namespace {

bool has_columns(std::string_view text, const std::vector<const char*>& names) {
  csv::CsvReader reader(text, "", 0);
  if (!reader.read_header().ok()) return false;
  const auto& h = reader.header();
  for (const char* n : names) {
    if (std::find(h.begin(), h.end(), n) == h.end()) return false;
  }
  return true;
}

}  // namespace

bool is_blackwell_runs_csv(std::string_view text) {
  return has_columns(text, std::vector<const char*>(std::begin(kBlackwellColumns),
                                                    std::end(kBlackwellColumns)));
}

bool is_runs_csv(std::string_view text) {
  return has_columns(text, {"name", "model", "measured_step_s", "fsdp"}) ||
         is_blackwell_runs_csv(text);
}

std::vector<int> release_version(std::string_view release) {
  // The first token that starts with two digits and a dot: "26.04.01",
  // "25.04.rc2".
  std::vector<int> out;
  size_t at = 0;
  while (at < release.size()) {
    const size_t end = std::min(release.find(' ', at), release.size());
    const std::string_view token = release.substr(at, end - at);
    if (token.size() >= 4 && std::isdigit(static_cast<unsigned char>(token[0])) &&
        std::isdigit(static_cast<unsigned char>(token[1])) && token[2] == '.') {
      size_t i = 0;
      while (i < token.size()) {
        const size_t dot = std::min(token.find('.', i), token.size());
        std::string part(token.substr(i, dot - i));
        if (starts_with(part, "rc")) {
          out.push_back(-1);  // a release candidate sorts before the release
          part = part.substr(2);
        }
        int v = 0;
        bool digits = !part.empty();
        for (char c : part) {
          if (!std::isdigit(static_cast<unsigned char>(c)) || v > 100000) {
            digits = false;
            break;
          }
          v = v * 10 + (c - '0');
        }
        if (!digits) return {};
        out.push_back(v);
        i = dot + 1;
      }
      // "26.04" is "26.04.0": after "26.04.rc2" ({26, 4, -1, 2}), before
      // "26.04.01".
      while (out.size() < 3) out.push_back(0);
      return out;
    }
    at = end + 1;
  }
  return out;
}

std::string blackwell_model_name(std::string_view cell) {
  std::string name = lower(cell.substr(0, cell.find('(')));
  while (!name.empty() && name.back() == ' ') name.pop_back();
  for (char& c : name) {
    if (c == '_' || c == ' ') c = '-';
  }
  // The sources' spellings of one model (NeMo's "LLAMA3-405B" is Llama 3.1
  // 405B: NeMo 2.0's llama31_405b recipe).
  static const std::map<std::string, std::string> kAliases = {
      {"llama3-405b", "llama3.1-405b"},      {"llama3.1-405b", "llama3.1-405b"},
      {"deepseekv3", "deepseek-v3"},         {"deepseek-v3", "deepseek-v3"},
      {"deepseekv4-flash", "deepseek-v4-flash"},
      {"nemotron-15b", "nemotron4-15b"},     {"nemotron-340b", "nemotron4-340b"},
      {"llama4-scout-llm", "llama4-scout"},  {"nemotron-3-nano", "nemotron3-nano"},
      {"nemotron-3-super", "nemotron3-super"}, {"nemotron-3-ultra", "nemotron3-ultra"},
      {"nemotron-3-5-lightning", "nemotron3.5-lightning"}};
  const auto it = kAliases.find(name);
  return it == kAliases.end() ? name : it->second;
}

Result<std::vector<RunRow>> read_runs_rows_text(std::string_view text,
                                                const std::string& source_name) {
  csv::CsvReader reader(text, source_name, kMaxRunsFileRows);
  LLMPLAN_RETURN_IF_ERROR(reader.read_header());
  enum { kName, kSource, kGpus, kPerNode, kModel, kSeq, kPrec, kTp, kPp, kVp, kCp, kDp, kEp,
         kFsdp, kMicro, kGlobal, kRecompute, kOverlaps, kStep };
  LLMPLAN_ASSIGN_OR_RETURN(
      const std::vector<size_t> col,
      find_columns(reader,
                   {"name", "source", "gpus", "gpus_per_node", "model", "seq", "precision", "tp",
                    "pp", "vp", "cp", "dp", "ep", "fsdp", "micro_batch", "global_batch",
                    "recompute", "overlaps", "measured_step_s"},
                   source_name));
  std::map<std::string, int> names;
  return read_rows<RunRow>(reader, source_name,
                           [&](const std::vector<RunRow>&, RunRow* row) -> Status {
    RunRow& r = *row;
    r.name = reader.cell(col[kName]);
    if (r.name.empty()) return Status::parse_error(reader.where(col[kName]) + ": empty name");
    if (const auto [it, fresh] = names.emplace(r.name, r.line); !fresh) {
      return Status::parse_error(reader.where(col[kName]) + ": \"" + r.name +
                                 "\" already used on line " + std::to_string(it->second));
    }
    r.source = reader.cell(col[kSource]);
    r.gpus_per_node = reader.cell(col[kPerNode]);
    r.model = reader.cell(col[kModel]);
    r.precision = lower(reader.cell(col[kPrec]));
    r.fsdp = reader.cell(col[kFsdp]);
    r.recompute = lower(reader.cell(col[kRecompute]));
    r.overlaps = reader.cell(col[kOverlaps]);
    for (const auto& [field, c] :
         {std::pair{&r.gpus, kGpus}, std::pair{&r.seq, kSeq}, std::pair{&r.tp, kTp},
          std::pair{&r.pp, kPp}, std::pair{&r.vp, kVp}, std::pair{&r.cp, kCp},
          std::pair{&r.dp, kDp}, std::pair{&r.ep, kEp}, std::pair{&r.micro_batch, kMicro},
          std::pair{&r.global_batch, kGlobal}}) {
      LLMPLAN_ASSIGN_OR_RETURN(*field, positive(reader, col[c]));
    }
    LLMPLAN_ASSIGN_OR_RETURN(r.measured_step_s, reader.number(col[kStep]));
    if (!(r.measured_step_s >= kMinMeasuredStepS && r.measured_step_s <= kMaxMeasuredStepS)) {
      return Status::parse_error(reader.where(col[kStep]) + ": must be from " +
                                 number_text(kMinMeasuredStepS) + " to " +
                                 number_text(kMaxMeasuredStepS) + " s, got " +
                                 reader.cell(col[kStep]));
    }
    if (static_cast<double>(r.tp) * r.pp * r.cp * r.dp != r.gpus) {
      return Status::parse_error(reader.where(col[kGpus]) + ": gpus " + std::to_string(r.gpus) +
                                 " != tp * pp * cp * dp = " + std::to_string(r.tp) + " * " +
                                 std::to_string(r.pp) + " * " + std::to_string(r.cp) + " * " +
                                 std::to_string(r.dp));
    }
    return Status();
  });
}

Result<std::vector<PublishedRun>> read_runs_csv_text(std::string_view runs_text,
                                                     const std::string& runs_name,
                                                     std::string_view models_text,
                                                     const std::string& models_name,
                                                     const presets::Catalog& catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<ModelRow> models,
                           read_models_csv_text(models_text, models_name));
  std::vector<RunRow> rows;
  if (is_blackwell_runs_csv(runs_text)) {
    LLMPLAN_ASSIGN_OR_RETURN(rows, read_blackwell_runs_rows_text(runs_text, runs_name));
  } else {
    LLMPLAN_ASSIGN_OR_RETURN(rows, read_runs_rows_text(runs_text, runs_name));
  }
  std::vector<PublishedRun> out;
  for (const RunRow& r : rows) {
    LLMPLAN_ASSIGN_OR_RETURN(PublishedRun p, map_published_run(r, models, runs_name, catalog));
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<PublishedRun>> read_runs_csv_file(const std::string& path,
                                                     const std::string& models_path,
                                                     const presets::Catalog& catalog) {
  std::string models = models_path;
  if (models.empty()) {
    const size_t slash = path.find_last_of('/');
    models = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "models.csv";
  }
  LLMPLAN_ASSIGN_OR_RETURN(std::string runs_text, read_input_file(path));
  Result<std::string> models_text = read_input_file(models);
  if (!models_text.ok()) {
    return models_text.status().with_prefix(path + ": its models table (--models)");
  }
  return read_runs_csv_text(runs_text, path, *models_text, models, catalog);
}

Result<std::vector<PublishedRun>> read_runs_json_text(std::string_view text,
                                                      const std::string& source_name,
                                                      const presets::Catalog& catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value doc, json::parse(text, source_name));
  if (!doc.is_array()) {
    return Status::invalid_argument(source_name + ": expected a JSON array of runs");
  }
  const boost::json::array& a = doc.as_array();
  if (a.empty()) return Status::invalid_argument(source_name + ": no runs in the array");
  if (a.size() > kMaxRunsFileRows) {
    return Status::invalid_argument(source_name + ": more than " +
                                    std::to_string(kMaxRunsFileRows) + " runs");
  }
  std::vector<PublishedRun> out;
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string path = source_name + ": [" + std::to_string(i) + "]";
    if (!a[i].is_object()) return Status::invalid_argument(path + ": expected an object");
    const boost::json::object& o = a[i].as_object();
    boost::json::object config;
    PublishedRun r;
    r.line = static_cast<int>(i) + 1;
    r.file = source_name;
    bool has_time = false;
    for (const auto& [key, value] : o) {
      const std::string k(key);
      if (k == "name" || k == "source") {
        if (!value.is_string()) return Status::invalid_argument(path + "." + k + ": expected a string");
        (k == "name" ? r.name : r.source) = std::string(value.as_string());
      } else if (k == "model" || k == "plan") {
        config[k] = value;
      } else if (k == "cluster") {
        if (value.is_string()) {
          config[k] = boost::json::object{{"preset", value}};
        } else {
          config[k] = value;
        }
      } else if (k == "measured_step_s") {
        if (!value.is_number()) {
          return Status::invalid_argument(path + ".measured_step_s: expected a number of seconds");
        }
        const double step_s = value.to_number<double>();
        if (!(step_s >= kMinMeasuredStepS && step_s <= kMaxMeasuredStepS)) {
          return Status::invalid_argument(path + ".measured_step_s: must be from " +
                                          number_text(kMinMeasuredStepS) + " to " +
                                          number_text(kMaxMeasuredStepS) + " s, got " +
                                          number_text(step_s));
        }
        r.measured_step_s = value.to_number<double>();
        has_time = true;
      } else {
        return Status::invalid_argument(path + ": unknown key \"" + k +
                                        "\" (expected name, source, model, plan, cluster, "
                                        "measured_step_s)");
      }
    }
    for (const char* k : {"model", "plan", "cluster"}) {
      if (!config.contains(k)) return Status::invalid_argument(path + ": missing \"" + k + "\"");
    }
    if (r.name.empty()) return Status::invalid_argument(path + ": missing \"name\"");
    if (!has_time) return Status::invalid_argument(path + ": missing \"measured_step_s\"");
    if (const auto [it, fresh] = names.emplace(r.name, i); !fresh) {
      return Status::invalid_argument(path + ".name: \"" + r.name + "\" already used by [" +
                                      std::to_string(it->second) + "]");
    }
    r.source = r.source.empty() ? source_name : source_id(r.source);
    LLMPLAN_ASSIGN_OR_RETURN(r.config, presets::load_sim_config_text(boost::json::serialize(config),
                                                                     path, catalog));
    r.model = r.config.model.name;
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<PublishedRun>> read_runs_file(const std::string& path,
                                                 const std::string& models_path,
                                                 const presets::Catalog& catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    return read_runs_json_text(text, path, catalog);
  }
  if (!is_runs_csv(text)) {
    return Status::invalid_argument(path +
                                    ": not a runs file (expected a JSON array or the header of "
                                    "data/h100/published_runs.csv or "
                                    "data/blackwell/published_runs.csv)");
  }
  return read_runs_csv_file(path, models_path, catalog);
}

Result<bool> is_runs_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') return true;
  return is_runs_csv(text);
}

std::vector<int> assign_folds(const std::vector<std::string>& keys, int k) {
  std::map<std::string, int> fold_of;
  std::vector<int> out;
  out.reserve(keys.size());
  for (const std::string& key : keys) {
    const auto [it, fresh] = fold_of.try_emplace(key, static_cast<int>(fold_of.size()) % k);
    out.push_back(it->second);
  }
  return out;
}

}  // namespace llmplan::planner

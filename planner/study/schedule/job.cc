#include "planner/study/schedule/job.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include "base/number_text.h"
#include "base/csv.h"
#include "base/input_file.h"

namespace llmplan::planner::schedule {
namespace {

// ---- Validation -----------------------------------------------------------

// Checks `job`; `field(name)` spells a field's place in a message.
Status check_job(const Job& job, const std::function<std::string(std::string_view)>& field) {
  auto bad = [&](std::string_view name, const std::string& why) {
    return Status::invalid_argument(field(name) + ": " + why);
  };
  if (!(job.tokens > 0) || !std::isfinite(job.tokens)) {
    return bad("tokens", "must be a positive number, got " + number_text(job.tokens));
  }
  if (!(job.arrival_s >= 0) || !std::isfinite(job.arrival_s)) {
    return bad("arrival_h", "must be >= 0, got " + number_text(job.arrival_s / kSecondsPerHour));
  }
  if (!(job.deadline_s > job.arrival_s) || !std::isfinite(job.deadline_s)) {
    return bad("deadline_h", number_text(job.deadline_s / kSecondsPerHour) + " is not after arrival_h " +
                                 number_text(job.arrival_s / kSecondsPerHour));
  }
  // GPU counts up to Plan::kMaxGpus: rounding them up to whole nodes stays
  // inside an int.
  auto count = [&](std::string_view name, int v) {
    if (v < 0) return bad(name, "must be >= 0, got " + std::to_string(v));
    if (v > simulator::Plan::kMaxGpus) {
      return bad(name, "must be at most " + std::to_string(simulator::Plan::kMaxGpus) + ", got " +
                           std::to_string(v));
    }
    return Status();
  };
  LLMPLAN_RETURN_IF_ERROR(count("min_gpus", job.min_gpus));
  LLMPLAN_RETURN_IF_ERROR(count("max_gpus", job.max_gpus));
  LLMPLAN_RETURN_IF_ERROR(count("gpus", job.gpus));
  if (job.min_gpus > 0 && job.max_gpus > 0 && job.min_gpus > job.max_gpus) {
    return bad("min_gpus", std::to_string(job.min_gpus) + " is more than max_gpus " +
                               std::to_string(job.max_gpus));
  }
  if (job.gpus > 0 && job.gpus < job.min_gpus) {
    return bad("gpus",
               std::to_string(job.gpus) + " is less than min_gpus " + std::to_string(job.min_gpus));
  }
  if (job.gpus > 0 && job.max_gpus > 0 && job.gpus > job.max_gpus) {
    return bad("gpus",
               std::to_string(job.gpus) + " is more than max_gpus " + std::to_string(job.max_gpus));
  }
  Status model = simulator::validate(job.model);
  if (!model.ok()) {
    // simulator::validate says "model.<field>: ...".
    std::string_view m = model.message();
    std::string_view name = "model";
    if (m.rfind("model.", 0) == 0) {
      const size_t colon = m.find(": ");
      if (colon != std::string_view::npos) {
        name = m.substr(0, colon);
        m.remove_prefix(colon + 2);
      }
    }
    return Status(model.code(), field(name) + ": " + std::string(m));
  }
  return Status();
}

// ---- CSV ------------------------------------------------------------------

enum Column { kName, kModel, kTokens, kArrival, kDeadline, kMinGpus, kMaxGpus, kGpus, kNumColumns };
constexpr std::array<const char*, kNumColumns> kColumnNames = {
    "name", "model", "tokens", "arrival_h", "deadline_h", "min_gpus", "max_gpus", "gpus"};
constexpr int kNumRequired = kMinGpus;  // the columns before min_gpus are required
constexpr const char* kColumnList =
    "name, model, tokens, arrival_h, deadline_h; optional min_gpus, max_gpus, gpus";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string quote_cell(const std::string& s) {
  const bool plain =
      s.find_first_of(",\"") == std::string::npos &&
      (s.empty() || (s.front() != ' ' && s.front() != '\t' && s.back() != ' ' && s.back() != '\t'));
  if (plain) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

std::string shortest(double x) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

// The hours to write for `seconds`: the value whose product with
// kSecondsPerHour is exactly `seconds` when one lies near seconds / 3600.
double hours_for(double seconds) {
  const double h = seconds / kSecondsPerHour;
  if (h * kSecondsPerHour == seconds || !std::isfinite(h)) return h;
  double up = h, down = h;
  for (int i = 0; i < 8; ++i) {
    up = std::nextafter(up, std::numeric_limits<double>::infinity());
    down = std::nextafter(down, -std::numeric_limits<double>::infinity());
    if (up * kSecondsPerHour == seconds) return up;
    if (down * kSecondsPerHour == seconds) return down;
  }
  return h;
}

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

}  // namespace

Status validate_job(const Job& job, const std::string& where) {
  return check_job(job, [&](std::string_view f) { return where + ": " + std::string(f); });
}

Status validate_job_at_path(const Job& job, const std::string& path) {
  return check_job(job, [&](std::string_view f) { return path + "." + std::string(f); });
}

simulator::Model shape_model(int layers, int hidden, int heads) {
  simulator::Model m;
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_heads = heads;
  m.seq_length = kShapeSeqLength;
  m.vocab_size = kShapeVocabSize;
  m.activation = simulator::Activation::kGelu;
  m.positions = simulator::PositionEmbedding::kLearned;
  m.tied_embeddings = true;
  m.linear_bias = true;
  m.name = shape_string(m);
  return m;
}

std::string shape_string(const simulator::Model& model) {
  return std::to_string(model.num_layers) + "x" + std::to_string(model.hidden_size) + "x" +
         std::to_string(model.num_heads);
}

Result<simulator::Model> resolve_model(std::string_view spec, const presets::Catalog& catalog) {
  // A shape is three runs of digits joined by 'x' (or 'X').
  std::array<std::string_view, 3> parts;
  size_t n = 0;
  bool shape = !spec.empty();
  size_t start = 0;
  for (size_t i = 0; i <= spec.size() && shape; ++i) {
    if (i == spec.size() || spec[i] == 'x' || spec[i] == 'X') {
      if (n == parts.size() || i == start) {
        shape = false;
        break;
      }
      parts[n++] = spec.substr(start, i - start);
      start = i + 1;
    } else if (!std::isdigit(static_cast<unsigned char>(spec[i]))) {
      shape = false;
    }
  }
  if (shape && n == parts.size()) {
    std::array<int, 3> v{};
    for (size_t i = 0; i < parts.size(); ++i) {
      const auto res = std::from_chars(parts[i].data(), parts[i].data() + parts[i].size(), v[i]);
      if (res.ec != std::errc() || v[i] <= 0) {
        return Status::invalid_argument("shape \"" + std::string(spec) +
                                        "\": layers, hidden and heads must be positive integers");
      }
    }
    simulator::Model m = shape_model(v[0], v[1], v[2]);
    Status st = simulator::validate(m);
    if (!st.ok()) {
      std::string why = st.message();
      if (why.rfind("model.", 0) == 0) why = why.substr(6);
      return Status::invalid_argument("shape \"" + std::string(spec) + "\": " + why);
    }
    return m;
  }
  Result<simulator::Model> preset = catalog.model(spec);
  if (!preset.ok()) {
    return Status(preset.status().code(),
                  preset.status().message() + "; or give a shape LxHxA, e.g. 24x2048x16");
  }
  return preset;
}

Result<std::vector<Job>> read_jobs_csv(const std::string& text, const std::string& source,
                                       const presets::Catalog& catalog) {
  csv::CsvReader reader(text, source, kMaxJobsPerFile);
  LLMPLAN_RETURN_IF_ERROR(reader.read_header());
  const std::vector<std::string>& header = reader.header();

  // Header.
  const std::string header_where = source + ":" + std::to_string(reader.header_line());
  std::array<int, kNumColumns> index;
  index.fill(-1);
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string key = lower(header[i]);
    const auto it = std::find(kColumnNames.begin(), kColumnNames.end(), key);
    const std::string where =
        header_where + ": column " + std::to_string(i + 1) + " \"" + header[i] + "\"";
    if (it == kColumnNames.end()) {
      return Status::invalid_argument(where + ": unknown column (expected " + kColumnList + ")");
    }
    const auto c = static_cast<size_t>(it - kColumnNames.begin());
    if (index[c] >= 0) return Status::invalid_argument(where + ": duplicated column");
    index[c] = static_cast<int>(i);
  }
  for (size_t c = 0; c < kNumRequired; ++c) {
    if (index[c] < 0) {
      return Status::invalid_argument(header_where + ": missing column \"" + kColumnNames[c] +
                                      "\" (expected " + kColumnList + ")");
    }
  }

  // Rows.
  std::vector<Job> jobs;
  std::map<std::string, int, std::less<>> line_of_name;
  while (true) {
    LLMPLAN_ASSIGN_OR_RETURN(bool more, reader.next());
    if (!more) break;
    const std::string where = reader.where();
    auto cell = [&](Column c) -> const std::string& {
      static const std::string kEmpty;
      return index[c] < 0 ? kEmpty : reader.cell(static_cast<size_t>(index[c]));
    };
    auto int_cell = [&](Column c, int* out) -> Status {
      if (cell(c).empty()) return Status();  // unset
      LLMPLAN_ASSIGN_OR_RETURN(*out, reader.integer(static_cast<size_t>(index[c])));
      return Status();
    };

    Job job;
    job.line = reader.line();
    job.name = cell(kName).empty() ? "job" + std::to_string(reader.records()) : cell(kName);
    job.model_name = cell(kModel);
    if (job.model_name.empty()) {
      return Status::invalid_argument(where + ": model: empty (give a preset name or LxHxA)");
    }
    double arrival_h = 0, deadline_h = 0;
    LLMPLAN_ASSIGN_OR_RETURN(job.tokens, reader.number(static_cast<size_t>(index[kTokens])));
    LLMPLAN_ASSIGN_OR_RETURN(arrival_h, reader.number(static_cast<size_t>(index[kArrival])));
    LLMPLAN_ASSIGN_OR_RETURN(deadline_h, reader.number(static_cast<size_t>(index[kDeadline])));
    LLMPLAN_RETURN_IF_ERROR(int_cell(kMinGpus, &job.min_gpus));
    LLMPLAN_RETURN_IF_ERROR(int_cell(kMaxGpus, &job.max_gpus));
    LLMPLAN_RETURN_IF_ERROR(int_cell(kGpus, &job.gpus));
    job.arrival_s = arrival_h * kSecondsPerHour;
    job.deadline_s = deadline_h * kSecondsPerHour;
    Result<simulator::Model> model = resolve_model(job.model_name, catalog);
    if (!model.ok()) return model.status().with_prefix(where + ": model");
    job.model = std::move(model).value();
    LLMPLAN_RETURN_IF_ERROR(validate_job(job, where));
    const auto [it, inserted] = line_of_name.emplace(job.name, job.line);
    if (!inserted) {
      return Status::invalid_argument(where + ": name: duplicate name \"" + job.name +
                                      "\" (first on line " + std::to_string(it->second) + ")");
    }
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return Status::invalid_argument(source + ": no jobs after the header");
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const Job& a, const Job& b) { return a.arrival_s < b.arrival_s; });
  return jobs;
}

std::string jobs_to_csv(const std::vector<Job>& jobs) {
  std::string out;
  for (size_t c = 0; c < kNumColumns; ++c) {
    out += c ? "," : "";
    out += kColumnNames[c];
  }
  out += "\n";
  auto gpus = [](int n) { return n > 0 ? std::to_string(n) : std::string(); };
  for (const Job& j : jobs) {
    out += quote_cell(j.name) + "," + quote_cell(j.model_name) + "," + shortest(j.tokens) + "," +
           shortest(hours_for(j.arrival_s)) + "," + shortest(hours_for(j.deadline_s)) + "," +
           gpus(j.min_gpus) + "," + gpus(j.max_gpus) + "," + gpus(j.gpus) + "\n";
  }
  return out;
}

Result<std::vector<Job>> read_jobs_file(const std::string& path, const presets::Catalog& catalog) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  if (is_blank(text)) return Status::parse_error(path + ": empty file");
  const std::string lower_path = lower(path);
  auto ends_with = [&](std::string_view ext) {
    return lower_path.size() >= ext.size() &&
           lower_path.compare(lower_path.size() - ext.size(), ext.size(), ext) == 0;
  };
  bool json = ends_with(".json");
  if (!json && !ends_with(".csv")) {
    std::string_view t = text;
    if (t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
    const size_t first = t.find_first_not_of(" \t\r\n");
    json = first != std::string_view::npos && t[first] == '{';
  }
  return json ? read_jobs_json(text, path, catalog) : read_jobs_csv(text, path, catalog);
}

}  // namespace llmplan::planner::schedule

#include "planner/accuracy/measured_csv.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "presets/preset_json.h"

namespace llmplan::planner {
namespace {

enum Column {
  kParams, kGpus, kGlobalBatch, kMicroBatch, kHidden, kHeads, kLayers, kSeq,
  kTensor, kData, kPipeline, kTimeMs, kNumColumns
};

// Normalised header spellings, indexed by Column.
constexpr std::array<const char*, kNumColumns> kNames = {
    "parameters(billion)", "gpus", "globalbatch", "microbatch", "hiddensize",
    "attentionheads", "layers", "sequencelength", "tensorparallelism",
    "dataparallelism", "pipelineparallelism", "iterationtime(ms)"};

std::string normalise(std::string_view cell) {
  std::string out;
  for (char c : cell) {
    if (c == ' ' || c == '#' || c == '_' || c == '\t' || c == '"') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '"')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '"')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      cells.push_back(trim(line.substr(start)));
      return cells;
    }
    cells.push_back(trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
}

bool parse_double(std::string_view s, double* out) {
  if (s.empty()) return false;
  const std::string copy(s);
  char* end = nullptr;
  *out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && std::isfinite(*out);
}

}  // namespace

Result<std::vector<MeasuredRun>> read_measured_csv_text(std::string_view text,
                                                        const std::string& source_name) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<std::pair<int, std::string_view>> lines;
  int number = 0;
  while (!text.empty()) {
    ++number;
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    lines.emplace_back(number, line);
  }
  if (lines.empty()) return Status::parse_error(source_name + ": empty: no header row");

  const std::vector<std::string_view> header = split(lines[0].second);
  std::array<int, kNumColumns> index;
  index.fill(-1);
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string key = normalise(header[i]);
    int found = -1;
    for (int c = 0; c < kNumColumns; ++c) {
      if (key == kNames[c]) found = c;
    }
    const std::string where = source_name + ":" + std::to_string(lines[0].first) + ": column " +
                              std::to_string(i + 1) + " \"" + std::string(header[i]) + "\"";
    if (found < 0) {
      return Status::invalid_argument(
          where + ": unknown column; expected the vTrain layout (optional Parameters (billion), "
                  "# GPUs, global batch, micro batch, hidden size, attention heads, # layers, "
                  "sequence length, tensor/data/pipeline parallelism, iteration time (ms))");
    }
    if (index[found] >= 0) return Status::invalid_argument(where + ": duplicated column");
    index[found] = static_cast<int>(i);
  }
  for (int c = kGpus; c < kNumColumns; ++c) {
    if (index[c] < 0) {
      return Status::invalid_argument(source_name + ":" + std::to_string(lines[0].first) +
                                      ": missing column \"" + kNames[c] + "\"");
    }
  }

  std::vector<MeasuredRun> runs;
  for (size_t l = 1; l < lines.size(); ++l) {
    const std::string where = source_name + ":" + std::to_string(lines[l].first);
    const std::vector<std::string_view> cells = split(lines[l].second);
    if (cells.size() != header.size()) {
      return Status::parse_error(where + ": " + std::to_string(cells.size()) + " cells, header has " +
                                 std::to_string(header.size()));
    }
    std::array<double, kNumColumns> v{};
    for (int c = 0; c < kNumColumns; ++c) {
      if (index[c] < 0) continue;
      const std::string_view cell = cells[static_cast<size_t>(index[c])];
      const std::string col = "column " + std::to_string(index[c] + 1) + " (" +
                              std::string(header[static_cast<size_t>(index[c])]) + ")";
      if (!parse_double(cell, &v[c]) || v[c] <= 0) {
        return Status::parse_error(where + ": " + col + ": \"" + std::string(cell) +
                                   "\" is not a positive number");
      }
      if (c != kParams && c != kTimeMs && (v[c] != std::floor(v[c]) || v[c] > 1e9)) {
        return Status::parse_error(where + ": " + col + ": \"" + std::string(cell) +
                                   "\" is not a whole number");
      }
    }
    MeasuredRun r;
    r.line = lines[l].first;
    r.params_billion = index[kParams] >= 0 ? v[kParams] : 0;
    r.num_gpus = static_cast<int>(v[kGpus]);
    r.global_batch = static_cast<int>(v[kGlobalBatch]);
    r.micro_batch = static_cast<int>(v[kMicroBatch]);
    r.hidden_size = static_cast<int>(v[kHidden]);
    r.num_heads = static_cast<int>(v[kHeads]);
    r.num_layers = static_cast<int>(v[kLayers]);
    r.seq_length = static_cast<int>(v[kSeq]);
    r.tensor = static_cast<int>(v[kTensor]);
    r.data = static_cast<int>(v[kData]);
    r.pipeline = static_cast<int>(v[kPipeline]);
    r.iteration_time_s = v[kTimeMs] * 1e-3;
    if (static_cast<long long>(r.tensor) * r.data * r.pipeline != r.num_gpus) {
      return Status::parse_error(where + ": # GPUs " + std::to_string(r.num_gpus) +
                                 " != tensor x data x pipeline parallelism");
    }
    runs.push_back(r);
  }
  if (runs.empty()) return Status::parse_error(source_name + ": no data rows after the header");
  return runs;
}

Result<std::vector<MeasuredRun>> read_measured_csv_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, presets::read_text_file(path));
  return read_measured_csv_text(text, path);
}

}  // namespace llmplan::planner

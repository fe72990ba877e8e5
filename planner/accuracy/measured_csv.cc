#include "planner/accuracy/measured_csv.h"

#include <array>
#include <cctype>

#include "base/csv.h"
#include "base/input_file.h"
#include "base/number_text.h"

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
    if (c == ' ' || c == '#' || c == '_' || c == '\t') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

}  // namespace

Result<std::vector<MeasuredRun>> read_measured_csv_text(std::string_view text,
                                                        const std::string& source_name) {
  csv::CsvReader reader(text, source_name, kMaxMeasuredRuns);
  LLMPLAN_RETURN_IF_ERROR(reader.read_header());
  const std::vector<std::string>& header = reader.header();
  const std::string header_where = source_name + ":" + std::to_string(reader.header_line());
  std::array<int, kNumColumns> index;
  index.fill(-1);
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string key = normalise(header[i]);
    int found = -1;
    for (int c = 0; c < kNumColumns; ++c) {
      if (key == kNames[c]) found = c;
    }
    const std::string where =
        header_where + ": column " + std::to_string(i + 1) + " \"" + header[i] + "\"";
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
      return Status::invalid_argument(header_where + ": missing column \"" + kNames[c] + "\"");
    }
  }

  std::vector<MeasuredRun> runs;
  while (true) {
    LLMPLAN_ASSIGN_OR_RETURN(bool more, reader.next());
    if (!more) break;
    std::array<double, kNumColumns> v{};
    for (int c = 0; c < kNumColumns; ++c) {
      if (index[c] < 0) continue;
      const size_t column = static_cast<size_t>(index[c]);
      if (c == kParams || c == kTimeMs) {
        LLMPLAN_ASSIGN_OR_RETURN(v[c], reader.number(column));
      } else {
        LLMPLAN_ASSIGN_OR_RETURN(int whole, reader.integer(column));
        v[c] = whole;
      }
      if (v[c] <= 0) {
        return Status::parse_error(reader.where(column) + ": must be positive, got " +
                                   reader.cell(column));
      }
      if (c == kTimeMs && !(v[c] >= kMinMeasuredStepS * 1e3 && v[c] <= kMaxMeasuredStepS * 1e3)) {
        return Status::parse_error(reader.where(column) + ": an iteration time must be from " +
                                   number_text(kMinMeasuredStepS * 1e3) + " to " +
                                   number_text(kMaxMeasuredStepS * 1e3) + " ms, got " +
                                   reader.cell(column));
      }
    }
    MeasuredRun r;
    r.line = reader.line();
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
    // In double: exact for any product that could equal an int, and no overflow.
    if (static_cast<double>(r.tensor) * r.data * r.pipeline != r.num_gpus) {
      return Status::parse_error(reader.where() + ": # GPUs " + std::to_string(r.num_gpus) +
                                 " != tensor x data x pipeline parallelism");
    }
    runs.push_back(r);
  }
  if (runs.empty()) return Status::parse_error(source_name + ": no data rows after the header");
  return runs;
}

Result<std::vector<MeasuredRun>> read_measured_csv_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return read_measured_csv_text(text, path);
}

}  // namespace llmplan::planner

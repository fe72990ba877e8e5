// Reading measured training-iteration times in the vTrain layout
// (data/vtrain/ground_truth_{single,multi}.csv) for `llmplan
// validate` and `llmplan calibrate`.
//
// Header (case-insensitive, spaces/'#'/'_' ignored): an optional leading
// "Parameters (billion)", then "# GPUs, global batch, micro batch, hidden
// size, attention heads, # layers, sequence length, tensor parallelism, data
// parallelism, pipeline parallelism, iteration time (ms)" in any order.
// The file is CSV as base/csv.h reads it (the rules every llmplan CSV
// follows: RFC 4180 quoting on one line, decimal numbers only, a UTF-8
// byte-order mark, CRLF line ends and blank lines accepted).
#ifndef LLMPLAN_PLANNER_ACCURACY_MEASURED_CSV_H_
#define LLMPLAN_PLANNER_ACCURACY_MEASURED_CSV_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace llmplan::planner {

// One measured run: a model, a (t, d, p) plan and its iteration time.
struct MeasuredRun {
  int line = 0;                  // 1-based line in the file
  double params_billion = 0;     // 0 when the file has no such column
  int num_gpus = 0;
  int global_batch = 0;
  int micro_batch = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_layers = 0;
  int seq_length = 0;
  int tensor = 0, data = 0, pipeline = 0;
  double iteration_time_s = 0;   // measured
};

// The most rows a measured-times file may hold (vTrain's two files hold
// 1,441 and 108).
// Each row becomes a simulation case, so the cap bounds memory and time.
inline constexpr size_t kMaxMeasuredRuns = 20000;

// A measured training step's physical range, seconds (issue 48, item 2): a
// tenth of a millisecond to a day and more (1e5 s). The published steps
// are 0.1 to 100 s; outside this range a row is a typo or a unit slip
// (milliseconds as seconds), and 1e309 (read as infinity) made every MAPE
// nan. Runs files (runs_file.h) and vTrain's measured CSVs keep to it.
inline constexpr double kMinMeasuredStepS = 1e-4;
inline constexpr double kMaxMeasuredStepS = 1e5;

// Parses CSV text; `source_name` starts every message. Errors (one line
// each): ParseError "FILE: empty file (no header row)"; InvalidArgument
// naming the column number and text of an unknown or duplicated header cell,
// or the missing column; ParseError "FILE:LINE: ..." for bad quoting, a row
// with the wrong number of cells, a cell that is not a decimal number, a
// count that is not a whole number, a non-positive cell (naming its column),
// or # GPUs != t * d * p; InvalidArgument past kMaxMeasuredRuns rows. No
// data rows is an error too. Thread-safe.
Result<std::vector<MeasuredRun>> read_measured_csv_text(std::string_view text,
                                                        const std::string& source_name);
// Reads `path` (base/input_file.h: at most 16 MiB) and parses it as
// above (NotFound/IoError/InvalidArgument name the path).
Result<std::vector<MeasuredRun>> read_measured_csv_file(const std::string& path);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_ACCURACY_MEASURED_CSV_H_

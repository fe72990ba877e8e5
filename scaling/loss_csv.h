// Reading users' training runs (parameters, tokens or FLOPs, final loss) from
// CSV, for `llmplan fit`.
//
// The header row names the columns. Unless the caller names them, columns
// are found by their spelling, compared case-insensitively and ignoring
// spaces, '_' and '-':
//   parameters: N, params, parameters, N_params, num_params, model size,
//               model_params, param_count, parameter_count
//   tokens:     D, tokens, D_tokens, n_tokens, num_tokens, training tokens,
//               data size
//   FLOPs:      C, flops, flop, C_flops, training flop(s), compute
//   loss:       loss, L, final loss, eval loss, val loss, validation loss,
//               test loss
//   excluded:   excluded_by_epoch, excluded, exclude (used only on request)
// Tokens come from the tokens column, or else as D = C / (6 N) from the FLOPs
// column. Other columns are ignored. The file is CSV as base/csv.h
// reads it (the rules every llmplan CSV follows: RFC 4180 quoting on one
// line, decimal numbers only, a UTF-8 byte-order mark, CRLF line ends and
// blank lines accepted), with at most kMaxLossRows data rows.
#ifndef LLMPLAN_SCALING_LOSS_CSV_H_
#define LLMPLAN_SCALING_LOSS_CSV_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/law.h"
#include "base/status.h"

namespace llmplan::scaling {

// The most data rows a loss table may hold (the Chinchilla data has 245). A
// fit screens 4,500 starts over every row: 10,000 rows take about 35 CPU
// seconds (100,000 took 326, issue 31), so the bound keeps `fit` to a minute.
inline constexpr size_t kMaxLossRows = 10000;

struct LossCsvOptions {
  // Header names of the columns; empty means "detect from the spellings".
  std::string params_column;
  std::string tokens_column;
  std::string flops_column;  // naming it makes D = C/(6N) even if a tokens column exists
  std::string loss_column;
  // Leave out rows whose excluded cell is true (true/false, 1/0, yes/no,
  // any case). The column is `excluded_column`, or detected when that is
  // empty. Naming excluded_column turns this on.
  bool honour_excluded = false;
  std::string excluded_column;
  // Then leave out the K rows with the highest loss (ties: earlier rows
  // first), as Besiroglu et al. 2024 did with K = 5 on the Chinchilla data.
  int drop_highest_loss = 0;
};

// The points read, and how they were read.
struct LossData {
  std::vector<LossPoint> points;  // file order, after exclusions and drops
  std::string params_column;      // header names actually used
  std::string tokens_column;      // empty when tokens came from FLOPs
  std::string flops_column;       // empty when tokens came from a column
  std::string loss_column;
  std::string excluded_column;  // empty unless exclusions were honoured
  int rows_read = 0;            // data rows in the file
  int rows_excluded = 0;        // by the excluded column
  int rows_dropped = 0;         // by drop_highest_loss
};

// Parses CSV text. `source_name` (usually the path) starts every message.
// Errors, each one line naming the line and column at fault:
//  - ParseError: empty file; a row with the wrong number of cells; bad
//    quoting; a cell that is not a decimal number (or not a boolean in the
//    excluded column);
//  - NotFound: a required column is missing (the message lists the spellings
//    tried and the flag that names it) or a named column does not exist;
//  - InvalidArgument: two columns match one role; a zero or negative N, D,
//    C or loss (or C/(6N) outside a double's range); drop_highest_loss < 0;
//    fewer than 5 rows left (a fit has 5 unknowns); more than kMaxLossRows
//    data rows.
// Thread-safe.
Result<LossData> parse_loss_csv(std::string_view text, const std::string& source_name,
                                const LossCsvOptions& options = {});

// Reads (base/input_file.h: at most 16 MiB) and parses the file at
// `path`; NotFound/IoError/InvalidArgument naming the path when it cannot be
// read. Thread-safe.
Result<LossData> read_loss_csv(const std::string& path, const LossCsvOptions& options = {});

// One line saying which columns were used and which rows were left out,
// e.g. `N from "Model Size", D = C/(6N) from "Training FLOP", loss from
// "loss"; 245 rows, 5 highest-loss dropped`.
std::string describe(const LossData& data);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_LOSS_CSV_H_

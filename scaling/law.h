// The Chinchilla-form loss law L(N, D) = E + A / N^alpha + B / D^beta, and
// the measured (N, D, loss) points such laws are fitted to.
//
// Related headers: scaling/optimal.h (compute-optimal allocation),
// scaling/flops.h (training FLOPs), scaling/fit.h (fitting a law to points),
// scaling/loss_csv.h (reading points from CSV), scaling/law_json.h (JSON).
#ifndef LLMPLAN_SCALING_LAW_H_
#define LLMPLAN_SCALING_LAW_H_

#include <cmath>
#include <string>
#include <string_view>

#include "simulator/status.h"

namespace llmplan::scaling {

// Predicted final pre-training loss of a model with N parameters trained on
// D tokens. A plain value; `source` says where the constants come from.
struct LossLaw {
  std::string name;
  double E = 0, A = 0, B = 0, alpha = 0, beta = 0;
  std::string source;
  std::string description;  // one line for preset listings; may be empty

  // REQUIRES: n_params > 0, n_tokens > 0.
  double loss(double n_params, double n_tokens) const {
    return E + A / std::pow(n_params, alpha) + B / std::pow(n_tokens, beta);
  }
  friend bool operator==(const LossLaw&, const LossLaw&) = default;
};

// One measured training run: a model of `n_params` parameters trained on
// `n_tokens` tokens reached final loss `loss` (nats per token).
struct LossPoint {
  double n_params = 0;
  double n_tokens = 0;
  double loss = 0;
  friend bool operator==(const LossPoint&, const LossPoint&) = default;
};

// OK when E >= 0 and A, B, alpha, beta are positive and finite;
// InvalidArgument naming the law and the constant otherwise.
Status validate(const LossLaw& law);

// Reads a JSON file holding one law object (the format of scaling/law_json.h,
// e.g. one entry of presets/laws.json), or a result of `llmplan fit`
// (fit.json: see law_from_fit_json). NotFound/IoError/ParseError name the
// file; field errors name the file and field. The file is read with
// read_input_file (simulator/input_file.h: at most 16 MiB). Implemented in
// law_json.cc. Thread-safe.
Result<LossLaw> read_law_file(const std::string& path);
// The same for text in memory; `source_name` names it in messages.
Result<LossLaw> parse_law_text(std::string_view text, const std::string& source_name);

}  // namespace llmplan::scaling

#endif  // LLMPLAN_SCALING_LAW_H_

#include "scaling/flops.h"

#include <cmath>
#include <string>

#include "base/name_table.h"

namespace llmplan::scaling {

namespace {
constexpr Named<FlopCount> kFlopCountNames[] = {
    {"6nd", FlopCount::kSixND},
    {"detailed", FlopCount::kDetailed},
};
}  // namespace

const char* to_string(FlopCount count) { return name_in(kFlopCountNames, count); }

Result<FlopCount> parse_flop_count(std::string_view text) {
  FlopCount count;
  if (parse_in(kFlopCountNames, text, &count)) return count;
  return Status::invalid_argument("unknown FLOP count \"" + std::string(text) + "\" (expected " +
                                  names_text(kFlopCountNames) + ")");
}

Status validate(const TransformerShape& shape) {
  auto positive = [](const char* field, int64_t value) {
    if (value > 0) return Status();
    return Status::invalid_argument(std::string("shape.") + field + ": must be > 0, got " +
                                    std::to_string(value));
  };
  LLMPLAN_RETURN_IF_ERROR(positive("layers", shape.num_layers));
  LLMPLAN_RETURN_IF_ERROR(positive("hidden", shape.hidden_size));
  LLMPLAN_RETURN_IF_ERROR(positive("seq_length", shape.seq_length));
  return positive("vocab", shape.vocab_size);
}

double parameter_count(const TransformerShape& shape) {
  const double l = static_cast<double>(shape.num_layers);
  const double h = static_cast<double>(shape.hidden_size);
  const double s = static_cast<double>(shape.seq_length);
  const double v = static_cast<double>(shape.vocab_size);
  return 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h));
}

double flops_6nd(double n_params, double n_tokens) { return 6 * n_params * n_tokens; }

double detailed_flops_per_token(const TransformerShape& shape) {
  const double l = static_cast<double>(shape.num_layers);
  const double h = static_cast<double>(shape.hidden_size);
  const double s = static_cast<double>(shape.seq_length);
  const double v = static_cast<double>(shape.vocab_size);
  return 72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
}

Result<double> training_flops(const TransformerShape& shape, double n_tokens, FlopCount count) {
  LLMPLAN_RETURN_IF_ERROR(validate(shape));
  if (!std::isfinite(n_tokens) || n_tokens < 0) {
    return Status::invalid_argument("tokens: must be finite and >= 0, got " +
                                    std::to_string(n_tokens));
  }
  switch (count) {
    case FlopCount::kSixND:
      return flops_6nd(parameter_count(shape), n_tokens);
    case FlopCount::kDetailed:
      return detailed_flops_per_token(shape) * n_tokens;
  }
  return Status::internal("unhandled FlopCount");
}

}  // namespace llmplan::scaling

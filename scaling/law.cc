#include "scaling/law.h"

namespace llmplan::scaling {

Status validate(const LossLaw& law) {
  auto bad = [&](const char* field, const char* why) {
    return Status::invalid_argument("law " + law.name + ": " + field + " " + why);
  };
  if (!std::isfinite(law.E) || law.E < 0) return bad("E", "must be finite and >= 0");
  if (!std::isfinite(law.A) || law.A <= 0) return bad("A", "must be finite and > 0");
  if (!std::isfinite(law.B) || law.B <= 0) return bad("B", "must be finite and > 0");
  if (!std::isfinite(law.alpha) || law.alpha <= 0) return bad("alpha", "must be finite and > 0");
  if (!std::isfinite(law.beta) || law.beta <= 0) return bad("beta", "must be finite and > 0");
  return Status();
}

}  // namespace llmplan::scaling

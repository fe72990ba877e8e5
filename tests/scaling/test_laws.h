// Loss laws written out by hand for the tests (no presets read): the
// constants of the papers, under the name a test gives them.
#ifndef LLMPLAN_TESTS_SCALING_TEST_LAWS_H_
#define LLMPLAN_TESTS_SCALING_TEST_LAWS_H_

#include <string>
#include <tuple>

#include "scaling/law.h"

namespace llmplan::scaling::testing {

// Hoffmann et al. 2022's Approach 3 constants (the chinchilla preset's),
// named `name`.
inline LossLaw chinchilla_law(const std::string& name) {
  LossLaw l;
  l.name = name;
  std::tie(l.E, l.A, l.B, l.alpha, l.beta) = std::make_tuple(1.69, 406.4, 410.7, 0.34, 0.28);
  return l;
}

}  // namespace llmplan::scaling::testing

#endif  // LLMPLAN_TESTS_SCALING_TEST_LAWS_H_

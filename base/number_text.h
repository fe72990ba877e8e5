// How a number is written in an error message: printf's %g, six significant
// digits ("5", "0.001", "1e+07", "1e+16", "nan"), never std::to_string's
// fixed six decimals ("10000000.000000", "0.000000" for 1e-9).
//
// No Boost here: plain C++ for any module.
#ifndef LLMPLAN_BASE_NUMBER_TEXT_H_
#define LLMPLAN_BASE_NUMBER_TEXT_H_

#include <cstdio>
#include <string>

namespace llmplan {

// `x` as %g writes it. Thread-safe (no locale state is changed).
inline std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace llmplan

#endif  // LLMPLAN_BASE_NUMBER_TEXT_H_

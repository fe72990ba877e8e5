// A small well-formedness check for the SVG writers' tests: every opened
// element is closed, in order (self-closing elements aside).
#ifndef LLMPLAN_TESTS_REPORTS_SVG_BALANCED_H_
#define LLMPLAN_TESTS_REPORTS_SVG_BALANCED_H_

#include <string>
#include <vector>

namespace llmplan::reports::testing {

inline bool balanced(const std::string& svg) {
  std::vector<std::string> stack;
  for (size_t open = svg.find('<'); open != std::string::npos; open = svg.find('<', open + 1)) {
    const size_t close = svg.find('>', open);
    if (close == std::string::npos) return false;
    const std::string tag = svg.substr(open + 1, close - open - 1);
    if (tag.empty() || tag.back() == '/') continue;  // self-closing
    const bool closing = tag[0] == '/';
    const std::string name =
        tag.substr(closing ? 1 : 0, tag.find_first_of(" \n") - (closing ? 1 : 0));
    if (closing) {
      if (stack.empty() || stack.back() != name) return false;
      stack.pop_back();
    } else {
      stack.push_back(name);
    }
  }
  return stack.empty();
}

}  // namespace llmplan::reports::testing

#endif  // LLMPLAN_TESTS_REPORTS_SVG_BALANCED_H_

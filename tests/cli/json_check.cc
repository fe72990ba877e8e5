// llmplan_json_check: exits 0 when standard input is one valid JSON document
// whose numbers are all finite; otherwise prints one line saying why and
// exits 1. Used by run_cases.sh for cases marked JSON.
//
// Boost.JSON's parser is strict (no NaN, Infinity, comments or trailing
// commas); a number too large for a double (1e999) parses as infinity, which
// the walk below refuses like any other non-finite number.
#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

namespace {

bool all_finite(const boost::json::value& v) {
  if (v.is_double()) return std::isfinite(v.get_double());
  if (v.is_array()) {
    for (const auto& e : v.get_array()) {
      if (!all_finite(e)) return false;
    }
  }
  if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      if (!all_finite(kv.value())) return false;
    }
  }
  return true;
}

}  // namespace

int main() {
  const std::string text((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(text, ec);
  if (ec) {
    std::printf("not valid JSON: %s\n", ec.message().c_str());
    return 1;
  }
  if (!all_finite(v)) {
    std::printf("JSON holds a number that is not finite\n");
    return 1;
  }
  return 0;
}

// Fuzz target: nccl-tests curves (`--allreduce-lut DIR` files,
// simulator/collective_curve.h). A curve read must be valid and give
// positive finite times at any size.
#include <cmath>

#include "simulator/collective_curve.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;
using namespace llmplan::simulator;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<CollectiveCurve> curve = parse_nccl_tests_text(fuzz::as_text(data, size), "fuzz.txt");
  fuzz::require_one_line(curve);
  if (!curve.ok()) return 0;
  fuzz::require(validate(*curve).ok(), "a curve read is valid", validate(*curve).message());
  for (double bytes : {1.0, curve->bytes.front(), curve->bytes.back(), curve->bytes.back() * 3,
                       (curve->bytes.front() + curve->bytes.back()) / 2}) {
    const double t = curve->time_s(bytes);
    fuzz::require(std::isfinite(t) && t > 0, "curve times are positive and finite");
  }
  return 0;
}

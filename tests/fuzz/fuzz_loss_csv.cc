// Fuzz target: loss tables (`fit FILE`, scaling/loss_csv.h), with columns
// detected and with the excluded column honoured and rows dropped.
#include <cmath>

#include "scaling/loss_csv.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scaling::LossCsvOptions excluding;
  excluding.honour_excluded = true;
  excluding.drop_highest_loss = 2;
  for (const scaling::LossCsvOptions& options : {scaling::LossCsvOptions{}, excluding}) {
    Result<scaling::LossData> loss =
        scaling::parse_loss_csv(fuzz::as_text(data, size), "fuzz.csv", options);
    fuzz::require_one_line(loss);
    if (!loss.ok()) continue;
    fuzz::require(loss->points.size() >= 5, "a fit gets at least 5 points");
    for (const scaling::LossPoint& p : loss->points) {
      fuzz::require(p.n_params > 0 && p.n_tokens > 0 && p.loss > 0 && std::isfinite(p.n_params) &&
                        std::isfinite(p.n_tokens) && std::isfinite(p.loss),
                    "points are positive and finite");
    }
    (void)scaling::describe(*loss);
  }
  return 0;
}

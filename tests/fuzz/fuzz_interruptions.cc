// Fuzz target: interruption files (`--interruptions FILE`,
// presets/interruptions.h), on top of the built-in figures as the CLI reads
// them. A file it accepts has finite, non-negative rates and times, storage
// rates within their stated range, and a finite rate per GPU-day; a refusal
// is one line.
#include <cmath>

#include "presets/interruptions.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const presets::Reliability base = [] {
    Result<presets::Reliability> b = presets::builtin_reliability("h100-sxm");
    fuzz::require(b.ok(), "the built-in interruptions preset reads");
    return *b;
  }();
  const std::string_view text = fuzz::as_text(data, size);
  Result<presets::Reliability> rel = presets::parse_interruptions(text, "fuzz.json", &base);
  fuzz::require_one_line(rel);
  if (!rel.ok()) return 0;
  for (const presets::InterruptionCause& c : rel->causes) {
    fuzz::require(std::isfinite(c.per_unit_day) && c.per_unit_day >= 0,
                  "an accepted cause has a finite rate >= 0");
  }
  const presets::CheckpointSettings& k = rel->checkpoint;
  for (double rate : {k.write_bytes_per_s, k.read_bytes_per_s, k.node_bytes_per_s,
                      k.host_copy_bytes_per_s}) {
    fuzz::require(rate >= 1e6 && rate <= 1e16, "an accepted storage rate is in [1e6, 1e16] B/s");
  }
  fuzz::require(k.bytes_per_param >= 0.1 && k.bytes_per_param <= 1e3,
                "accepted checkpoint bytes per parameter are in [0.1, 1000]");
  for (double t : {k.detection_s, k.reschedule_s, k.spare_swap_s, k.node_repair_s, k.init_base_s,
                   k.init_per_gpu_s, k.warmup_s}) {
    fuzz::require(std::isfinite(t) && t >= 0, "an accepted restart time is finite and >= 0");
  }
  for (int gpus_per_node : {1, 8, 72}) {
    const double r = presets::rate_per_gpu_day(*rel, gpus_per_node);
    fuzz::require(std::isfinite(r) && r >= 0, "the rate per GPU-day is finite and >= 0");
  }
  fuzz::require_one_document(text, [](std::string_view longer) {
    return presets::parse_interruptions(longer, "fuzz.json", &base);
  });
  return 0;
}

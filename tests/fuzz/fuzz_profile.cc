// Fuzz target: profile JSON (`--profile FILE`, simulator/profile_table_json.h)
// and llmplan-profile's --shapes file. A profile that loads must round-trip
// through profile_to_json and answer lookups with positive finite times.
#include <cmath>
#include <memory>

#include "presets/catalog.h"
#include "simulator/profile_table_json.h"
#include "simulator/roofline.h"
#include "tests/fuzz/fuzz_common.h"

using namespace llmplan;
using namespace llmplan::simulator;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<const CostModel> roofline =
      std::make_shared<Roofline>(presets::Catalog::builtin().value().cluster("dgx-h100").value());
  const std::string_view text = fuzz::as_text(data, size);

  fuzz::require_one_line(parse_profile_shapes(text, "shapes.json"));

  Result<Profile> profile = parse_profile(text, "fuzz.json");
  fuzz::require_one_line(profile);
  Result<std::shared_ptr<const ProfileTable>> table =
      parse_profile_table(text, "fuzz.json", roofline);
  fuzz::require_one_line(table);
  fuzz::require(profile.ok() == table.ok(), "parse_profile and parse_profile_table agree");
  if (!profile.ok()) return 0;
  fuzz::require_one_document(text, [](std::string_view t) { return parse_profile(t, "fuzz.json"); });

  Result<Profile> again = parse_profile(profile_to_json(*profile), "again.json");
  fuzz::require(again.ok(), "profile_to_json reads back", again.status().message());
  fuzz::require(*again == *profile, "profile_to_json reads back to an equal profile");

  // Lookups near and far from what was measured.
  for (const ProfileKernel& k : profile->kernels) {
    for (double scale : {0.5, 1.0, 3.0}) {
      KernelDesc d;
      d.kind = k.kind;
      d.pass = k.pass;
      d.precision = k.precision;
      d.gemm = k.gemm;
      d.gemm.m = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(k.gemm.m) * scale));
      d.flops = 2.0 * static_cast<double>(d.gemm.m) * static_cast<double>(d.gemm.n) *
                static_cast<double>(d.gemm.k) * static_cast<double>(d.gemm.batch);
      d.bytes = k.bytes * scale;
      const double t = (*table)->kernel_time_s(d);
      fuzz::require(std::isfinite(t) && t >= 0, "kernel times are finite and >= 0");
    }
  }
  for (const ProfileCollective& c : profile->collectives) {
    for (double bytes : {1.0, c.curve.bytes.front(), c.curve.bytes.back() * 4}) {
      CollectiveDesc d;
      d.kind = c.kind;
      d.bytes = bytes;
      d.group.size = c.group_size;
      d.group.ranks_per_node = std::max(1, std::min(c.ranks_per_node, c.group_size));
      const double t = (*table)->collective_time_s(d);
      fuzz::require(std::isfinite(t) && t >= 0, "collective times are finite and >= 0");
    }
  }
  return 0;
}

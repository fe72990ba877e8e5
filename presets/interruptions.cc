// Reading presets/interruptions.json and --interruptions files
// (interruptions.h's parse_interruptions and builtin_reliability).
#include "presets/interruptions.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <set>

#include "base/number_text.h"
#include "base/strict_json.h"
#include "presets/embedded.h"

namespace llmplan::presets {
namespace {

namespace bj = boost::json;

// Bounds that keep every derived time finite.
constexpr double kMaxPerUnitDay = 1e3;
constexpr double kMaxSeconds = 1e7;
constexpr double kMinBytesPerS = 1e6;
constexpr double kMaxBytesPerS = 1e16;

struct Snapshot {
  double gpus = 0, gpus_per_node = 0, gpus_per_switch = 0, days = 0;
};

// The file's "snapshot" (the fleet its counts were observed on), when
// given: into *snap, and its switch size into rel->gpus_per_switch.
Status parse_snapshot(json::JsonObjectReader* r, Snapshot* snap, bool* have_snapshot,
                      Reliability* rel) {
  if (const bj::value* s = r->child("snapshot")) {
    json::JsonObjectReader sr(*s, r->field_path("snapshot"));
    sr.read_double("gpus", &snap->gpus, true, 1);
    sr.read_double("gpus_per_node", &snap->gpus_per_node, true, 1);
    sr.read_double("gpus_per_switch", &snap->gpus_per_switch, true, 1);
    sr.read_double("days", &snap->days, true, 1e-6);
    LLMPLAN_RETURN_IF_ERROR(sr.finish());
    *have_snapshot = true;
    rel->gpus_per_switch = static_cast<int>(snap->gpus_per_switch);
  }
  return Status();
}

// The file's "measured_gpus" (the GPUs its figures were measured on), into
// *measured when not null.
Status parse_measured_gpus(json::JsonObjectReader* r, std::vector<std::string>* measured) {
  if (const bj::value* m = r->child("measured_gpus")) {
    if (!m->is_array()) return Status::invalid_argument(r->field_path("measured_gpus") + ": expected an array of GPU names");
    for (const bj::value& g : m->get_array()) {
      if (!g.is_string()) return Status::invalid_argument(r->field_path("measured_gpus") + ": expected an array of GPU names");
      if (measured != nullptr) measured->emplace_back(g.get_string());
    }
  }
  return Status();
}

// Cause `v` at JSON path `at`: a rate per unit per day, given directly or
// as a count over the snapshot's fleet and days; its name must not be in
// *names already (it is added).
Result<InterruptionCause> parse_cause(const bj::value& v, const std::string& at,
                                      const Snapshot& snap, bool have_snapshot,
                                      std::set<std::string>* names) {
  if (!v.is_object()) return Status::invalid_argument(at + ": expected an object");
  json::JsonObjectReader cr(v, at);
  InterruptionCause c;
  cr.read_string("name", &c.name, true);
  cr.read_enum("scope", &c.scope,
               {{"gpu", CauseScope::kGpu}, {"node", CauseScope::kNode}, {"switch", CauseScope::kSwitch}},
               true);
  cr.read_bool("hardware", &c.hardware);
  cr.read_string("source", &c.source);
  const bool has_count = cr.has("count"), has_rate = cr.has("per_day");
  if (has_count == has_rate) {
    cr.fail("count", "give exactly one of \"count\" (with a snapshot) or \"per_day\"");
  }
  double count = 0;
  cr.read_double("count", &count, false, 0);
  cr.read_double("per_day", &c.per_unit_day, false, 0);
  LLMPLAN_RETURN_IF_ERROR(cr.finish());
  if (c.name.empty()) return Status::invalid_argument(at + ".name: expected a non-empty name");
  if (!names->insert(c.name).second) {
    return Status::invalid_argument(at + ".name: \"" + c.name + "\" is listed twice");
  }
  if (has_count) {
    if (!have_snapshot) {
      return Status::invalid_argument(at + ".count: a count needs the file's \"snapshot\"");
    }
    const double unit_count = c.scope == CauseScope::kGpu    ? snap.gpus
                              : c.scope == CauseScope::kNode ? std::ceil(snap.gpus / snap.gpus_per_node)
                                                             : std::ceil(snap.gpus / snap.gpus_per_switch);
      c.per_unit_day = count / (unit_count * snap.days);
  }
  if (!std::isfinite(c.per_unit_day) || c.per_unit_day > kMaxPerUnitDay) {
    return Status::invalid_argument(at + ": rate out of range (at most 1000 per unit per day)");
  }
  return c;
}

// The file's "causes" (required without a base), replacing rel->causes.
Status parse_causes(json::JsonObjectReader* r, bool required, const Snapshot& snap,
                    bool have_snapshot, Reliability* rel) {
  if (const bj::value* cs = r->child("causes", required)) {
    if (!cs->is_array() || cs->get_array().empty()) {
      return Status::invalid_argument(r->field_path("causes") + ": expected a non-empty array of causes");
    }
    rel->causes.clear();
    std::set<std::string> names;
    const bj::array& a = cs->get_array();
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string at = r->field_path("causes") + "[" + std::to_string(i) + "]";
      LLMPLAN_ASSIGN_OR_RETURN(InterruptionCause c,
                               parse_cause(a[i], at, snap, have_snapshot, &names));
      rel->causes.push_back(std::move(c));
    }
  }
  return Status();
}

// The file's "storage" and "restart" sections (required without a base)
// into *k.
Status parse_checkpoint(json::JsonObjectReader* r, bool required, CheckpointSettings* k) {
  // Each figure has a physical range (issue 48, item 2): a storage rate from
  // 1 MB/s (--checkpoint-write-gbps's 0.001) to 1e16 B/s, so that no rate
  // makes a checkpoint take 1e300 s; 0.1 to 1,000 checkpoint bytes per
  // parameter; restart times up to kMaxSeconds.
  auto in_range = [](json::JsonObjectReader* rr, const char* key, double lo, double hi, double* v) {
    rr->read_double(key, v, false, 0);
    if (rr->status().ok() && rr->has(key) && !(*v >= lo && *v <= hi)) {
      rr->fail(key, "must be >= " + number_text(lo) + " and <= " + number_text(hi) + ", got " +
                        number_text(*v));
    }
  };
  if (const bj::value* s = r->child("storage", required)) {
    json::JsonObjectReader sr(*s, r->field_path("storage"));
    in_range(&sr, "write_bytes_per_s", kMinBytesPerS, kMaxBytesPerS, &k->write_bytes_per_s);
    in_range(&sr, "read_bytes_per_s", kMinBytesPerS, kMaxBytesPerS, &k->read_bytes_per_s);
    in_range(&sr, "node_bytes_per_s", kMinBytesPerS, kMaxBytesPerS, &k->node_bytes_per_s);
    in_range(&sr, "host_copy_bytes_per_s", kMinBytesPerS, kMaxBytesPerS, &k->host_copy_bytes_per_s);
    in_range(&sr, "bytes_per_param", 0.1, 1e3, &k->bytes_per_param);
    LLMPLAN_RETURN_IF_ERROR(sr.finish());
  }
  if (const bj::value* s = r->child("restart", required)) {
    json::JsonObjectReader sr(*s, r->field_path("restart"));
    in_range(&sr, "detection_s", 0, kMaxSeconds, &k->detection_s);
    in_range(&sr, "reschedule_s", 0, kMaxSeconds, &k->reschedule_s);
    in_range(&sr, "spare_swap_s", 0, kMaxSeconds, &k->spare_swap_s);
    in_range(&sr, "node_repair_s", 0, kMaxSeconds, &k->node_repair_s);
    in_range(&sr, "init_base_s", 0, kMaxSeconds, &k->init_base_s);
    in_range(&sr, "init_per_gpu_s", 0, 10, &k->init_per_gpu_s);
    in_range(&sr, "warmup_s", 0, kMaxSeconds, &k->warmup_s);
    LLMPLAN_RETURN_IF_ERROR(sr.finish());
  }
  return Status();
}

Status parse_impl(std::string_view text, const std::string& name, const Reliability* base,
                  Reliability* out, std::vector<std::string>* measured) {
  LLMPLAN_ASSIGN_OR_RETURN(bj::value root, json::parse(text, name));
  if (!root.is_object()) return Status::invalid_argument(name + ": expected an object");
  json::JsonObjectReader r = json::JsonObjectReader::document(root, name);
  r.ignore("note");
  r.ignore("measured_gpus_source");
  Reliability rel = base != nullptr ? *base : Reliability{};
  rel.enabled = true;
  Snapshot snap;
  bool have_snapshot = false;
  LLMPLAN_RETURN_IF_ERROR(parse_snapshot(&r, &snap, &have_snapshot, &rel));
  LLMPLAN_RETURN_IF_ERROR(parse_measured_gpus(&r, measured));
  LLMPLAN_RETURN_IF_ERROR(parse_causes(&r, base == nullptr, snap, have_snapshot, &rel));
  LLMPLAN_RETURN_IF_ERROR(parse_checkpoint(&r, base == nullptr, &rel.checkpoint));
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  rel.source = name;
  *out = std::move(rel);
  return Status();
}

}  // namespace

Result<Reliability> parse_interruptions(std::string_view text, const std::string& source_name,
                                        const Reliability* base) {
  Reliability rel;
  LLMPLAN_RETURN_IF_ERROR(parse_impl(text, source_name, base, &rel, nullptr));
  if (base != nullptr) rel.carried_over = false;  // the user's own figures
  return rel;
}

Result<Reliability> builtin_reliability(const std::string& gpu_name) {
  for (const EmbeddedFile& file : embedded_files()) {
    if (file.name != "interruptions.json") continue;
    Reliability rel;
    std::vector<std::string> measured;
    Status s = parse_impl(file.text, "built-in interruptions.json", nullptr, &rel, &measured);
    if (!s.ok()) return Status::internal("broken built-in preset: " + s.message());
    rel.carried_over = std::find(measured.begin(), measured.end(), gpu_name) == measured.end();
    return rel;
  }
  return Status::internal("built-in interruptions.json is missing");
}

double rate_per_gpu_day(const Reliability& rel, int gpus_per_node) {
  double r = 0;
  for (const InterruptionCause& c : rel.causes) {
    switch (c.scope) {
      case CauseScope::kGpu: r += c.per_unit_day; break;
      case CauseScope::kNode: r += c.per_unit_day / std::max(1, gpus_per_node); break;
      case CauseScope::kSwitch: r += c.per_unit_day / std::max(1, rel.gpus_per_switch); break;
    }
  }
  return r;
}

}  // namespace llmplan::presets

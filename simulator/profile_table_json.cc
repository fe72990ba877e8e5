#include "simulator/profile_table_json.h"

#include <boost/json.hpp>
#include <cmath>
#include <utility>

#include "base/strict_json.h"

namespace llmplan::simulator {
namespace {

namespace bj = boost::json;

// Paths of the document's parts read "file.json: kernels[3].time_s".
std::string index_path(const std::string& source, std::string_view key, size_t i) {
  return source + ": " + std::string(key) + "[" + std::to_string(i) + "]";
}

// The array under `key`, or nullptr (with an error in `r` when required or
// not an array).
const bj::array* read_array(json::JsonObjectReader* r, std::string_view key, bool required) {
  const bj::value* v = r->child(key, required);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) {
    r->fail(key, "expected an array");
    return nullptr;
  }
  return &v->get_array();
}

void read_string_list(json::JsonObjectReader* r, std::string_view key,
                      std::vector<std::string>* out) {
  const bj::array* a = read_array(r, key, false);
  if (a == nullptr) return;
  for (size_t i = 0; i < a->size(); ++i) {
    if (!(*a)[i].is_string()) {
      r->fail(key, "element " + std::to_string(i) + " is not a string");
      return;
    }
    out->emplace_back((*a)[i].get_string());
  }
}

template <typename E, size_t N>
void read_named(json::JsonObjectReader* r, std::string_view key, E* out, E (&values)[N],
                const char* (*name)(E), bool required) {
  std::string s;
  const bool had = r->has(key);
  r->read_string(key, &s, required);
  if (!had || !r->status().ok()) return;
  std::string allowed;
  for (E v : values) {
    if (s == name(v)) {
      *out = v;
      return;
    }
    allowed += allowed.empty() ? "" : ", ";
    allowed += name(v);
  }
  r->fail(key, "unknown value \"" + s + "\" (expected one of: " + allowed + ")");
}

KernelKind kKinds[] = {
    KernelKind::kLayerNorm,      KernelKind::kQkvGemm,     KernelKind::kAttnScoreGemm,
    KernelKind::kSoftmax,        KernelKind::kAttnDropout, KernelKind::kAttnValueGemm,
    KernelKind::kFlashAttention, KernelKind::kOutProjGemm, KernelKind::kDropoutResidual,
    KernelKind::kFc1Gemm,        KernelKind::kActivation,  KernelKind::kFc2Gemm,
    KernelKind::kEmbedding,      KernelKind::kLogitsGemm,  KernelKind::kCrossEntropy,
    KernelKind::kOptimizerStep,  KernelKind::kFp8CastTranspose, KernelKind::kRouterGemm,
    KernelKind::kMoeRouting,     KernelKind::kMoePermute,  KernelKind::kExpertFc1Gemm,
    KernelKind::kExpertFc2Gemm,  KernelKind::kMoeExpertBias, KernelKind::kMoeActClamp,
    KernelKind::kMambaInProjGemm, KernelKind::kMambaConv, KernelKind::kSsdScan,
    KernelKind::kMambaGatedNorm, KernelKind::kMambaOutProjGemm, KernelKind::kRope};
Pass kPasses[] = {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeight, Pass::kBackward};
Precision kPrecisions[] = {Precision::kBf16, Precision::kFp16, Precision::kFp8, Precision::kNvfp4};
CollectiveKind kCollectives[] = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                 CollectiveKind::kReduceScatter, CollectiveKind::kSendRecv,
                                 CollectiveKind::kAllToAll};

const char* precision_name(Precision p) { return to_string(p); }
const char* activation_name(Activation a) {
  return a == Activation::kGelu ? "gelu" : a == Activation::kSwiglu ? "swiglu" : "squared_relu";
}

Status read_shape(const bj::value& v, const std::string& path, ProfileShape* s) {
  json::JsonObjectReader r(v, path);
  r.read_int("hidden", &s->hidden, true, 1);
  r.read_int("heads", &s->heads, true, 1);
  r.read_int("kv_heads", &s->kv_heads, false, 0);
  r.read_int("ffn", &s->ffn, false, 0);
  r.read_int("seq", &s->seq, true, 1);
  r.read_int("micro_batch", &s->micro_batch, true, 1);
  r.read_int("tp", &s->tp, true, 1);
  r.read_int("vocab", &s->vocab, false, 0);
  r.read_enum("activation", &s->activation,
              {{"gelu", Activation::kGelu}, {"swiglu", Activation::kSwiglu}});
  return r.finish();
}

Status read_kernel(const bj::value& v, const std::string& path, ProfileKernel* k) {
  json::JsonObjectReader r(v, path);
  read_named(&r, "kind", &k->kind, kKinds, kernel_kind_name, true);
  read_named(&r, "pass", &k->pass, kPasses, pass_name, true);
  read_named(&r, "precision", &k->precision, kPrecisions, precision_name, true);
  if (!r.status().ok()) return r.status();
  if (is_shape_keyed(k->kind)) {
    r.read_int64("m", &k->gemm.m, true, 1);
    r.read_int64("n", &k->gemm.n, true, 1);
    r.read_int64("k", &k->gemm.k, true, 1);
    r.read_int64("batch", &k->gemm.batch, false, 1);
    r.read_double("bytes", &k->bytes, false, 0);
  } else {
    for (std::string_view key : {"m", "n", "k", "batch"}) {
      if (r.has(key)) {
        r.fail(key, "only GEMM and flash-attention entries have a shape; " +
                        std::string(kernel_kind_name(k->kind)) + " is keyed by bytes");
      }
    }
    r.read_double("bytes", &k->bytes, true, 0);
    r.read_int64("elements", &k->elements, false, 0);
  }
  r.read_double("flops", &k->flops, false, 0);
  r.read_double("time_s", &k->time_s, true, 0);
  r.read_double("min_time_s", &k->min_time_s, false, 0);
  r.read_double("max_time_s", &k->max_time_s, false, 0);
  r.read_double("event_time_s", &k->event_time_s, false, 0);
  r.read_int("repeats", &k->repeats, false, 0);
  read_string_list(&r, "kernels", &k->kernel_names);
  r.ignore("note");
  return r.finish();
}

Status read_points(json::JsonObjectReader* r, CollectiveCurve* curve) {
  const bj::array* a = read_array(r, "points", true);
  if (a == nullptr) return r->status();
  const std::string path = r->field_path("points");
  for (size_t i = 0; i < a->size(); ++i) {
    const bj::value& p = (*a)[i];
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!p.is_array() || p.get_array().size() != 2 || !p.get_array()[0].is_number() ||
        !p.get_array()[1].is_number()) {
      return Status::invalid_argument(at + ": expected [bytes, time_s]");
    }
    curve->bytes.push_back(p.get_array()[0].to_number<double>());
    curve->seconds.push_back(p.get_array()[1].to_number<double>());
  }
  Status s = validate(*curve);
  if (!s.ok()) return Status::invalid_argument(r->path() + "." + s.message());
  return Status();
}

Status read_collective(const bj::value& v, const std::string& path, ProfileCollective* c) {
  json::JsonObjectReader r(v, path);
  read_named(&r, "kind", &c->kind, kCollectives, collective_kind_name, true);
  r.read_int("group_size", &c->group_size, true, 2);
  r.read_int("ranks_per_node", &c->ranks_per_node, true, 1);
  r.read_string("dtype", &c->dtype);
  r.ignore("note");
  if (!r.status().ok()) return r.status();
  LLMPLAN_RETURN_IF_ERROR(read_points(&r, &c->curve));
  return r.finish();
}

Status read_profile(const bj::value& root, const std::string& path, Profile* p) {
  json::JsonObjectReader r = json::JsonObjectReader::document(root, path);
  std::string format;
  r.read_string("format", &format, true);
  int version = 0;
  r.read_int("format_version", &version, true);
  if (r.status().ok() && format != kProfileFormat) {
    r.fail("format", "expected \"" + std::string(kProfileFormat) + "\", got \"" + format + "\"");
  }
  if (r.status().ok() && version != kProfileFormatVersion) {
    r.fail("format_version", "unsupported version " + std::to_string(version) +
                                 " (this llmplan reads " + std::to_string(kProfileFormatVersion) +
                                 ")");
  }
  r.read_string("llmplan_version", &p->llmplan_version);
  r.read_string("date", &p->date);
  r.read_string("host", &p->host);
  if (!r.status().ok()) return r.status();

  if (const bj::value* g = r.child("gpu", true)) {
    json::JsonObjectReader gr(*g, path + ": gpu");
    gr.read_string("name", &p->gpu.name, true);
    gr.read_int("count", &p->gpu.count, false, 0);
    gr.read_string("compute_capability", &p->gpu.compute_capability);
    gr.read_int("sm_count", &p->gpu.sm_count, false, 0);
    gr.read_double("memory_bytes", &p->gpu.memory_bytes, false, 0);
    gr.read_double("sm_clock_mhz", &p->gpu.sm_clock_mhz, false, 0);
    gr.read_double("memory_clock_mhz", &p->gpu.memory_clock_mhz, false, 0);
    gr.read_int("memory_bus_width_bits", &p->gpu.memory_bus_width_bits, false, 0);
    LLMPLAN_RETURN_IF_ERROR(gr.finish());
  }
  if (const bj::value* s = r.child("software")) {
    json::JsonObjectReader sr(*s, path + ": software");
    sr.read_string("driver", &p->software.driver);
    sr.read_string("cuda_runtime", &p->software.cuda_runtime);
    sr.read_string("cublas", &p->software.cublas);
    sr.read_string("nccl", &p->software.nccl);
    sr.read_string("cupti", &p->software.cupti);
    LLMPLAN_RETURN_IF_ERROR(sr.finish());
  }
  if (const bj::value* t = r.child("timing")) {
    json::JsonObjectReader tr(*t, path + ": timing");
    tr.read_string("method", &p->timing.method);
    tr.read_int("warmup", &p->timing.warmup, false, 0);
    tr.read_int("repeats", &p->timing.repeats, false, 0);
    tr.read_string("statistic", &p->timing.statistic);
    LLMPLAN_RETURN_IF_ERROR(tr.finish());
  }
  if (const bj::array* a = read_array(&r, "shapes", false)) {
    for (size_t i = 0; i < a->size(); ++i) {
      ProfileShape s;
      LLMPLAN_RETURN_IF_ERROR(read_shape((*a)[i], index_path(path, "shapes", i), &s));
      p->shapes.push_back(s);
    }
  }
  if (const bj::array* a = read_array(&r, "kernels", true)) {
    for (size_t i = 0; i < a->size(); ++i) {
      ProfileKernel k;
      LLMPLAN_RETURN_IF_ERROR(read_kernel((*a)[i], index_path(path, "kernels", i), &k));
      p->kernels.push_back(std::move(k));
    }
  }
  if (const bj::array* a = read_array(&r, "collectives", true)) {
    for (size_t i = 0; i < a->size(); ++i) {
      ProfileCollective c;
      LLMPLAN_RETURN_IF_ERROR(read_collective((*a)[i], index_path(path, "collectives", i), &c));
      p->collectives.push_back(std::move(c));
    }
  }
  if (const bj::value* o = r.child("overheads")) {
    json::JsonObjectReader orr(*o, path + ": overheads");
    double mb = 0, it = 0;
    if (orr.has("microbatch_s")) {
      orr.read_double("microbatch_s", &mb, false, 0);
      p->microbatch_overhead_s = mb;
    }
    if (orr.has("iteration_s")) {
      orr.read_double("iteration_s", &it, false, 0);
      p->iteration_overhead_s = it;
    }
    orr.ignore("source");
    LLMPLAN_RETURN_IF_ERROR(orr.finish());
  }
  read_string_list(&r, "notes", &p->notes);
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  Status s = validate(*p);
  if (!s.ok()) return Status::invalid_argument(path + ": " + s.message());
  return Status();
}

bj::value number(double v) {
  // Integral values (sizes, counts) are written as integers.
  // Range first: converting a double beyond int64's range is undefined.
  if (v < 9.0e15 && v > -9.0e15 && v == std::trunc(v)) {
    return bj::value(static_cast<int64_t>(v));
  }
  return bj::value(v);
}

bj::array string_array(const std::vector<std::string>& v) {
  bj::array a;
  for (const std::string& s : v) a.emplace_back(bj::string_view(s));
  return a;
}

Result<std::vector<ProfileShape>> read_shapes(const bj::value& root, const std::string& path) {
  json::JsonObjectReader r = json::JsonObjectReader::document(root, path);
  r.ignore("note");
  std::vector<ProfileShape> out;
  if (const bj::array* a = read_array(&r, "shapes", true)) {
    for (size_t i = 0; i < a->size(); ++i) {
      ProfileShape s;
      LLMPLAN_RETURN_IF_ERROR(read_shape((*a)[i], index_path(path, "shapes", i), &s));
      out.push_back(s);
    }
    if (a->empty()) r.fail("shapes", "must list at least one shape");
  }
  LLMPLAN_RETURN_IF_ERROR(r.finish());
  return out;
}

}  // namespace

Result<std::vector<ProfileShape>> parse_profile_shapes(std::string_view text,
                                                       std::string_view source_name) {
  LLMPLAN_ASSIGN_OR_RETURN(bj::value root, json::parse(text, source_name));
  return read_shapes(root, std::string(source_name));
}

Result<std::vector<ProfileShape>> read_profile_shapes_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(bj::value root, json::parse_file(path));
  return read_shapes(root, path);
}

Result<Profile> parse_profile(std::string_view text, std::string_view source_name) {
  LLMPLAN_ASSIGN_OR_RETURN(bj::value root, json::parse(text, source_name));
  Profile p;
  LLMPLAN_RETURN_IF_ERROR(read_profile(root, std::string(source_name), &p));
  return p;
}

Result<Profile> read_profile_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(bj::value root, json::parse_file(path));
  Profile p;
  LLMPLAN_RETURN_IF_ERROR(read_profile(root, path, &p));
  return p;
}

std::string profile_to_json(const Profile& p) {
  bj::object root;
  root["format"] = kProfileFormat;
  root["format_version"] = kProfileFormatVersion;
  root["llmplan_version"] = p.llmplan_version;
  root["date"] = p.date;
  root["host"] = p.host;
  root["gpu"] = bj::object{{"name", p.gpu.name},
                           {"count", p.gpu.count},
                           {"compute_capability", p.gpu.compute_capability},
                           {"sm_count", p.gpu.sm_count},
                           {"memory_bytes", number(p.gpu.memory_bytes)},
                           {"sm_clock_mhz", number(p.gpu.sm_clock_mhz)},
                           {"memory_clock_mhz", number(p.gpu.memory_clock_mhz)},
                           {"memory_bus_width_bits", p.gpu.memory_bus_width_bits}};
  root["software"] = bj::object{{"driver", p.software.driver},
                                {"cuda_runtime", p.software.cuda_runtime},
                                {"cublas", p.software.cublas},
                                {"nccl", p.software.nccl},
                                {"cupti", p.software.cupti}};
  root["timing"] = bj::object{{"method", p.timing.method},
                              {"warmup", p.timing.warmup},
                              {"repeats", p.timing.repeats},
                              {"statistic", p.timing.statistic}};
  bj::array shapes;
  for (const ProfileShape& s : p.shapes) {
    shapes.push_back(bj::object{{"hidden", s.hidden},
                                {"heads", s.heads},
                                {"kv_heads", s.kv_heads},
                                {"ffn", s.ffn},
                                {"seq", s.seq},
                                {"micro_batch", s.micro_batch},
                                {"tp", s.tp},
                                {"vocab", s.vocab},
                                {"activation", activation_name(s.activation)}});
  }
  root["shapes"] = std::move(shapes);
  bj::array kernels;
  for (const ProfileKernel& k : p.kernels) {
    bj::object o;
    o["kind"] = kernel_kind_name(k.kind);
    o["pass"] = pass_name(k.pass);
    o["precision"] = to_string(k.precision);
    if (is_shape_keyed(k.kind)) {
      o["m"] = k.gemm.m;
      o["n"] = k.gemm.n;
      o["k"] = k.gemm.k;
      o["batch"] = k.gemm.batch;
      if (k.bytes > 0) o["bytes"] = number(k.bytes);
    } else {
      o["bytes"] = number(k.bytes);
      if (k.elements > 0) o["elements"] = k.elements;
    }
    if (k.flops > 0) o["flops"] = number(k.flops);
    o["time_s"] = k.time_s;
    if (k.min_time_s > 0) o["min_time_s"] = k.min_time_s;
    if (k.max_time_s > 0) o["max_time_s"] = k.max_time_s;
    if (k.event_time_s > 0) o["event_time_s"] = k.event_time_s;
    if (k.repeats > 0) o["repeats"] = k.repeats;
    if (!k.kernel_names.empty()) o["kernels"] = string_array(k.kernel_names);
    kernels.push_back(std::move(o));
  }
  root["kernels"] = std::move(kernels);
  bj::array collectives;
  for (const ProfileCollective& c : p.collectives) {
    bj::array points;
    for (size_t i = 0; i < c.curve.bytes.size(); ++i) {
      points.push_back(bj::array{number(c.curve.bytes[i]), c.curve.seconds[i]});
    }
    bj::object o{{"kind", collective_kind_name(c.kind)},
                 {"group_size", c.group_size},
                 {"ranks_per_node", c.ranks_per_node}};
    if (!c.dtype.empty()) o["dtype"] = c.dtype;
    o["points"] = std::move(points);
    collectives.push_back(std::move(o));
  }
  root["collectives"] = std::move(collectives);
  if (p.microbatch_overhead_s || p.iteration_overhead_s) {
    bj::object o;
    if (p.microbatch_overhead_s) o["microbatch_s"] = *p.microbatch_overhead_s;
    if (p.iteration_overhead_s) o["iteration_s"] = *p.iteration_overhead_s;
    root["overheads"] = std::move(o);
  }
  root["notes"] = string_array(p.notes);
  return json::pretty(root);
}

Result<std::shared_ptr<const ProfileTable>> load_profile_table(
    const std::string& path, std::shared_ptr<const CostModel> fallback) {
  LLMPLAN_ASSIGN_OR_RETURN(Profile p, read_profile_file(path));
  return ProfileTable::create(std::move(p), path, std::move(fallback));
}

Result<std::shared_ptr<const ProfileTable>> parse_profile_table(
    std::string_view text, std::string_view source_name,
    std::shared_ptr<const CostModel> fallback) {
  LLMPLAN_ASSIGN_OR_RETURN(Profile p, parse_profile(text, source_name));
  return ProfileTable::create(std::move(p), std::string(source_name), std::move(fallback));
}

}  // namespace llmplan::simulator

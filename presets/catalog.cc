#include "presets/catalog.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "presets/embedded.h"
#include "presets/preset_json.h"
#include "base/input_file.h"
#include "base/name_table.h"

namespace llmplan::presets {

namespace {
constexpr Named<PresetKind> kPresetKindNames[] = {
    {"gpu", PresetKind::kGpu},     {"cluster", PresetKind::kCluster},
    {"model", PresetKind::kModel}, {"law", PresetKind::kLaw},
    {"price", PresetKind::kPrice}, {"collectives", PresetKind::kCollectives},
};
}  // namespace

const char* to_string(PresetKind kind) { return name_in(kPresetKindNames, kind); }

struct Catalog::Impl {
  struct Entry {
    RawPreset raw;
    std::string origin;
  };
  std::vector<Entry> entries;  // load order; a replaced entry keeps its place

  const Entry* find(std::string_view name) const {
    for (const Entry& e : entries) {
      if (e.raw.name == name) return &e;
    }
    return nullptr;
  }
  Entry* find(std::string_view name) {
    return const_cast<Entry*>(static_cast<const Impl*>(this)->find(name));
  }
};

namespace {

constexpr const char* kBuiltinOrigin = "built-in";

std::string format(const char* fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

std::string names_of_kind(const Catalog::Impl* impl, PresetKind kind) {
  std::string out;
  if (impl == nullptr) return "none";
  for (const auto& e : impl->entries) {
    if (e.raw.kind != kind) continue;
    out += out.empty() ? "" : ", ";
    out += e.raw.name;
  }
  return out.empty() ? "none" : out;
}

// Levenshtein distance, for "did you mean" lists.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string gpu_summary(const simulator::GpuSpec& g) {
  return format("%.0f TFLOP/s bf16, ", g.peak_bf16_flops / 1e12) +
         (g.peak_fp8_flops > 0 ? format("%.0f fp8, ", g.peak_fp8_flops / 1e12) : std::string()) +
         format("%.0f GB HBM at ", g.hbm_bytes / 1e9) +
         format("%.3g TB/s, ", g.hbm_bytes_per_s / 1e12) + format("%.0f W", g.tdp_w);
}

std::string cluster_summary(const simulator::Cluster& c) {
  std::string s = std::to_string(c.gpus_per_node) + " x " + c.gpu.name + " per node" +
                  (c.num_nodes > 0 ? ", " + std::to_string(c.num_nodes) + " nodes" : "") +
                  format(", NIC %.3g GB/s per GPU, ", c.nic_bytes_per_s / 1e9);
  return s + (c.usd_per_gpu_hour > 0 ? format("$%.2f/GPU-h", c.usd_per_gpu_hour)
                                     : std::string("price unknown"));
}

std::string model_summary(const simulator::Model& m) {
  return format("%.1fB params, ", static_cast<double>(m.parameter_count()) / 1e9) +
         std::to_string(m.num_layers) + " layers, hidden " + std::to_string(m.hidden_size) + ", " +
         std::to_string(m.num_heads) + " heads, seq " + std::to_string(m.seq_length);
}

std::string law_summary(const scaling::LossLaw& l) {
  return format("L = %g", l.E) + format(" + %g/N^", l.A) + format("%g", l.alpha) +
         format(" + %g/D^", l.B) + format("%g", l.beta);
}

std::string collectives_summary(const simulator::MeasuredCollectives& m) {
  std::string sizes;
  for (const simulator::InNodeCurve& c : m.all_reduce) {
    sizes += (sizes.empty() ? "" : ",") + std::to_string(c.group_size);
  }
  return "all-reduce curves for in-node groups of " + (sizes.empty() ? std::string("none") : sizes);
}

std::string price_summary(const Price& p) {
  return format("$%.2f/GPU-h", p.usd_per_gpu_hour) + (p.date.empty() ? "" : " as of " + p.date);
}

// The GPU checks of simulator::validate(Cluster), applied to a GPU alone.
Status validate_gpu(const simulator::GpuSpec& gpu) {
  simulator::Cluster probe;
  probe.gpu = gpu;
  probe.nic_bytes_per_s = 1;
  Status s = simulator::validate(probe);
  if (s.ok()) return s;
  std::string m = s.message();
  const std::string prefix = "cluster.";
  if (m.rfind(prefix, 0) == 0) m = m.substr(prefix.size());
  return Status(s.code(), m);
}

}  // namespace

Result<Catalog> Catalog::builtin() {
  // All built-in files are merged at once, so their order does not matter
  // (clusters may name GPUs and prices from other files).
  std::vector<RawPreset> all;
  for (const EmbeddedFile& file : embedded_files()) {
    // ownership.json (--cost-model owned) is not a preset file: the planner
    // reads it (planner/search/pricing.h).
    if (file.name == "ownership.json") continue;
    // interruptions.json (failures and restarts) is read by planner/search/reliability.
    if (file.name == "interruptions.json") continue;
    Result<std::vector<RawPreset>> raws =
        parse_preset_text(file.text, std::string("built-in ") + std::string(file.name));
    if (!raws.ok()) return Status::internal("broken built-in preset: " + raws.status().message());
    for (RawPreset& raw : *raws) all.push_back(std::move(raw));
  }
  Catalog catalog;
  Status s = catalog.merge(std::move(all), kBuiltinOrigin, /*allow_replace=*/false);
  if (!s.ok()) return Status::internal("broken built-in preset: " + s.message());
  return catalog;
}

Status Catalog::add_file(const std::string& path) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return add_text(text, path);
}

Status Catalog::add_text(std::string_view json_text, const std::string& source_name) {
  LLMPLAN_ASSIGN_OR_RETURN(std::vector<RawPreset> raws, parse_preset_text(json_text, source_name));
  return merge(std::move(raws), source_name, /*allow_replace=*/true);
}

Status Catalog::merge(std::vector<RawPreset> raws, const std::string& origin, bool allow_replace) {
  auto next = impl_ ? std::make_shared<Impl>(*impl_) : std::make_shared<Impl>();
  for (RawPreset& raw : raws) {
    Impl::Entry* old = next->find(raw.name);
    if (old != nullptr && (old->raw.kind != raw.kind || !allow_replace)) {
      return Status::invalid_argument(raw.path + ".name: \"" + raw.name + "\" is already a " +
                                      to_string(old->raw.kind) + " preset (" + old->raw.path +
                                      "); names are unique across kinds" +
                                      (allow_replace ? "" : " and files"));
    }
    if (old != nullptr) {
      old->raw = std::move(raw);
      old->origin = origin;
    } else {
      next->entries.push_back({std::move(raw), origin});
    }
  }
  // Check every preset against the merged catalog: a replaced GPU or price
  // must still serve the clusters that name it.
  Catalog candidate;
  candidate.impl_ = next;
  for (const Impl::Entry& e : next->entries) {
    LLMPLAN_RETURN_IF_ERROR(candidate.check_entry(e.raw));
  }
  impl_ = std::move(next);
  return Status();
}

Status Catalog::check_entry(const RawPreset& raw) const {
  switch (raw.kind) {
    case PresetKind::kGpu: {
      Result<simulator::GpuSpec> g = gpu(raw.name);
      return g.ok() ? validate_gpu(*g).with_prefix(raw.path) : g.status();
    }
    case PresetKind::kCluster: {
      Result<simulator::Cluster> c = cluster(raw.name);
      return c.ok() ? simulator::validate(*c).with_prefix(raw.path) : c.status();
    }
    case PresetKind::kModel: {
      Result<simulator::Model> m = model(raw.name);
      return m.ok() ? simulator::validate(*m).with_prefix(raw.path) : m.status();
    }
    case PresetKind::kLaw: {
      Result<scaling::LossLaw> l = law(raw.name);
      return l.ok() ? scaling::validate(*l).with_prefix(raw.path) : l.status();
    }
    case PresetKind::kPrice: {
      Result<Price> p = price(raw.name);
      if (!p.ok()) return p.status();
      if (p->gpu.empty()) return Status();
      return gpu(p->gpu).status().with_prefix(raw.path + ".gpu");
    }
    case PresetKind::kCollectives:
      return collectives(raw.name).status();
  }
  return Status::internal("unknown preset kind");
}

std::vector<PresetInfo> Catalog::list() const {
  std::vector<PresetInfo> out;
  if (!impl_) return out;
  for (PresetKind kind : {PresetKind::kGpu, PresetKind::kCluster, PresetKind::kModel,
                          PresetKind::kLaw, PresetKind::kPrice, PresetKind::kCollectives}) {
    for (const Impl::Entry& e : impl_->entries) {
      if (e.raw.kind != kind) continue;
      std::string summary;
      switch (kind) {
        case PresetKind::kGpu: {
          auto v = gpu(e.raw.name);
          if (v.ok()) summary = gpu_summary(*v);
          break;
        }
        case PresetKind::kCluster: {
          auto v = cluster(e.raw.name);
          if (v.ok()) summary = cluster_summary(*v);
          break;
        }
        case PresetKind::kModel: {
          auto v = model(e.raw.name);
          if (v.ok()) summary = model_summary(*v);
          break;
        }
        case PresetKind::kLaw: {
          auto v = law(e.raw.name);
          if (v.ok()) summary = law_summary(*v);
          break;
        }
        case PresetKind::kPrice: {
          auto v = price(e.raw.name);
          if (v.ok()) summary = price_summary(*v);
          break;
        }
        case PresetKind::kCollectives: {
          auto v = collectives(e.raw.name);
          if (v.ok()) summary = collectives_summary(*v);
          break;
        }
      }
      std::string description = e.raw.description;
      if (!summary.empty()) description += (description.empty() ? "" : ": ") + summary;
      out.push_back({kind, e.raw.name, description, e.origin});
    }
  }
  return out;
}

Result<std::string> Catalog::show(std::string_view name) const {
  const Impl::Entry* e = impl_ ? impl_->find(name) : nullptr;
  if (e != nullptr) return pretty_preset(e->raw);
  std::vector<std::string> similar;
  std::vector<std::string> all;
  if (impl_) {
    for (const Impl::Entry& x : impl_->entries) {
      all.push_back(x.raw.name);
      const bool contains = !name.empty() && (x.raw.name.find(name) != std::string::npos ||
                                              name.find(x.raw.name) != std::string_view::npos);
      if (contains || edit_distance(x.raw.name, name) <= std::max<size_t>(2, name.size() / 3)) {
        similar.push_back(x.raw.name);
      }
    }
  }
  const std::vector<std::string>& names = similar.empty() ? all : similar;
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return Status::not_found(std::string("unknown preset \"") + std::string(name) + "\" (" +
                           (similar.empty() ? "presets: " : "similar: ") + list + ")");
}

namespace {

// The entry called `name` if it is of `kind`, else NotFound listing that
// kind's names.
Result<const RawPreset*> find_kind(const Catalog::Impl* impl, PresetKind kind,
                                   std::string_view name) {
  const Catalog::Impl::Entry* e = impl != nullptr ? impl->find(name) : nullptr;
  const std::string k = to_string(kind);
  if (e == nullptr) {
    return Status::not_found("unknown " + k + " preset \"" + std::string(name) + "\" (" + k +
                             " presets: " + names_of_kind(impl, kind) + ")");
  }
  if (e->raw.kind != kind) {
    return Status::not_found(std::string("\"") + std::string(name) + "\" is a " +
                             to_string(e->raw.kind) + " preset, not a " + k + " preset (" + k +
                             " presets: " + names_of_kind(impl, kind) + ")");
  }
  return &e->raw;
}

}  // namespace

Result<simulator::GpuSpec> Catalog::gpu(std::string_view name) const {
  LLMPLAN_ASSIGN_OR_RETURN(const RawPreset* raw, find_kind(impl_.get(), PresetKind::kGpu, name));
  return decode_gpu(*raw);
}

Result<simulator::Cluster> Catalog::cluster(std::string_view name) const {
  LLMPLAN_ASSIGN_OR_RETURN(const RawPreset* raw,
                           find_kind(impl_.get(), PresetKind::kCluster, name));
  return decode_cluster(
      *raw, [this](const std::string& gpu_name) { return gpu(gpu_name); },
      [this](const std::string& price_name) -> Result<double> {
        LLMPLAN_ASSIGN_OR_RETURN(Price p, price(price_name));
        return p.usd_per_gpu_hour;
      },
      [this](const std::string& collectives_name) { return collectives(collectives_name); });
}

Result<simulator::Model> Catalog::model(std::string_view name) const {
  LLMPLAN_ASSIGN_OR_RETURN(const RawPreset* raw, find_kind(impl_.get(), PresetKind::kModel, name));
  return decode_model(*raw);
}

Result<scaling::LossLaw> Catalog::law(std::string_view name) const {
  LLMPLAN_ASSIGN_OR_RETURN(const RawPreset* raw, find_kind(impl_.get(), PresetKind::kLaw, name));
  return decode_law(*raw);
}

Result<Price> Catalog::price(std::string_view name) const {
  LLMPLAN_ASSIGN_OR_RETURN(const RawPreset* raw, find_kind(impl_.get(), PresetKind::kPrice, name));
  return decode_price(*raw);
}

Result<simulator::MeasuredCollectives> Catalog::collectives(std::string_view name) const {
  LLMPLAN_ASSIGN_OR_RETURN(const RawPreset* raw,
                           find_kind(impl_.get(), PresetKind::kCollectives, name));
  return decode_collectives(*raw);
}

}  // namespace llmplan::presets

#include "planner/accuracy/accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "simulator/simulate.h"

namespace llmplan::planner {

Result<std::vector<AccuracyCase>> make_accuracy_cases(const std::vector<MeasuredRun>& runs,
                                                      const std::string& source,
                                                      const presets::Catalog& catalog,
                                                      const simulator::GpuSpec* gpu) {
  std::vector<AccuracyCase> cases;
  cases.reserve(runs.size());
  for (const MeasuredRun& r : runs) {
    char text[768];
    std::snprintf(text, sizeof text,
                  "{\"num_gpus\": %d, \"gpu_name\": \"A100\", \"tensor_parallel_size\": %d, "
                  "\"data_parallel_size\": %d, \"pipeline_parallel_size\": %d, "
                  "\"global_batch_size\": %d, \"micro_batch_size\": %d, "
                  "\"model_arch\": \"ShardedGptModel\", \"num_layers\": %d, \"hidden_size\": %d, "
                  "\"num_attention_heads\": %d, \"max_length\": %d, \"vocab_size\": 50257, "
                  "\"use_gradient_bucket\": false, \"use_checkpoint\": true, "
                  "\"pipeline_scheduling\": \"1f1b\", \"inter_node_bandwidth\": 800, "
                  "\"intra_node_bandwidth\": 150, \"node_size\": 8}",
                  r.num_gpus, r.tensor, r.data, r.pipeline, r.global_batch, r.micro_batch,
                  r.num_layers, r.hidden_size, r.num_heads, r.seq_length);
    const std::string where = source + ":" + std::to_string(r.line);
    Result<presets::SimConfig> config = presets::load_vtrain_config_text(text, where, catalog);
    if (!config.ok()) return config.status();
    AccuracyCase c{r, source, std::move(config).value(), "", ""};
    // vTrain's loader sets micro batch = global / d when p = 1; the measured
    // runs state theirs (and their times scale with B / (d b)), so keep it.
    c.config.plan.micro_batch_size = r.micro_batch;
    Status valid = presets::validate(c.config);
    if (!valid.ok()) return valid.with_prefix(where);
    if (gpu != nullptr) {
      const double nvlink = c.config.cluster.gpu.nvlink_bytes_per_s;
      c.config.cluster.gpu = *gpu;
      c.config.cluster.gpu.nvlink_bytes_per_s = nvlink;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<AccuracyCase> make_runs_cases(const std::vector<PublishedRun>& runs) {
  std::vector<AccuracyCase> cases;
  for (const PublishedRun& r : runs) {
    if (!r.missing.empty()) continue;
    AccuracyCase c;
    const simulator::Model& m = r.config.model;
    const simulator::Plan& p = r.config.plan;
    c.run.line = r.line;
    c.run.params_billion = static_cast<double>(m.parameter_count()) * 1e-9;
    c.run.num_gpus = p.world_size();
    c.run.global_batch = p.global_batch_size;
    c.run.micro_batch = p.micro_batch_size;
    c.run.hidden_size = m.hidden_size;
    c.run.num_heads = m.num_heads;
    c.run.num_layers = m.num_layers;
    c.run.seq_length = m.seq_length;
    c.run.tensor = p.tensor_parallel;
    c.run.data = p.data_parallel;
    c.run.pipeline = p.pipeline_parallel;
    c.run.iteration_time_s = r.measured_step_s;
    c.source = r.file;
    c.config = r.config;
    c.name = r.name;
    c.origin = r.source;
    // llm-foundry trains with Composer: PyTorch FSDP over eager modules.
    if (r.source == "llm-foundry") c.stack = "pytorch-fsdp";
    c.release = r.release;
    c.release_from_source = r.release_from_source;
    c.system = r.system;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string precision_recipe(const AccuracyCase& c) {
  const simulator::Plan& p = c.config.plan;
  std::string out = simulator::to_string(p.precision);
  if (p.precision == simulator::Precision::kFp8) {
    out += std::string("-") + simulator::to_string(p.fp8_recipe);
  }
  return out;
}

bool fits_latest_release(const std::vector<AccuracyCase>& cases) {
  return std::any_of(cases.begin(), cases.end(), [](const AccuracyCase& c) {
    return !c.release.empty() && !c.release_from_source;
  });
}

std::string release_group_key(const AccuracyCase& c) {
  char cf[32];
  std::snprintf(cf, sizeof cf, "cf%g", c.config.model.moe_capacity_factor);
  return c.system + "|" + c.config.model.name + "|" + cf + "|" + precision_recipe(c);
}

std::vector<bool> latest_release_mask(const std::vector<AccuracyCase>& cases) {
  std::map<std::string, std::vector<int>> latest;
  for (const AccuracyCase& c : cases) {
    if (c.release.empty()) continue;
    const std::vector<int> v = release_version(c.release);
    auto [it, fresh] = latest.try_emplace(release_group_key(c), v);
    if (!fresh && it->second < v) it->second = v;
  }
  std::vector<bool> out;
  out.reserve(cases.size());
  for (const AccuracyCase& c : cases) {
    out.push_back(c.release.empty() ||
                  release_version(c.release) == latest.at(release_group_key(c)));
  }
  return out;
}

std::vector<int> release_folds(const std::vector<AccuracyCase>& cases,
                               std::vector<std::string>* releases) {
  std::vector<std::string> order;
  std::vector<int> out;
  for (const AccuracyCase& c : cases) {
    auto it = std::find(order.begin(), order.end(), c.release);
    if (it == order.end()) {
      order.push_back(c.release);
      it = order.end() - 1;
    }
    out.push_back(static_cast<int>(it - order.begin()));
  }
  if (releases != nullptr) *releases = order;
  return out;
}

std::vector<std::pair<std::string, std::string>> feature_groups(const AccuracyCase& c,
                                                                bool latest) {
  const simulator::Plan& p = c.config.plan;
  const auto yes_no = [](bool b) { return std::string(b ? "yes" : "no"); };
  std::vector<std::pair<std::string, std::string>> out = {{"source", c.origin},
          {"precision", simulator::to_string(p.precision)},
          {"moe", yes_no(c.config.model.is_moe())},
          {"zero stage", "zero" + std::to_string(p.sharding_stage())},
          {"recompute", simulator::to_string(p.recompute)},
          {"tp>1", yes_no(p.tensor_parallel > 1)},
          {"pp>1", yes_no(p.pipeline_parallel > 1)},
          {"interleaved", yes_no(p.virtual_stages > 1)},
          {"seq>=8192", yes_no(c.config.model.seq_length >= 8192)},
          {"gpus>=128", yes_no(p.world_size() >= 128)},
          {"multi-node", yes_no(p.world_size() > c.config.cluster.gpus_per_node)}};
  if (c.release_from_source) {
    out.push_back({"release", c.release});
  } else if (!c.release.empty()) {
    const std::string& gpu = c.config.cluster.gpu.name;
    out.push_back({"gpu", gpu});
    out.push_back({"precision recipe", precision_recipe(c)});
    out.push_back({"release", c.release});
    out.push_back({"gpu / dense-moe / release", gpu + (c.config.model.is_moe() ? " moe" : " dense") +
                                                    (latest ? " latest" : " older")});
  }
  return out;
}

std::string configuration_key(const AccuracyCase& c) {
  const simulator::Plan& p = c.config.plan;
  char buf[320];
  std::snprintf(buf, sizeof buf, "|%d|%d|%d|%d|%d|%d|%d|%d|%d|%d|%d|%d|%d|%d|%d|%d",
                c.config.model.seq_length, p.tensor_parallel, p.pipeline_parallel,
                p.data_parallel, p.virtual_stages, p.micro_batch_size, p.global_batch_size,
                static_cast<int>(p.recompute), p.sharding_stage(), p.fsdp_group,
                p.tp_comm_overlap ? 1 : 0, p.overlap_param_gather ? 1 : 0,
                static_cast<int>(p.precision), p.expert_parallel, p.expert_tensor_parallel,
                p.moe_a2a_overlap ? 1 : 0);
  return c.config.model.name + buf;
}

void apply_constants(const AccuracyConstants& constants, std::vector<AccuracyCase>* cases) {
  for (AccuracyCase& c : *cases) {
    c.config.cluster.gpu.roofline = constants.roofline;
    simulator::NetworkConstants& n = c.config.cluster.network;
    n.nvlink_latency_s = constants.network.nvlink_latency_s;
    n.nic_latency_s = constants.network.nic_latency_s;
    n.nic_efficiency = constants.network.nic_efficiency;
  }
}

AccuracyConstants constants_of(const AccuracyCase& c) {
  return {c.config.cluster.gpu.roofline, c.config.cluster.network};
}

simulator::Cluster case_cluster(const AccuracyCase& c) {
  simulator::Cluster cluster = c.config.cluster;
  if (c.stack == "pytorch-fsdp") {
    simulator::RooflineConstants& r = cluster.gpu.roofline;
    const double k = r.pytorch_fsdp_efficiency;
    r.gemm_efficiency *= k;
    r.fp8_gemm_efficiency *= k;
    r.fp4_gemm_efficiency *= k;
    r.flash_attention_efficiency *= k;
    r.memory_efficiency *= k;
  }
  return cluster;
}

Result<std::vector<double>> predict_iteration_times(
    const std::vector<AccuracyCase>& cases,
    const std::shared_ptr<const simulator::CostModel>& cost_model, std::vector<bool>* fits,
    std::vector<double>* peak_memory_bytes, std::vector<double>* memory_capacity_bytes) {
  const int n = static_cast<int>(cases.size());
  std::vector<double> out(cases.size(), 0.0);
  std::vector<double> peak(cases.size(), 0.0), capacity(cases.size(), 0.0);
  std::vector<char> fit(cases.size(), 1);
  std::vector<Status> errors(cases.size());
#pragma omp parallel for schedule(dynamic, 8)
  for (int i = 0; i < n; ++i) {
    simulator::SimOptions options;
    options.cost_model = cost_model;
    const presets::SimConfig& c = cases[static_cast<size_t>(i)].config;
    Result<simulator::StepReport> r = simulator::simulate(
        c.model, c.plan, case_cluster(cases[static_cast<size_t>(i)]), options);
    if (r.ok()) {
      out[static_cast<size_t>(i)] = r->iteration_time_s;
      fit[static_cast<size_t>(i)] = r->fits_in_memory ? 1 : 0;
      peak[static_cast<size_t>(i)] = r->peak_memory_bytes;
      capacity[static_cast<size_t>(i)] = r->memory_capacity_bytes;
    } else {
      errors[static_cast<size_t>(i)] = r.status();
    }
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!errors[i].ok()) {
      return errors[i].with_prefix(cases[i].source + ":" + std::to_string(cases[i].run.line));
    }
  }
  if (fits != nullptr) fits->assign(fit.begin(), fit.end());
  if (peak_memory_bytes != nullptr) *peak_memory_bytes = std::move(peak);
  if (memory_capacity_bytes != nullptr) *memory_capacity_bytes = std::move(capacity);
  return out;
}

std::vector<double> measured_of(const std::vector<AccuracyCase>& cases) {
  std::vector<double> m;
  for (const AccuracyCase& c : cases) m.push_back(c.run.iteration_time_s);
  return m;
}

std::string percent_text(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %%", 100.0 * fraction);
  return buf;
}

ErrorSummary summarise(const std::vector<double>& predicted, const std::vector<double>& measured) {
  ErrorSummary s;
  s.rows = static_cast<int>(predicted.size());
  if (s.rows == 0) return s;
  std::vector<double> ape;
  ape.reserve(predicted.size());
  double sum = 0, signed_sum = 0;
  for (size_t i = 0; i < predicted.size(); ++i) {
    const double e = (predicted[i] - measured[i]) / measured[i];
    ape.push_back(std::abs(e));
    sum += std::abs(e);
    signed_sum += e;
    s.max_ape = std::max(s.max_ape, std::abs(e));
  }
  s.mape = sum / s.rows;
  s.mean_signed = signed_sum / s.rows;
  std::sort(ape.begin(), ape.end());
  const size_t m = ape.size() / 2;
  s.median_ape = ape.size() % 2 == 1 ? ape[m] : 0.5 * (ape[m - 1] + ape[m]);
  return s;
}

const char* to_string(Grouping g) {
  switch (g) {
    case Grouping::kGpus: return "GPUs";
    case Grouping::kModel: return "model";
    case Grouping::kPlan: return "(t,d,p)";
    case Grouping::kMicroBatch: return "micro batch";
    case Grouping::kHidden: return "hidden";
    case Grouping::kTensor: return "t";
    case Grouping::kPipeline: return "p";
    case Grouping::kData: return "d";
  }
  return "?";
}

std::string group_key(const MeasuredRun& r, Grouping g) {
  char buf[128];
  switch (g) {
    case Grouping::kGpus: return std::to_string(r.num_gpus);
    case Grouping::kModel:
      if (r.params_billion > 0) {
        std::snprintf(buf, sizeof buf, "%gB", r.params_billion);
      } else {
        std::snprintf(buf, sizeof buf, "h%d l%d", r.hidden_size, r.num_layers);
      }
      return buf;
    case Grouping::kPlan:
      std::snprintf(buf, sizeof buf, "(%d,%d,%d)", r.tensor, r.data, r.pipeline);
      return buf;
    case Grouping::kMicroBatch: return std::to_string(r.micro_batch);
    case Grouping::kHidden: return std::to_string(r.hidden_size);
    case Grouping::kTensor: return std::to_string(r.tensor);
    case Grouping::kPipeline: return std::to_string(r.pipeline);
    case Grouping::kData: return std::to_string(r.data);
  }
  return "?";
}

std::vector<GroupError> group_errors(const std::vector<AccuracyCase>& cases,
                                     const std::vector<double>& predicted, Grouping g) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string key = group_key(cases[i].run, g);
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.first.push_back(predicted[i]);
    it->second.second.push_back(cases[i].run.iteration_time_s);
  }
  std::vector<GroupError> out;
  for (const std::string& key : order) {
    const auto& [p, m] = groups[key];
    out.push_back({key, summarise(p, m)});
  }
  return out;
}

}  // namespace llmplan::planner

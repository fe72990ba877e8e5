// The vTrain config format (github.com/VIA-Research/vTrain, src/config.py),
// mapped onto llmplan's Model, Plan and Cluster. See sim_config.h.
#include <boost/json.hpp>
#include <cctype>
#include <cstdint>
#include <sstream>
#include <utility>

#include "presets/preset_json.h"
#include "base/number_text.h"
#include "presets/sim_config.h"
#include "base/input_file.h"
#include "base/strict_json.h"

namespace llmplan::presets {
namespace {

// The cluster preset for vTrain's "A100". The vTrain README does not give
// the memory size; its multi-node measurements include a 3.6B-parameter
// model at t = p = 1, whose fp16 weights, gradients and fp32 Adam state
// alone (about 16 bytes per parameter, 58 GB) only fit the 80 GB part.
constexpr const char* kA100Cluster = "dgx-a100-80gb";
// PyTorch DDP's default bucket_cap_mb (25 MiB), used when
// use_gradient_bucket is on and ddp_bucket_size is not given.
constexpr int64_t kTorchDdpBucketBytes = 25LL << 20;

std::string file_stem(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  const std::string ext = ".json";
  if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0) {
    stem.resize(stem.size() - ext.size());
  }
  return stem;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The fields of a vTrain config, with vTrain's defaults.
struct VtrainFields {
  int num_gpus = 0;
  int tensor = 0, data = 0, pipeline = 0;  // 0: absent
  std::string gpu_name = "A100";
  int global_batch = 1920;
  int micro_batch = 0;  // 0: absent (vTrain's None)
  std::string model_arch = "ShardedGptModel";
  int num_layers = 105;
  int hidden_size = 20480;
  int num_heads = 128;
  int max_length = 2048;
  int vocab_size = 50257;
  bool use_gradient_bucket = false;
  bool use_checkpoint = true;
  int64_t ddp_bucket_mb = 0;  // 0: absent
  double inter_node_gbps = 800;
  double intra_node_gbytes_per_s = 150;
  std::string pipeline_scheduling = "1f1b";
  int node_size = 8;
  std::string trace_path = "trace/";
};

// InvalidArgument "FILE: field: why".
Status bad(const std::string& source, const std::string& field, const std::string& why) {
  return Status::invalid_argument(source + ": " + field + ": " + why);
}

// The config's fields into *f (vTrain's defaults where absent, each such
// field listed in *defaulted as key=value); whether num_gpus and trace_path
// were given.
Status read_vtrain_fields(const boost::json::value& doc, const std::string& source,
                          VtrainFields* out, std::vector<std::string>* defaulted,
                          bool* has_num_gpus, bool* has_trace_path) {
  VtrainFields& f = *out;
  json::JsonObjectReader r(doc, source);
  auto note_default = [&](const char* key, const std::string& value) {
    if (!r.has(key)) defaulted->push_back(std::string(key) + "=" + value);
  };
  note_default("gpu_name", f.gpu_name);
  note_default("global_batch_size", std::to_string(f.global_batch));
  note_default("model_arch", f.model_arch);
  note_default("num_layers", std::to_string(f.num_layers));
  note_default("hidden_size", std::to_string(f.hidden_size));
  note_default("num_attention_heads", std::to_string(f.num_heads));
  note_default("max_length", std::to_string(f.max_length));
  note_default("vocab_size", std::to_string(f.vocab_size));
  note_default("use_gradient_bucket", "false");
  note_default("use_checkpoint", "true");
  note_default("inter_node_bandwidth", number_text(f.inter_node_gbps));
  note_default("intra_node_bandwidth", number_text(f.intra_node_gbytes_per_s));
  note_default("pipeline_scheduling", f.pipeline_scheduling);
  note_default("node_size", std::to_string(f.node_size));

  *has_num_gpus = r.has("num_gpus");
  r.read_int("num_gpus", &f.num_gpus, false, 1);
  r.read_int("tensor_parallel_size", &f.tensor, false, 1);
  r.read_int("data_parallel_size", &f.data, false, 1);
  r.read_int("pipeline_parallel_size", &f.pipeline, false, 1);
  r.read_string("gpu_name", &f.gpu_name);
  r.read_int("global_batch_size", &f.global_batch, false, 1);
  r.read_int("micro_batch_size", &f.micro_batch, false, 1);
  r.read_string("model_arch", &f.model_arch);
  r.read_int("num_layers", &f.num_layers, false, 1);
  r.read_int("hidden_size", &f.hidden_size, false, 1);
  r.read_int("num_attention_heads", &f.num_heads, false, 1);
  r.read_int("max_length", &f.max_length, false, 1);
  r.read_int("vocab_size", &f.vocab_size, false, 1);
  r.read_bool("use_gradient_bucket", &f.use_gradient_bucket);
  r.read_bool("use_checkpoint", &f.use_checkpoint);
  r.read_int64("ddp_bucket_size", &f.ddp_bucket_mb, false, 1);
  r.read_double("inter_node_bandwidth", &f.inter_node_gbps, false, 1e-9);
  r.read_double("intra_node_bandwidth", &f.intra_node_gbytes_per_s, false, 1e-9);
  r.read_string("pipeline_scheduling", &f.pipeline_scheduling);
  r.read_int("node_size", &f.node_size, false, 1);
  *has_trace_path = r.has("trace_path");
  r.read_string("trace_path", &f.trace_path);
  return at_file_root(r.finish(), source);
}

// Parallel sizes: vTrain derives num_gpus, or one missing size, and
// otherwise asserts num_gpus == t * d * p.
Status derive_parallel_sizes(const std::string& source, bool has_num_gpus,
                             const VtrainLoadOptions& options, VtrainFields* out,
                             std::vector<std::string>* notes_out) {
  VtrainFields& f = *out;
  std::vector<std::string>& notes = *notes_out;
  const char* kSizes[] = {"tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size"};
  int* sizes[] = {&f.tensor, &f.data, &f.pipeline};
  int missing = -1, num_missing = 0;
  for (int i = 0; i < 3; ++i) {
    if (*sizes[i] == 0) {
      missing = i;
      ++num_missing;
    }
  }
  if (!has_num_gpus) {
    if (num_missing > 0) {
      return bad(source, kSizes[missing], "missing; vTrain needs it when num_gpus is not given");
    }
    // In 64 bits: three int sizes can overflow an int (fuzz_vtrain_config,
    // issue 31's campaign: 16 x 1111111119).
    const int64_t product = static_cast<int64_t>(f.tensor) * f.data * f.pipeline;
    if (product > simulator::Plan::kMaxGpus) {
      return bad(source, "num_gpus", "t * d * p = " + std::to_string(product) + " GPUs, more than the " +
                                 std::to_string(simulator::Plan::kMaxGpus) + " a plan may use");
    }
    f.num_gpus = static_cast<int>(product);
    notes.push_back("num_gpus = t * d * p = " + std::to_string(f.num_gpus));
  } else if (num_missing > 1) {
    return bad(source, "num_gpus", "with num_gpus given, vTrain derives at most one of " +
                               std::string(kSizes[0]) + ", " + kSizes[1] + ", " + kSizes[2] + "; " +
                               std::to_string(num_missing) + " are missing");
  } else if (num_missing == 1) {
    int64_t others = 1;
    for (int i = 0; i < 3; ++i) others *= i == missing ? 1 : *sizes[i];
    if (f.num_gpus % others != 0) {
      return bad(source, kSizes[missing], "cannot be derived: num_gpus " + std::to_string(f.num_gpus) +
                                      " is not divisible by the other two sizes' product " +
                                      std::to_string(others));
    }
    *sizes[missing] = static_cast<int>(f.num_gpus / others);
    notes.push_back(std::string(kSizes[missing]) + " = num_gpus / (product of the other two) = " +
                    std::to_string(*sizes[missing]));
  } else {
    const int64_t product = static_cast<int64_t>(f.tensor) * f.data * f.pipeline;
    if (product != f.num_gpus) {
      const std::string mismatch =
          std::to_string(f.num_gpus) +
          " is not tensor_parallel_size * data_parallel_size * pipeline_parallel_size = " +
          std::to_string(f.tensor) + " * " + std::to_string(f.data) + " * " +
          std::to_string(f.pipeline) + " = " + std::to_string(product);
      if (!options.ignore_stale_num_gpus) {
        return bad(source, "num_gpus", mismatch + " (vTrain rejects this too)");
      }
      notes.push_back("num_gpus ignored: " + mismatch + "; the plan's " + std::to_string(product) +
                      " GPUs are used (vTrain would reject the file)");
      f.num_gpus = static_cast<int>(product);
    }
  }

  return Status();
}

// vTrain's micro-batch rule and consistency checks, and what llmplan can
// honour (the model, schedule and GPU).
Status check_vtrain_rules(const std::string& source, VtrainFields* out,
                          std::vector<std::string>* notes_out) {
  VtrainFields& f = *out;
  std::vector<std::string>& notes = *notes_out;
  // vTrain: with one pipeline stage, the micro batch is the whole local batch.
  if (f.pipeline <= 1) {
    const int local = f.global_batch / f.data;
    if (f.micro_batch != local) {
      notes.push_back("micro_batch_size = global_batch_size / data_parallel_size = " +
                      std::to_string(local) + " (vTrain's rule when pipeline_parallel_size is 1)");
    }
    f.micro_batch = local;
  } else if (f.micro_batch == 0) {
    return bad(source, "micro_batch_size",
               "missing; vTrain has no default when pipeline_parallel_size > 1");
  }

  // vTrain's own consistency checks (src/config.py validate_config).
  if (f.global_batch % f.data != 0) {
    return bad(source, "global_batch_size", std::to_string(f.global_batch) +
                                        " is not divisible by data_parallel_size " +
                                        std::to_string(f.data));
  }
  if (f.micro_batch < 1 || f.global_batch % f.micro_batch != 0) {
    return bad(source, "micro_batch_size", std::to_string(f.micro_batch) +
                                       " does not divide global_batch_size " +
                                       std::to_string(f.global_batch));
  }
  if (f.num_layers % f.pipeline != 0) {
    return bad(source, "num_layers", std::to_string(f.num_layers) +
                                 " layers are not divisible by pipeline_parallel_size " +
                                 std::to_string(f.pipeline) + " (vTrain requires equal stages)");
  }
  if (f.hidden_size % f.num_heads != 0) {
    return bad(source, "num_attention_heads", std::to_string(f.num_heads) +
                                          " heads do not divide hidden_size " +
                                          std::to_string(f.hidden_size));
  }
  if (f.num_heads % f.tensor != 0) {
    return bad(source, "tensor_parallel_size", std::to_string(f.tensor) + " does not divide " +
                                           std::to_string(f.num_heads) + " attention heads");
  }

  // What llmplan can honour.
  if (f.model_arch != "ShardedGptModel") {
    return bad(source, "model_arch",
               "\"" + f.model_arch + "\" is not supported; vTrain's only model is ShardedGptModel");
  }
  if (f.pipeline_scheduling != "1f1b") {
    return bad(source, "pipeline_scheduling",
               "\"" + f.pipeline_scheduling +
                   "\" is not supported: vTrain's graph builder implements only \"1f1b\" "
                   "(it builds 1F1B whatever this field says)");
  }
  if (lower(f.gpu_name) != "a100") {
    return bad(source, "gpu_name",
               "\"" + f.gpu_name + "\" has no llmplan preset; supported: \"A100\" (-> " +
                   kA100Cluster + ")");
  }

  return Status();
}

// The model: vTrain's ShardedGptModel is a Megatron GPT.
void vtrain_model(const VtrainFields& f, const std::string& source, SimConfig* config) {
  std::vector<std::string>& notes = config->notes;
  simulator::Model& m = config->model;
  m.name = "vtrain " + file_stem(source);
  m.num_layers = f.num_layers;
  m.hidden_size = f.hidden_size;
  m.num_heads = f.num_heads;
  m.seq_length = f.max_length;
  m.vocab_size = f.vocab_size;
  m.activation = simulator::Activation::kGelu;
  m.positions = simulator::PositionEmbedding::kLearned;
  m.tied_embeddings = true;
  m.linear_bias = true;
  notes.push_back(
      "model: GPT (vTrain's ShardedGptModel): learned positions, GeLU MLP of 4h, "
      "tied embeddings, biases; max_length -> seq");

}

// The plan: 1F1B, fp16, full recompute with use_checkpoint, DDP buckets.
void vtrain_plan(const VtrainFields& f, SimConfig* config) {
  std::vector<std::string>& notes = config->notes;
  simulator::Plan& p = config->plan;
  p.tensor_parallel = f.tensor;
  p.data_parallel = f.data;
  p.pipeline_parallel = f.pipeline;
  p.micro_batch_size = f.micro_batch;
  p.global_batch_size = f.global_batch;
  p.virtual_stages = 1;
  p.schedule = simulator::Schedule::kOneFOneB;
  p.recompute = f.use_checkpoint ? simulator::Recompute::kFull : simulator::Recompute::kNone;
  p.sequence_parallel = false;
  p.distributed_optimizer = false;
  p.flash_attention = false;
  p.precision = simulator::Precision::kFp16;
  p.pipeline_scatter_gather = false;
  if (f.use_gradient_bucket) {
    p.grad_bucket_bytes = f.ddp_bucket_mb > 0 ? f.ddp_bucket_mb << 20 : kTorchDdpBucketBytes;
    p.overlap_grad_reduce = true;
    notes.push_back("use_gradient_bucket: buckets of " + std::to_string(p.grad_bucket_bytes) +
                    " bytes overlapped with backward (" +
                    (f.ddp_bucket_mb > 0 ? "ddp_bucket_size read as MiB, as vTrain's default "
                                           "comment says"
                                         : "PyTorch DDP's default bucket_cap_mb = 25 MiB") +
                    ")");
  } else {
    p.grad_bucket_bytes = 0;
    p.overlap_grad_reduce = false;
    notes.push_back(
        "use_gradient_bucket false: one gradient all-reduce per stage after backward, "
        "not overlapped" +
        std::string(f.ddp_bucket_mb > 0 ? " (ddp_bucket_size unused, as in vTrain)" : ""));
  }
  notes.push_back(std::string("use_checkpoint ") + (f.use_checkpoint ? "true" : "false") +
                  " -> recompute " + simulator::to_string(p.recompute));
  notes.push_back(
      "precision fp16 (vTrain's kernels and measurements are fp16); no flash "
      "attention, sequence parallelism or distributed optimizer (vTrain's model has "
      "none); pipeline sends whole activations (no scatter/gather)");

}

// The cluster: the A100 preset with vTrain's network figures.
Status vtrain_cluster(const VtrainFields& f, const Catalog& catalog, const std::string& source,
                      bool has_trace_path, SimConfig* config) {
  std::vector<std::string>& notes = config->notes;
  Result<simulator::Cluster> cluster = catalog.cluster(kA100Cluster);
  if (!cluster.ok()) return cluster.status().with_prefix(source + ": gpu_name");
  simulator::Cluster& c = config->cluster;
  c = std::move(cluster).value();
  c.name = std::string(kA100Cluster) + " (vTrain)";
  c.gpus_per_node = f.node_size;
  c.num_nodes = (f.num_gpus + f.node_size - 1) / f.node_size;
  c.nic_bytes_per_s = f.inter_node_gbps * 1e9 / 8 / f.node_size;
  c.gpu.nvlink_bytes_per_s = 2 * f.intra_node_gbytes_per_s * 1e9;
  c.network.nvlink_efficiency = 1.0;
  notes.push_back(std::string("gpu_name \"") + f.gpu_name + "\" -> preset " + kA100Cluster +
                  ": the vTrain README does not give the memory size; its 3.6B-parameter runs "
                  "at t = p = 1 need about 58 GB for weights, gradients and Adam state, which "
                  "only the 80 GB A100 holds");
  notes.push_back("inter_node_bandwidth " + number_text(f.inter_node_gbps) +
                  " Gb/s per node -> nic_bytes_per_s " + number_text(c.nic_bytes_per_s) +
                  " per GPU (/ 8 bits / node_size " + std::to_string(f.node_size) +
                  "; vTrain's code scales Gb by 2^30, llmplan by 1e9)");
  notes.push_back("intra_node_bandwidth " + number_text(f.intra_node_gbytes_per_s) +
                  " GB/s: vTrain uses it as the achieved all-reduce bus bandwidth per GPU, one "
                  "direction (for groups its measured all-reduce table lacks); llmplan sets "
                  "nvlink_bytes_per_s = 2 x that (both directions) and nvlink_efficiency = 1");
  if (f.tensor > f.node_size) {
    notes.push_back("tensor_parallel_size " + std::to_string(f.tensor) + " spans " +
                    std::to_string(f.tensor / f.node_size) +
                    " nodes; vTrain instead assumes one NVSwitch domain of that size at "
                    "intra_node_bandwidth");
  }
  notes.push_back("node_size -> gpus_per_node " + std::to_string(f.node_size) + ", " +
                  std::to_string(c.num_nodes) + " nodes");
  if (has_trace_path) {
    notes.push_back("trace_path \"" + f.trace_path +
                    "\" ignored: vTrain's kernel-trace cache, which llmplan does not use");
  }

  return Status();
}

}  // namespace

Result<SimConfig> load_vtrain_config_text(std::string_view text, const std::string& source,
                                          const Catalog& catalog,
                                          const VtrainLoadOptions& options) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value doc, json::parse(text, source));
  if (!doc.is_object()) return Status::invalid_argument(source + ": expected an object");

  // vTrain's save_to_file writes None as null: null means "vTrain's default".
  boost::json::object& fields = doc.as_object();
  for (auto it = fields.begin(); it != fields.end();) {
    it = it->value().is_null() ? fields.erase(it) : it + 1;
  }

  VtrainFields f;
  std::vector<std::string> defaulted;
  bool has_num_gpus = false, has_trace_path = false;
  LLMPLAN_RETURN_IF_ERROR(
      read_vtrain_fields(doc, source, &f, &defaulted, &has_num_gpus, &has_trace_path));

  SimConfig config;
  std::vector<std::string>& notes = config.notes;
  notes.push_back("vTrain config " + source);
  if (!defaulted.empty()) {
    std::string list;
    for (const std::string& d : defaulted) list += (list.empty() ? "" : ", ") + d;
    notes.push_back("absent fields take vTrain's defaults: " + list);
  }

  LLMPLAN_RETURN_IF_ERROR(derive_parallel_sizes(source, has_num_gpus, options, &f, &notes));
  LLMPLAN_RETURN_IF_ERROR(check_vtrain_rules(source, &f, &notes));
  vtrain_model(f, source, &config);
  vtrain_plan(f, &config);
  LLMPLAN_RETURN_IF_ERROR(vtrain_cluster(f, catalog, source, has_trace_path, &config));
  LLMPLAN_RETURN_IF_ERROR(validate(config).with_prefix(source));
  return config;
}

Result<SimConfig> load_vtrain_config_file(const std::string& path, const Catalog& catalog,
                                          const VtrainLoadOptions& options) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return load_vtrain_config_text(text, path, catalog, options);
}

}  // namespace llmplan::presets

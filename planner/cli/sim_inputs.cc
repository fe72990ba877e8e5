#include "planner/cli/sim_inputs.h"

#include <filesystem>

#include "simulator/collective_curve.h"
#include "simulator/profile_table_json.h"
#include "simulator/roofline.h"

namespace llmplan::planner {

void add_cost_model_flags(CLI::App* cmd, CostModelOptions* options) {
  cmd->add_option("--profile", options->profile_path,
                  "Profile JSON from llmplan-profile: measured kernel and collective times");
  cmd->add_option("--allreduce-lut", options->allreduce_lut_dir,
                  "Directory of measured in-node all-reduce curves (nccl-tests layout, files "
                  "AR_GPU{N}_*), e.g. data/vtrain/allreduce_lut/a100");
}

Result<std::shared_ptr<const simulator::CostModel>> make_cost_model(
    const simulator::Cluster& cluster, const CostModelOptions& options,
    std::vector<std::string>* notes) {
  using simulator::CollectiveKind;
  if (!cluster.collectives.empty()) {
    notes->push_back("in-node all-reduce from the measured curves \"" + cluster.collectives.name +
                     "\" of cluster " + cluster.name +
                     (options.allreduce_lut_dir.empty() ? "" : " (--allreduce-lut overrides)"));
  }
  if (options.profile_path.empty() && options.allreduce_lut_dir.empty()) return {nullptr};
  simulator::CollectiveModel collectives(cluster);
  if (!options.allreduce_lut_dir.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(options.allreduce_lut_dir, ec)) {
      return Status::not_found(options.allreduce_lut_dir + ": not a directory");
    }
    int loaded = 0;
    for (int n = 2; n <= cluster.gpus_per_node; ++n) {
      const std::string prefix = "AR_GPU" + std::to_string(n) + "_";
      for (const auto& entry : fs::directory_iterator(options.allreduce_lut_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        LLMPLAN_ASSIGN_OR_RETURN(simulator::CollectiveCurve curve,
                                 simulator::read_nccl_tests_file(entry.path().string()));
        collectives.add_in_node_curve(CollectiveKind::kAllReduce, n, std::move(curve));
        ++loaded;
        break;
      }
    }
    if (loaded == 0) {
      return Status::not_found(options.allreduce_lut_dir +
                               ": no AR_GPU{N}_* all-reduce curve files for N = 2.." +
                               std::to_string(cluster.gpus_per_node));
    }
    notes->push_back("in-node all-reduce from " + std::to_string(loaded) +
                     " measured curves in " + options.allreduce_lut_dir);
  }
  std::shared_ptr<const simulator::CostModel> roofline =
      std::make_shared<simulator::Roofline>(cluster, std::move(collectives));
  if (options.profile_path.empty()) return roofline;
  LLMPLAN_ASSIGN_OR_RETURN(auto table, simulator::load_profile_table(options.profile_path, roofline));
  notes->push_back("kernel times from profile " + options.profile_path +
                   " (Roofline where the profile has no entry)");
  return std::shared_ptr<const simulator::CostModel>(table);
}

Result<simulator::Cluster> resolve_cluster(const presets::Catalog& catalog,
                                           const std::string& cluster_name,
                                           const std::string& gpu_name, int gpus_per_node,
                                           const std::string& default_cluster) {
  simulator::Cluster cluster;
  if (!cluster_name.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(cluster, catalog.cluster(cluster_name));
  } else if (!gpu_name.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(simulator::GpuSpec gpu, catalog.gpu(gpu_name));
    bool found = false;
    for (const presets::PresetInfo& info : catalog.list()) {
      if (info.kind != presets::PresetKind::kCluster) continue;
      auto c = catalog.cluster(info.name);
      if (c.ok() && c->gpu.name == gpu.name) {
        cluster = *c;
        found = true;
        break;
      }
    }
    if (!found) {
      LLMPLAN_ASSIGN_OR_RETURN(cluster, catalog.cluster(default_cluster));
      cluster.name = "custom-" + gpu.name;
      cluster.gpu = gpu;
      cluster.usd_per_gpu_hour = 0;
      cluster.collectives = {};  // measured on another node type
    }
  } else {
    LLMPLAN_ASSIGN_OR_RETURN(cluster, catalog.cluster(default_cluster));
  }
  if (!gpu_name.empty() && !cluster_name.empty()) {
    LLMPLAN_ASSIGN_OR_RETURN(simulator::GpuSpec gpu, catalog.gpu(gpu_name));
    // The cluster's measured in-node curves describe its own GPUs' links.
    if (gpu.nvlink_bytes_per_s != cluster.gpu.nvlink_bytes_per_s) cluster.collectives = {};
    cluster.gpu = std::move(gpu);
  }
  if (gpus_per_node != 0) {
    if (gpus_per_node < 1) {
      return Status::invalid_argument("--gpus-per-node: must be >= 1, got " +
                                      std::to_string(gpus_per_node));
    }
    cluster.gpus_per_node = gpus_per_node;
  }
  return cluster;
}

}  // namespace llmplan::planner

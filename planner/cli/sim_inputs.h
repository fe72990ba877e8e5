// What every command that simulates shares: choosing the cluster and GPU,
// and the cost model (--profile FILE, --allreduce-lut DIR).
#ifndef LLMPLAN_PLANNER_CLI_SIM_INPUTS_H_
#define LLMPLAN_PLANNER_CLI_SIM_INPUTS_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "presets/catalog.h"
#include "simulator/cluster.h"
#include "simulator/cost_model.h"

namespace llmplan::planner {

struct CostModelOptions {
  std::string profile_path;       // --profile: measured kernels (llmplan-profile)
  std::string allreduce_lut_dir;  // --allreduce-lut: nccl-tests AR_GPU{N}_* files
};

// Registers --profile and --allreduce-lut on `cmd`.
void add_cost_model_flags(CLI::App* cmd, CostModelOptions* options);

// The cost model for `cluster`: Roofline (with the cluster's own measured
// in-node all-reduce curves, Cluster::collectives), where a LUT directory's
// curves replace those of the same group size, under a ProfileTable when a
// profile is given. Null when neither flag is set (the simulator's default
// Roofline, which uses the cluster's curves too). Notes say what was loaded.
// Errors name the file.
Result<std::shared_ptr<const simulator::CostModel>> make_cost_model(
    const simulator::Cluster& cluster, const CostModelOptions& options,
    std::vector<std::string>* notes);

// The cluster for --cluster NAME / --gpu NAME / --gpus-per-node N. With only
// --gpu, the first cluster preset built from that GPU (or dgx-a100-80gb's
// network with that GPU, without its measured collectives); with neither,
// `default_cluster`. A --gpu put into a --cluster keeps the cluster's
// measured collectives only if its NVLink bandwidth is the cluster GPU's.
Result<simulator::Cluster> resolve_cluster(const presets::Catalog& catalog,
                                           const std::string& cluster_name,
                                           const std::string& gpu_name, int gpus_per_node,
                                           const std::string& default_cluster);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_CLI_SIM_INPUTS_H_

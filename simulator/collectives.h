// Alpha-beta model of NCCL collectives on a group's real placement.
//
// "Node" here is the NVLink domain (Cluster::nvlink_domain(): the node on
// HGX/DGX, the 72-GPU rack on NVL72; placement counts ranks per domain).
// A group inside one domain runs over NVLink: ring all-reduce moves
// 2(n-1)/n * S bytes per GPU, all-gather and reduce-scatter (n-1)/n * S, each
// step paying the NVLink latency. A group spanning nodes is bound by the
// slower of NVLink and the NICs its node-local ranks drive in parallel
// (rail-optimised rings: k ranks per node use k NICs), and pays a tree-like
// latency of log2(nodes) NIC hops. Measured in-node curves (nccl-tests)
// replace the formula for a (kind, group size): those the cluster carries
// (Cluster::collectives, e.g. the DGX A100 presets) and those added with
// add_in_node_curve (e.g. `--allreduce-lut DIR`), which override them.
#ifndef LLMPLAN_SIMULATOR_COLLECTIVES_H_
#define LLMPLAN_SIMULATOR_COLLECTIVES_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "simulator/cluster.h"
#include "simulator/collective_curve.h"
#include "simulator/cost_model.h"

namespace llmplan::simulator {

// Immutable after construction; safe to share between threads.
class CollectiveModel {
 public:
  // The formula on the cluster's figures, with the cluster's measured
  // all-reduce curves for group sizes up to the NVLink domain.
  explicit CollectiveModel(const Cluster& cluster);

  // Uses `curve` instead of the formula for `kind` on an in-node group of
  // `group_size` ranks (replacing any curve the cluster carried).
  void add_in_node_curve(CollectiveKind kind, int group_size, CollectiveCurve curve);
  bool has_curve(CollectiveKind kind, int group_size) const;

  // Seconds until every rank holds the result. 0 for a group of one rank or
  // zero bytes.
  double time_s(const CollectiveDesc& c) const;

  // The formula alone (ignores curves): for tests and calibration.
  double formula_time_s(const CollectiveDesc& c) const;

  // Effective per-direction NVLink bandwidth per GPU, bytes/s.
  double nvlink_bytes_per_s() const { return nvlink_bytes_per_s_; }
  // Effective per-direction NVLink bandwidth of an all-to-all, bytes/s:
  // bounded by NetworkConstants::nvlink_a2a_efficiency as well, or at the
  // GPU's calibrated RooflineConstants::moe_a2a_efficiency when that is set
  // (it replaces both).
  double nvlink_a2a_bytes_per_s() const { return nvlink_a2a_bytes_per_s_; }
  // Effective per-GPU NIC bandwidth, bytes/s.
  double nic_bytes_per_s() const { return nic_bytes_per_s_; }

 private:
  double nvlink_bytes_per_s_;
  double nvlink_a2a_bytes_per_s_;
  double nic_bytes_per_s_;
  double nic_a2a_bytes_per_s_;  // all-to-alls' inter-node part (moe_a2a_nic_efficiency)
  double nvlink_latency_s_;
  double nic_latency_s_;
  std::map<std::pair<CollectiveKind, int>, CollectiveCurve> curves_;
};

// Where one communicator of a plan runs, for reports: `name` ("tp", "ep",
// ...), its size, how many of its ranks share an NVLink domain and how many
// domains it spans (1: NVLink only; more: its traffic between domains goes
// through the NICs).
struct GroupLink {
  std::string name;
  int size = 1;
  int ranks_per_domain = 1;
  int domains = 1;
};

// The groups of more than one rank that `placement` (lowering.h place())
// gives `plan`: tp, cp, dp (the gradient reduction), ep and etp (MoE), in
// that order; the pipeline is described by pipeline_domain_crossings().
struct Placement;
struct Plan;
std::vector<GroupLink> group_links(const Plan& plan, const Placement& placement);

// "ep 32 over NVLink (domain 72)" or "dp 64 over NVLink + NICs (8 domains
// of 72, 8 ranks in each)": `domain_gpus` is Cluster::nvlink_domain().
std::string describe_group_link(const GroupLink& g, int domain_gpus);

// How many of the pipeline's p - 1 stage boundaries (r -> r+1) cross an
// NVLink domain (their sends use the NICs).
int pipeline_domain_crossings(const Placement& placement);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_COLLECTIVES_H_

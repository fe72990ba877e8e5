// Alpha-beta model of NCCL collectives on a group's real placement.
//
// A group inside one node runs over NVLink: ring all-reduce moves
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
#include <utility>

#include "simulator/cluster.h"
#include "simulator/collective_curve.h"
#include "simulator/cost_model.h"

namespace llmplan::simulator {

// Immutable after construction; safe to share between threads.
class CollectiveModel {
 public:
  // The formula on the cluster's figures, with the cluster's measured
  // all-reduce curves for group sizes up to gpus_per_node.
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
  // Effective per-GPU NIC bandwidth, bytes/s.
  double nic_bytes_per_s() const { return nic_bytes_per_s_; }

 private:
  double nvlink_bytes_per_s_;
  double nic_bytes_per_s_;
  double nvlink_latency_s_;
  double nic_latency_s_;
  std::map<std::pair<CollectiveKind, int>, CollectiveCurve> curves_;
};

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_COLLECTIVES_H_

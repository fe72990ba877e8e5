#include "simulator/collectives.h"

#include <algorithm>
#include <cmath>

#include "simulator/lowering.h"

namespace llmplan::simulator {

CollectiveModel::CollectiveModel(const Cluster& cluster)
    : nvlink_bytes_per_s_(cluster.gpu.nvlink_bytes_per_s / 2.0 * cluster.network.nvlink_efficiency),
      nvlink_a2a_bytes_per_s_(cluster.gpu.nvlink_bytes_per_s / 2.0 *
                              (cluster.gpu.roofline.moe_a2a_efficiency > 0
                                   ? cluster.gpu.roofline.moe_a2a_efficiency
                                   : std::min(cluster.network.nvlink_efficiency,
                                              cluster.network.nvlink_a2a_efficiency))),
      nic_bytes_per_s_(cluster.nic_bytes_per_s * cluster.network.nic_efficiency),
      nic_a2a_bytes_per_s_(cluster.gpu.roofline.moe_a2a_nic_efficiency > 0
                               ? cluster.nic_bytes_per_s * cluster.gpu.roofline.moe_a2a_nic_efficiency
                               : nic_bytes_per_s_),
      nvlink_latency_s_(cluster.network.nvlink_latency_s),
      nic_latency_s_(cluster.network.nic_latency_s) {
  for (const InNodeCurve& c : cluster.collectives.all_reduce) {
    if (c.group_size <= cluster.nvlink_domain()) {
      curves_[{CollectiveKind::kAllReduce, c.group_size}] = c.curve;
    }
  }
}

void CollectiveModel::add_in_node_curve(CollectiveKind kind, int group_size,
                                        CollectiveCurve curve) {
  curves_[{kind, group_size}] = std::move(curve);
}

bool CollectiveModel::has_curve(CollectiveKind kind, int group_size) const {
  return curves_.count({kind, group_size}) > 0;
}

double CollectiveModel::formula_time_s(const CollectiveDesc& c) const {
  const int n = c.group.size;
  if (n <= 1 || c.bytes <= 0) return 0.0;
  const int nodes = c.group.nodes();
  const int k = std::min(c.group.ranks_per_node, n);
  if (c.kind == CollectiveKind::kAllToAll) {
    // (k-1)/n of the buffer goes to the rank's node peers over NVLink and,
    // at the same time, (n-k)/n to other nodes through the rank's own NIC
    // (rail-aligned peers, NCCL's PXN); one latency per in-node peer, one
    // NIC latency when the group spans nodes.
    const double in_node_s = (k - 1.0) / n * c.bytes * c.in_node_scale / nvlink_a2a_bytes_per_s_;
    if (nodes <= 1) return in_node_s + (n - 1.0) * nvlink_latency_s_;
    const double off_node_s =
        (n - static_cast<double>(k)) / n * c.bytes * c.off_node_scale / nic_a2a_bytes_per_s_;
    return std::max(in_node_s, off_node_s) + (k - 1.0) * nvlink_latency_s_ + nic_latency_s_;
  }
  double bw = nvlink_bytes_per_s_;
  double alpha_steps = 0;  // latency of the whole operation
  if (nodes <= 1) {
    const double hops = c.kind == CollectiveKind::kSendRecv ? 1.0 : n - 1.0;
    alpha_steps = hops * nvlink_latency_s_;
  } else {
    bw = std::min(nvlink_bytes_per_s_, k * nic_bytes_per_s_);
    const double tree = std::ceil(std::log2(static_cast<double>(nodes)));
    alpha_steps = c.kind == CollectiveKind::kSendRecv
                      ? nic_latency_s_
                      : (k - 1) * nvlink_latency_s_ + tree * nic_latency_s_;
  }
  const double frac = (n - 1.0) / n;
  switch (c.kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * frac * c.bytes / bw + 2.0 * alpha_steps;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return frac * c.bytes / bw + alpha_steps;
    case CollectiveKind::kSendRecv:
      return c.bytes / bw + alpha_steps;
    case CollectiveKind::kAllToAll:
      break;  // above
  }
  return 0.0;
}

double CollectiveModel::time_s(const CollectiveDesc& c) const {
  if (c.group.size <= 1 || c.bytes <= 0) return 0.0;
  if (c.group.nodes() <= 1) {
    auto it = curves_.find({c.kind, c.group.size});
    if (it != curves_.end()) return it->second.time_s(c.bytes);
  }
  return formula_time_s(c);
}

std::vector<GroupLink> group_links(const Plan& plan, const Placement& placement) {
  std::vector<GroupLink> out;
  auto add = [&](const char* name, const CommGroup& g) {
    if (g.size <= 1) return;
    const int k = std::max(1, std::min(g.ranks_per_node, g.size));
    out.push_back({name, g.size, k, g.nodes()});
  };
  add("tp", placement.tensor);
  add("cp", placement.context);
  add("dp", placement.data);
  if (plan.expert_parallel > 1 || plan.expert_tensor_parallel > 1) {
    add("ep", placement.expert);
    add("etp", placement.expert_tensor);
  }
  return out;
}

std::string describe_group_link(const GroupLink& g, int domain_gpus) {
  const std::string head = g.name + " " + std::to_string(g.size) + " over NVLink";
  const std::string domain = std::to_string(domain_gpus);
  if (g.domains <= 1) return head + " (domain " + domain + ")";
  return head + " + NICs (" + std::to_string(g.domains) + " domains of " + domain + ", " +
         std::to_string(g.ranks_per_domain) + (g.ranks_per_domain == 1 ? " rank" : " ranks") +
         " in each)";
}

int pipeline_domain_crossings(const Placement& placement) {
  const auto& c = placement.pipe_crosses_node;
  // The last entry is the p-1 -> 0 wrap-around of interleaved schedules.
  int n = 0;
  for (size_t r = 0; r + 1 < c.size(); ++r) n += c[r] ? 1 : 0;
  return n;
}

}  // namespace llmplan::simulator

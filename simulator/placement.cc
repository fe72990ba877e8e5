// place() (lowering.h): which ranks form each communication group of a
// plan on a cluster, and which of them share an NVLink domain.
#include <algorithm>
#include <cstdint>

#include "simulator/lowering.h"

namespace llmplan::simulator {

Placement place(const Plan& plan, const Cluster& cluster) {
  const int t = plan.tensor_parallel, d = plan.data_parallel, p = plan.pipeline_parallel;
  const int cp = plan.context_parallel;
  // "Node" below means the NVLink (scale-up) domain: ranks inside one talk
  // over NVLink, groups spanning domains over the NICs. It is the node on
  // HGX/DGX (nvlink_domain_gpus 0 or 8) and the 72-GPU rack on GB200/GB300
  // NVL72, whose 4-GPU compute trays share one NVLink switch domain; nothing
  // here depends on the tray (the NICs are per GPU either way).
  const int G = cluster.nvlink_domain();
  // Ranks t apart, `n` consecutive of them in one group: how many share a domain.
  auto stride_t = [&](int n) { return t >= G ? 1 : std::max(1, std::min(n, G / t)); };
  Placement pl;
  pl.host_link_bytes_per_s = cluster.host_link_bytes_per_s;
  pl.tensor = {t, std::min(t, G)};
  // CP peers of a rank are t apart, inside the node first.
  pl.context = {cp, stride_t(cp)};
  // The gradient-reduction group: the d * cp ranks (t apart) of one
  // (tensor, pipeline) position, contiguous since CP and DP are adjacent in
  // the rank order.
  pl.data = {d * cp, stride_t(d * cp)};
  // Shard groups are S * cp consecutive ranks (t apart); the replicas of a
  // shard S * cp * t apart.
  const int S = plan.shard_ranks();
  pl.shard = {S, stride_t(S)};
  const int R = std::max(1, d / plan.shard_group_size());
  const int64_t replica_stride = static_cast<int64_t>(S) * t;
  pl.replica = {R, replica_stride >= G ? 1 : std::max(1, std::min<int>(R, G / replica_stride))};
  const int64_t stage_ranks = static_cast<int64_t>(t) * cp * d;
  pl.pipe_crosses_node.assign(p, false);
  for (int r = 0; r < p; ++r) {
    const int next = (r + 1) % p;
    bool crosses = stage_ranks >= G;
    for (int64_t i = 0; !crosses && i < stage_ranks; ++i) {
      crosses = (stage_ranks * r + i) / G != (stage_ranks * next + i) / G;
    }
    pl.pipe_crosses_node[r] = crosses;
  }
  const bool emb_cross = p > 1 && (stage_ranks * (p - 1)) / G != 0;
  pl.embedding = {2, emb_cross ? 1 : 2};
  // Expert layers: the stage's t * cp * d ranks as etp x ep x edp, etp
  // fastest. `n` ranks `stride` apart: how many share a node.
  auto per_node = [&](int64_t stride, int n) {
    return stride >= G ? 1 : std::max(1, static_cast<int>(std::min<int64_t>(n, G / stride)));
  };
  const int etp = plan.expert_tensor_parallel, ep = plan.expert_parallel;
  const int edp = std::max<int64_t>(1, stage_ranks / (static_cast<int64_t>(etp) * ep));
  pl.expert_tensor = {etp, per_node(1, etp)};
  pl.expert = {ep, per_node(etp, ep)};
  pl.expert_data = {edp, per_node(static_cast<int64_t>(etp) * ep, edp)};
  return pl;
}

}  // namespace llmplan::simulator

#include "simulator/layers/moe_dispatch.h"

#include <algorithm>

namespace llmplan::simulator::lowering {

namespace {

// `ranks` ranks of `local` experts each, k experts drawn from their
// ranks x local without replacement: expected ranks holding at least one.
double distinct_ranks(double ranks, double local, int top_k) {
  const double pool = ranks * local;
  // C(pool - local, k) / C(pool, k) = prod_{i < k} (pool - local - i) /
  // (pool - i); 0 once pool - local - i reaches 0 (the other ranks together
  // hold fewer than k).
  double none = 1.0;
  for (int i = 0; i < top_k; ++i) {
    const double num = pool - local - i;
    if (num <= 0) {
      none = 0.0;
      break;
    }
    none *= num / (pool - i);
  }
  return ranks * (1.0 - none);
}

// Of `groups` expert groups, `limit` chosen uniformly: expected number of
// the `nodes` nodes (each holding groups / nodes whole groups) that hold at
// least one chosen group. REQUIRES: nodes divides groups.
double nodes_with_chosen_group(int nodes, int groups, int limit) {
  const double per_node = static_cast<double>(groups) / nodes;
  double none = 1.0;  // C(groups - per_node, limit) / C(groups, limit)
  for (int i = 0; i < limit; ++i) {
    const double num = groups - per_node - i;
    if (num <= 0) {
      none = 0.0;
      break;
    }
    none *= num / (groups - i);
  }
  return nodes * (1.0 - none);
}

}  // namespace

double flex_dispatch_ranks_per_token(int experts, int top_k, int ep, int groups,
                                     int group_limit) {
  if (ep <= 1) return 1.0;
  const double local = static_cast<double>(experts) / ep;
  if (groups > 0 && group_limit > 0 && group_limit < groups && ep % groups == 0) {
    return distinct_ranks(static_cast<double>(group_limit) * ep / groups, local, top_k);
  }
  return distinct_ranks(ep, local, top_k);
}

double flex_dispatch_nodes_per_token(int experts, int top_k, int nodes) {
  if (nodes <= 1) return 1.0;
  return distinct_ranks(nodes, static_cast<double>(experts) / nodes, top_k);
}

double flex_dispatch_byte_scale(int experts, int top_k, int ep, int groups, int group_limit) {
  if (ep <= 1 || top_k <= 0) return 1.0;
  return std::min(
      1.0, flex_dispatch_ranks_per_token(experts, top_k, ep, groups, group_limit) / top_k);
}

double flex_dispatch_nodes_per_token(int experts, int top_k, int nodes, int groups,
                                     int group_limit) {
  if (nodes <= 1) return 1.0;
  // A node is a block of experts / nodes consecutive experts, as a rank is.
  const double uniform = flex_dispatch_ranks_per_token(experts, top_k, nodes, groups, group_limit);
  const bool limited = groups > 0 && group_limit > 0 && group_limit < groups;
  if (limited && groups % nodes == 0) {
    // Whole groups per node: a token reaches at most the nodes of its
    // group_limit groups.
    return std::min(uniform, nodes_with_chosen_group(nodes, groups, group_limit));
  }
  return uniform;
}

}  // namespace llmplan::simulator::lowering

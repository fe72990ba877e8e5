// Internal to the lowering: the token bytes of Megatron-Core's flex token
// dispatcher (Plan::moe_flex_dispatcher; DeepEP / HybridEP backends).
//
// The alltoall dispatcher permutes each token's k routed copies and sends
// every copy to the rank holding its expert: k rows per token. DeepEP's and
// HybridEP's dispatch kernels send a token once to each rank holding at
// least one of its k experts and combine it there before the return trip
// (DeepEP README: "dispatch ... and combine"; Megatron-Core
// moe/token_dispatcher.py MoEFlexTokenDispatcher), so a token crosses the
// fabric once per distinct destination rank. With E experts split evenly
// over ep ranks (L = E / ep each) and the k experts of a token drawn
// uniformly without replacement (the published benchmarks force a balanced
// distribution, data/h100/README.md), a given rank holds none of them with
// probability C(E - L, k) / C(E, k), so a token reaches
//   R = ep x (1 - C(E - L, k) / C(E, k))
// distinct ranks on average, and the all-to-all bytes scale by R / k
// (R <= min(ep, k)). With group-limited routing (Model::moe_router_groups
// G, moe_router_group_limit L < G: DeepSeek-V3's node-limited routing) and
// ep a multiple of G, a token's k experts lie in L of the G groups, so they
// are drawn from the L E / G experts of L ep / G ranks:
//   R = (L ep / G) x (1 - C(L E / G - E / ep, k) / C(L E / G, k)).
// (Which L groups a token picks is taken as uniform, as the balanced
// benchmarks force; otherwise, e.g. ep below G, the uniform R above.)
//
// Across nodes (NVLink domains) both backends send a token once to each
// destination *node* over RDMA and forward it inside that node over NVLink
// to the ranks holding its experts: DeepEP's normal kernels ("forwarding
// data from NVLink domain to RDMA domain", DeepEP README) and HybridEP,
// whose per-rank RDMA token buffer holds max_tokens_per_rank x (nodes - 1)
// rows, one per token and remote node (deepseek-ai/DeepEP hybrid-ep branch,
// Hybrid-EP_Implementation.md, "Buffer Allocation"). A node is a block of
// E / nodes consecutive experts, so the expected distinct nodes D per token
// is R above with `nodes` in place of ep, at most the nodes that the
// token's group_limit groups lie on when whole groups sit on each node, and
// D (nodes - 1) / nodes of them are remote: a token crosses the NIC that
// many times instead of once per remote rank. The NVLink side carries the
// in-node copies and the forwarded ones: with k_n ranks per node and n in
// the group, of S = R rows per token (k_n - 1) / n go to node peers
// directly and (n - k_n) / n arrive through the proxy rank of their node
// (the sender's rail peer), which forwards all but its own 1 / k_n share:
// (k_n - 1) / k_n of S in all, nodes times the (k_n - 1) / n of a direct
// all-to-all (CollectiveDesc::in_node_scale). The payload stays bf16 in
// both directions: Megatron-Core's fused_a2a sizes the DeepEP buffers for
// max(element size, 2) bytes per element and passes its bf16 activations
// (an FP8 dispatch is not modelled).
#ifndef LLMPLAN_SIMULATOR_LAYERS_MOE_DISPATCH_H_
#define LLMPLAN_SIMULATOR_LAYERS_MOE_DISPATCH_H_

namespace llmplan::simulator::lowering {

// Expected distinct expert-parallel ranks a token's top-k experts lie on:
// R above. REQUIRES: experts >= 1, 1 <= top_k <= experts, ep >= 1 dividing
// experts. Returns k with one expert per rank (ep == E), 1 when ep == 1.
// groups / group_limit: Model::moe_router_groups / moe_router_group_limit
// (0: no group limit).
double flex_dispatch_ranks_per_token(int experts, int top_k, int ep, int groups = 0,
                                     int group_limit = 0);

// Expected distinct nodes a token's top-k experts lie on (D above), the
// experts split in equal consecutive blocks over `nodes` nodes; 1 when
// nodes <= 1. REQUIRES: nodes divides experts.
double flex_dispatch_nodes_per_token(int experts, int top_k, int nodes, int groups = 0,
                                     int group_limit = 0);

// R / k: the factor on the alltoall dispatcher's bytes (1 when ep == 1).
double flex_dispatch_byte_scale(int experts, int top_k, int ep, int groups = 0,
                                int group_limit = 0);

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LAYERS_MOE_DISPATCH_H_

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
// benchmarks force; otherwise, e.g. ep below G, the uniform R above.) The
// inter-node bytes keep their own limit (CollectiveDesc::off_node_scale).
#ifndef LLMPLAN_SIMULATOR_LOWERING_MOE_DISPATCH_H_
#define LLMPLAN_SIMULATOR_LOWERING_MOE_DISPATCH_H_

namespace llmplan::simulator::lowering {

// Expected distinct expert-parallel ranks a token's top-k experts lie on:
// R above. REQUIRES: experts >= 1, 1 <= top_k <= experts, ep >= 1 dividing
// experts. Returns k with one expert per rank (ep == E), 1 when ep == 1.
// groups / group_limit: Model::moe_router_groups / moe_router_group_limit
// (0: no group limit).
double flex_dispatch_ranks_per_token(int experts, int top_k, int ep, int groups = 0,
                                     int group_limit = 0);

// Expected distinct nodes a token's top-k experts lie on when the ep ranks
// (experts / ep experts each, in order) fill `nodes` nodes equally: the
// formula above with nodes in place of ep. REQUIRES: nodes >= 1 dividing ep.
double flex_dispatch_nodes_per_token(int experts, int top_k, int nodes);

// R / k: the factor on the alltoall dispatcher's bytes (1 when ep == 1).
double flex_dispatch_byte_scale(int experts, int top_k, int ep, int groups = 0,
                                int group_limit = 0);

}  // namespace llmplan::simulator::lowering

#endif  // LLMPLAN_SIMULATOR_LOWERING_MOE_DISPATCH_H_

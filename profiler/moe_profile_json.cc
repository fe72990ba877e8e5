#include "profiler/moe_profile_json.h"

#include <boost/json.hpp>

#include "simulator/profile_table_json.h"
#include "base/strict_json.h"

namespace llmplan::profiler {
namespace {

namespace bj = boost::json;

bj::array ints(const std::vector<int>& v) { return bj::array(v.begin(), v.end()); }

bj::object entry_json(const MoeProfileEntry& e) {
  const MoeJob& j = e.job;
  const OpTiming& t = e.timing;
  bj::object o;
  o["op"] = moe_op_name(j.op);
  o["pass"] = simulator::pass_name(j.pass);
  o["precision"] = "bf16";
  switch (j.op) {
    case MoeOp::kExpertFc1:
    case MoeOp::kExpertFc2:
      o["impl"] = grouped_impl_name(j.impl);
      o["split"] = token_split_name(j.split);
      o["local_experts"] = j.local_experts;
      o["m"] = j.m;
      o["n"] = j.n;
      o["k"] = j.k;
      if (j.split == TokenSplit::kSkewed)
        o["expert_m"] = bj::array(j.expert_m.begin(), j.expert_m.end());
      break;
    case MoeOp::kRouterGemm:
      o["m"] = j.m;
      o["n"] = j.n;
      o["k"] = j.k;
      break;
    case MoeOp::kRouterTopk:
      o["tokens"] = j.tokens;
      o["experts"] = j.model.experts;
      o["top_k"] = j.model.top_k;
      o["score"] = router_score_name(j.model.score);
      break;
    case MoeOp::kPermute:
    case MoeOp::kUnpermute:
      o["tokens"] = j.tokens;
      o["top_k"] = j.model.top_k;
      o["hidden"] = j.model.hidden;
      o["rows"] = j.tokens * j.model.top_k;
      break;
  }
  if (j.flops > 0) {
    o["flops"] = j.flops;
    o["tflops"] = j.flops / t.time_s / 1e12;
  } else {
    o["bytes"] = j.bytes;
    o["gbps"] = j.bytes / t.time_s / 1e9;
  }
  o["time_s"] = t.time_s;
  o["min_time_s"] = t.min_time_s;
  o["max_time_s"] = t.max_time_s;
  o["event_time_s"] = t.event_time_s;
  o["repeats"] = t.repeats;
  o["kernels"] = bj::array(t.kernel_names.begin(), t.kernel_names.end());
  return o;
}

}  // namespace

Result<std::string> moe_profile_to_json(const MoeProfile& p) {
  // The header fields exactly as the simulator's profile writes them.
  simulator::Profile header = p.header;
  header.shapes.clear();
  header.kernels.clear();
  header.collectives.clear();
  header.notes.clear();
  LLMPLAN_ASSIGN_OR_RETURN(bj::value h,
                           json::parse(simulator::profile_to_json(header), "profile header"));
  bj::object root;
  root["kind"] = kMoeProfileKind;
  root["format_version"] = 1;
  for (const char* key : {"llmplan_version", "date", "host"}) root[key] = h.at(key);
  root["command_line"] = p.command_line;
  for (const char* key : {"gpu", "software", "timing"}) root[key] = h.at(key);
  bj::array models;
  for (const MoeModel& m : p.settings.models) {
    models.push_back(bj::object{{"hidden", m.hidden},
                                {"experts", m.experts},
                                {"top_k", m.top_k},
                                {"expert_ffn", m.expert_ffn},
                                {"router", router_score_name(m.score)}});
  }
  root["grid"] = bj::object{{"models", std::move(models)},
                            {"local_experts", ints(p.settings.local_experts)},
                            {"m_sweep", ints(p.settings.m_sweep)},
                            {"tokens", ints(p.settings.tokens)},
                            {"max_rows", p.settings.max_rows}};
  bj::array kernels;
  for (const MoeProfileEntry& e : p.entries) kernels.push_back(entry_json(e));
  root["kernels"] = std::move(kernels);
  root["notes"] = bj::array(p.notes.begin(), p.notes.end());
  return json::pretty_finite(root, "MoE profile");
}

}  // namespace llmplan::profiler

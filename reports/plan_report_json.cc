#include "reports/plan_report_json.h"

#include <cmath>

#include "reports/failures_report.h"
#include "reports/ownership_json.h"
#include "base/version.h"
#include "scaling/law_json.h"
#include "simulator/caveats.h"
#include "simulator/model_json.h"

namespace llmplan::reports {
namespace {

boost::json::object plan_json(const PlanRow& p) {
  boost::json::object plan;
  plan["tp"] = p.plan.tensor_parallel;
  plan["pp"] = p.plan.pipeline_parallel;
  plan["dp"] = p.plan.data_parallel;
  plan["cp"] = p.plan.context_parallel;
  plan["cp_comm"] = simulator::to_string(p.plan.cp_comm);
  plan["micro_batch"] = p.plan.micro_batch_size;
  plan["global_batch"] = p.plan.global_batch_size;
  plan["virtual_stages"] = p.plan.virtual_stages;
  plan["schedule"] = simulator::to_string(p.plan.schedule);
  plan["recompute"] = simulator::to_string(p.plan.recompute);
  plan["sequence_parallel"] = p.plan.sequence_parallel;
  plan["distributed_optimizer"] = p.plan.distributed_optimizer;
  plan["zero_stage"] = p.plan.sharding_stage();
  plan["fsdp_group"] = p.plan.shard_group_size();
  plan["tp_comm_overlap"] = p.plan.tp_comm_overlap;
  plan["overlap_grad_reduce"] = p.plan.overlap_grad_reduce;
  plan["overlap_param_gather"] = p.plan.overlap_param_gather;
  plan["precision"] = simulator::to_string(p.plan.precision);
  if (p.plan.precision == simulator::Precision::kFp8) {
    plan["fp8_recipe"] = simulator::to_string(p.plan.fp8_recipe);
  }
  plan["ep"] = p.plan.expert_parallel;
  plan["etp"] = p.plan.expert_tensor_parallel;
  plan["moe_a2a_overlap"] = p.plan.moe_a2a_overlap;
  plan["gpus_used"] = p.gpus_used;
  plan["iteration_time_s"] = p.iteration_time_s;
  plan["label"] = plan_label(p.plan);
  return plan;
}

boost::json::object plan_json(const PlanRow& p, const simulator::Model& m) {
  boost::json::object plan = plan_json(p);
  plan["global_batch_tokens"] = static_cast<double>(p.plan.global_batch_size) * m.seq_length;
  return plan;
}

// Every field of the model with the defaults resolved (kv_heads and
// ffn_hidden as used, never 0).
boost::json::value architecture_json(const simulator::Model& m) {
  boost::json::value v = simulator::model_to_json(m);
  v.as_object()["kv_heads"] = m.kv_heads();
  v.as_object()["ffn_hidden"] = m.ffn_hidden();
  return v;
}

// A number, or null when it is not finite (training that never ends).
boost::json::value number(double x) {
  if (!std::isfinite(x) || x > 1e299) return nullptr;
  return x;
}

// {low, high, level, method}; low and high null when the law's uncertainty
// is unknown.
boost::json::object loss_interval_json(const scaling::LossInterval& in) {
  boost::json::object o;
  o["low"] = in.known ? boost::json::value(in.low) : boost::json::value(nullptr);
  o["high"] = in.known ? boost::json::value(in.high) : boost::json::value(nullptr);
  o["level"] = in.level;
  o["method"] = in.method;
  return o;
}

boost::json::object candidate_json(const PlanReport& v, const ResultTable& r, int i) {
  const CandidateRow& c = r.candidates[i];
  boost::json::object o;
  o["params"] = c.params;
  o["active_params"] = c.active_params;
  o["experts"] = c.model.num_experts;
  o["tokens"] = number(c.tokens);
  o["layers"] = c.model.num_layers;
  o["hidden"] = c.model.hidden_size;
  o["heads"] = c.model.num_heads;
  o["architecture"] = architecture_json(c.model);
  o["feasible"] = c.feasible;
  o["why"] = c.why;
  o["optimised"] = c.optimised;
  boost::json::object counts;
  counts["layouts"] = c.layouts;
  counts["memory_pruned"] = c.memory_pruned;
  counts["simulated"] = c.plans_evaluated;
  counts["fit_memory"] = c.plans_fit;
  counts["in_time"] = c.plans_in_time;
  counts["in_budget"] = c.plans_in_budget;
  o["plan_counts"] = counts;
  if (c.best_plan >= 0) {
    const PlanRow& p = r.plans[c.best_plan];
    o["plan"] = plan_json(p, c.model);
    o["days"] = number(c.days);
    o["days_low"] = number(days_at_low(c));
    o["days_high"] = number(days_at_high(c));
    o["mfu"] = p.mfu;
    o["mfu_precision_peak"] = mfu_precision_peak(p, v.cluster.gpu);
    o["model_tflops_per_gpu"] = model_tflops_per_gpu(p, v.cluster.gpu);
    o["peak_memory_bytes"] = p.peak_memory_bytes;
    o["cost_usd"] = v.cluster.usd_per_gpu_hour > 0 ? number(c.cost_usd) : nullptr;
    o["loss"] = number(c.loss);
    o["loss_interval"] = loss_interval_json(c.loss_interval);
    o["loss_vs_answer"] = c.loss_vs_answer;
    boost::json::array codes;
    for (uint32_t bit = 1; bit != 0 && bit <= simulator::kAllCaveats; bit <<= 1) {
      if ((p.caveats & bit) != 0) codes.emplace_back(simulator::caveat_code(static_cast<simulator::CaveatBit>(bit)));
    }
    o["caveats"] = codes;
    // Failures (issue 28): the answer gets the full breakdown.
    if (r.failures) {
      add_failure_fields_json(c.compute_days, c.goodput, &o);
      if (i == r.best) {  // the answer (of the search or the dense comparison)
        o["failures"] = failures_detail_json(c.goodput, v.options.reliability,
                                             v.cluster.gpus_per_node, r.answer_distribution);
      }
    }
  } else {
    o["plan"] = nullptr;
  }
  return o;
}

}  // namespace

boost::json::value ownership_json(const presets::Pricing& p) {
  if (p.model != "owned") return nullptr;
  const presets::OwnedCost& c = p.owned;
  boost::json::object w;
  add_owned_cost_numbers(c, &w);
  w["cloud_usd_per_gpu_hour"] = p.cloud_usd_per_gpu_hour;
  w["sources"] = owned_cost_sources(c);
  return w;
}

namespace {

// Issue 30: how many plans the lower bound proved unable to matter.
boost::json::object pruning_json(const ResultTable& r) {
  // Issue 30: how many plans the lower bound proved unable to matter.
  boost::json::object pruning;
  pruning["exhaustive"] = !r.pruning_off.empty();
  if (!r.pruning_off.empty()) pruning["why_exhaustive"] = r.pruning_off;
  pruning["pruned_deadline"] = r.plans_pruned_deadline;
  pruning["pruned_incumbent"] = r.plans_pruned_incumbent;
  pruning["pruned_answer"] = r.plans_pruned_answer;
  pruning["simulated"] = r.plans_evaluated;  // beside the pruned counts: their sum is every plan
  return pruning;
}

// The loss law: its constants, MoE terms and uncertainty.
boost::json::object law_json(const scaling::LossLaw& law_in) {
  boost::json::object law;
  law["name"] = law_in.name;
  law["E"] = law_in.E;
  law["A"] = law_in.A;
  law["B"] = law_in.B;
  law["alpha"] = law_in.alpha;
  law["beta"] = law_in.beta;
  if (law_in.moe.present) {
    const boost::json::value full = scaling::law_to_json(law_in);
    law["moe"] = full.as_object().at("moe");
  }
  if (law_in.joint.present) law["joint_moe"] = scaling::law_to_json(law_in).as_object().at("joint_moe");
  {
    boost::json::object u;
    u["kind"] = scaling::to_string(law_in.uncertainty.kind);
    u["source"] = law_in.uncertainty.source;
    law["uncertainty"] = u;
  }
  return law;
}

// The answer's time band (the pooled band without an answer).
boost::json::object band_json(const PlanReport& v) {
  const SearchInputs& opt = v.options;
  const BandRow& ab = answer_band(v);
  boost::json::object band;
  band["known"] = ab.known;
  if (ab.known) {
    band["p_low"] = ab.p_low;
    band["p_high"] = ab.p_high;
    band["low_ratio"] = ab.low_ratio;
    band["high_ratio"] = ab.high_ratio;
    band["samples"] = ab.samples;
    band["group"] = ab.group;
    band["pooled_samples"] = opt.band.samples;
    band["source"] = ab.source;
  }
  band["confidence"] = ab.confidence;
  band["confidence_ratio"] = ab.confidence_ratio;
  return band;
}

// "assumptions": the cluster, pricing, shapes, batches, tokens, law, band, notes.
boost::json::object assumptions_json(const PlanReport& v) {
  const SearchInputs& opt = v.options;
  boost::json::object as;
  as["gpu"] = v.cluster.gpu.name;
  as["gpu_peak_bf16_flops"] = v.cluster.gpu.peak_bf16_flops;
  as["gpu_hbm_bytes"] = v.cluster.gpu.hbm_bytes;
  as["gpus_per_node"] = v.cluster.gpus_per_node;
  as["usd_per_gpu_hour"] = v.cluster.usd_per_gpu_hour;
  as["budget_usd"] = opt.budget_usd;
  if (opt.pricing.stated) {  // --cost-model given (absent otherwise: the cloud price)
    as["cost_model"] = opt.pricing.model;
    as["ownership"] = ownership_json(opt.pricing);
  }
  as["family"] = opt.shapes.empty() ? opt.family : "shapes";
  as["shape_template"] = simulator::model_to_json(opt.shape_template);
  boost::json::array default_ladder;
  for (double t : opt.default_batch_ladder_tokens) default_ladder.emplace_back(t);
  as["default_batch_ladder_tokens"] = default_ladder;
  as["batch_rule"] = opt.global_batch.empty() && opt.global_batch_tokens.empty()
                         ? "auto: per model the first ladder rung at or above the compute-optimal "
                           "batch 0.292 C^0.3271 tokens (DeepSeek LLM, arXiv 2401.02954)"
                         : "given";
  as["seq_length"] = opt.shape_template.seq_length;
  as["vocab_size"] = opt.shape_template.vocab_size;
  as["plan_space"] = opt.plan_space;
  boost::json::array ladder;
  for (double t : opt.global_batch_tokens) ladder.emplace_back(t);
  as["global_batch_tokens"] = ladder;
  boost::json::array seqs;
  for (int b : opt.global_batch) seqs.emplace_back(b);
  as["global_batch"] = seqs;
  as["tokens_rule"] = opt.training.tokens > 0          ? "fixed"
                      : opt.training.target_loss > 0   ? "target_loss"
                      : opt.trains_to_deadline        ? "deadline"
                      : opt.tokens_use_law             ? "law"
                                                       : "tokens_per_param";
  as["tokens_per_param"] = opt.tokens_per_param;
  as["law"] = law_json(opt.law);
  as["error_band"] = band_json(v);
  boost::json::array notes;
  for (const std::string& n : v.notes) notes.emplace_back(n);
  as["notes"] = notes;
  return as;
}

// The chosen model's time-cost Pareto front of plans.
boost::json::array pareto_json(const PlanReport& v) {
  const ResultTable& r = v.result;
  boost::json::array front;
  for (int i : r.pareto) {
    const PlanRow& p = r.plans[i];
    boost::json::object f = plan_json(p, r.candidates[r.best].model);
    const double d = p.days;
    f["days"] = number(d);
    f["gpu_hours"] = number(d * 24 * p.gpus_used);
    f["cost_usd"] = v.cluster.usd_per_gpu_hour > 0 ? number(d * 24 * p.gpus_used * v.cluster.usd_per_gpu_hour) : nullptr;
    f["mfu"] = p.mfu;
    f["mfu_precision_peak"] = mfu_precision_peak(p, v.cluster.gpu);
    f["model_tflops_per_gpu"] = model_tflops_per_gpu(p, v.cluster.gpu);
    front.push_back(f);
  }
  return front;
}

// --family moe: the dense (llama) answer for the same budget and the verdict.
boost::json::object dense_comparison_json(const PlanReport& v) {
  const ResultTable& r = v.result;
  const SearchInputs& opt = v.options;
  const ResultTable& d = v.dense;
  boost::json::object dc;
  dc["family"] = "llama";
  dc["law"] = v.dense_law;
  // The dense search's own table: its candidates' best_plan index its plans.
  dc["best"] = d.best >= 0 ? boost::json::value(candidate_json(v, d, d.best)) : nullptr;
  dc["candidates_evaluated"] = static_cast<int64_t>(d.candidates.size());
  dc["plans_evaluated"] = d.plans_evaluated;
  dc["loss_difference"] =
      r.best >= 0 && d.best >= 0
          ? number(r.candidates[r.best].loss - d.candidates[d.best].loss)
          : boost::json::value(nullptr);
  // The verdict under the chosen objective (loss_verdict.h).
  const DenseVerdict& dv = v.verdict;
  dc["objective"] = opt.loss_objective ? "loss" : "largest";
  if (dv.available) {
    boost::json::object vj;
    vj["headline"] = dv.headline;
    vj["moe_loss"] = dv.moe_loss;
    vj["dense_loss"] = dv.dense_loss;
    vj["moe_loss_interval"] = loss_interval_json(dv.moe_interval);
    vj["dense_loss_interval"] = loss_interval_json(dv.dense_interval);
    vj["difference"] = dv.comparison.difference;
    vj["difference_low"] = dv.comparison.known ? boost::json::value(dv.comparison.low) : nullptr;
    vj["difference_high"] = dv.comparison.known ? boost::json::value(dv.comparison.high) : nullptr;
    vj["exceeds_uncertainty"] =
        dv.comparison.known ? boost::json::value(dv.comparison.exceeds) : nullptr;
    vj["method"] = dv.comparison.method;
    vj["sentence"] = dv.sentence;
    dc["verdict"] = vj;
  } else {
    dc["verdict"] = nullptr;
  }
  return dc;
}

}  // namespace

boost::json::object plan_report_to_json(const PlanReport& v) {
  const ResultTable& r = v.result;
  const SearchInputs& opt = v.options;
  boost::json::object o;
  o["schema_version"] = kResultSchemaVersion;
  boost::json::object tool;
  tool["name"] = "llmplan";
  tool["version"] = version_line("llmplan");
  o["tool"] = tool;
  boost::json::array argv;
  for (const std::string& a : v.command_line) argv.emplace_back(a);
  o["command_line"] = argv;
  if (r.best >= 0) {
    boost::json::object best = candidate_json(v, r, r.best);
    o["best"] = best;
  } else {
    o["best"] = nullptr;
  }
  // The answer's predicted loss as an interval (loss_verdict.h).
  o["loss_interval"] = r.best >= 0 && r.candidates[r.best].best_plan >= 0
                           ? boost::json::value(loss_interval_json(r.candidates[r.best].loss_interval))
                           : boost::json::value(nullptr);
  o["pinned"] = r.pinned;
  boost::json::object naive;
  naive["params"] = r.naive_params;
  naive["tokens"] = r.naive_tokens;
  naive["flops"] = r.naive_flops;
  naive["simulated_days"] = r.naive_days;
  o["naive"] = naive;
  o["candidates_evaluated"] = static_cast<int64_t>(r.candidates.size());
  o["plans_evaluated"] = r.plans_evaluated;
  o["pruning"] = pruning_json(r);
  o["gpus"] = opt.gpus;
  o["days"] = opt.days;
  o["cluster"] = v.cluster.name;
  o["objective"] = r.pinned ? "pinned" : !opt.loss_objective ? "largest" : "loss";

  o["assumptions"] = assumptions_json(v);
  boost::json::array caveats;
  for (const simulator::Caveat& c : v.caveats) caveats.push_back(boost::json::object{{"code", c.code}, {"text", c.text}});
  o["caveats"] = caveats;

  boost::json::array cands;
  for (int i = 0; i < static_cast<int>(r.candidates.size()); ++i) cands.push_back(candidate_json(v, r, i));
  o["candidates"] = cands;
  o["pareto_front"] = pareto_json(v);
  if (has_training_objective(opt.training)) o["training_objective"] = training_objective_json(v);
  if (v.has_dense) o["dense_comparison"] = dense_comparison_json(v);
  return o;
}

}  // namespace llmplan::reports

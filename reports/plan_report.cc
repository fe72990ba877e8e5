#include "reports/plan_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/failures_report.h"
#include "reports/plan_report_internal.h"
#include "reports/format.h"
#include "reports/svg_plot.h"
#include "reports/table.h"

namespace llmplan::reports {


std::string plan_label(const simulator::Plan& p) {
  std::string s = fmt::format("t{} p{} d{} b{} B{}", p.tensor_parallel, p.pipeline_parallel,
                              p.data_parallel, p.micro_batch_size, p.global_batch_size);
  if (p.virtual_stages > 1) s += fmt::format(" v{}", p.virtual_stages);
  if (p.context_parallel > 1) {
    s += fmt::format(" cp{}{}", p.context_parallel,
                     p.cp_comm == simulator::CpComm::kAllGather ? "ag" : "");
  }
  if (p.schedule == simulator::Schedule::kZbH1) s += " zb-h1";
  if (p.recompute != simulator::Recompute::kNone) s += std::string(" ") + simulator::to_string(p.recompute);
  if (p.sequence_parallel) s += " SP";
  const int stage = p.sharding_stage();
  if (stage > 0) s += fmt::format(" ZeRO-{}", stage);
  if (stage > 0 && p.fsdp_group > 0) s += fmt::format(" shard{}", p.fsdp_group);
  if (p.tp_comm_overlap) s += " TPov";
  if (stage > 0 && p.overlap_param_gather) s += " PGov";
  if (p.data_parallel > 1 && !p.overlap_grad_reduce) s += " noGRov";
  if (p.expert_parallel > 1) s += fmt::format(" ep{}", p.expert_parallel);
  if (p.expert_tensor_parallel > 1) s += fmt::format(" etp{}", p.expert_tensor_parallel);
  if (p.moe_a2a_overlap) s += " A2Aov";
  if (p.precision == simulator::Precision::kFp8) {
    s += p.fp8_recipe == simulator::Fp8Recipe::kDelayed
             ? std::string(" FP8")
             : fmt::format(" FP8-{}", simulator::to_string(p.fp8_recipe));
  }
  if (p.precision == simulator::Precision::kNvfp4) s += " NVFP4";
  return s;
}

namespace plan_report_internal {

std::string days_str(double d) { return d > 1e9 ? "inf" : fmt::format("{:.1f}", d); }

std::string usd_str(double usd, double price) { return price > 0 ? usd_human(usd) : "n/a"; }

const char* activation_name(const simulator::Model& m) {
  if (m.activation == simulator::Activation::kSquaredRelu) return "squared ReLU";
  return m.activation == simulator::Activation::kSwiglu ? "SwiGLU" : "GELU";
}

std::string why_text(const CandidateRow& c, const PlanReport& v) {
  if (c.why == "no-layout") return "no layout for this many GPUs";
  if (c.why == "memory") return "no plan fits memory";
  if (c.why == "budget") return "over budget";
  if (c.why == "deadline") return v.result.pinned ? "misses the deadline" : "too slow: deadline";
  return c.why;
}

std::string band_text(const CandidateRow& c) {
  const BandRow& b = c.band;
  if (!b.known) return "error unknown";
  return fmt::format("P{:.0f}–P{:.0f} {}–{} days", b.p_low * 100, b.p_high * 100,
                     days_str(days_at_low(c)), days_str(days_at_high(c)));
}

Table candidate_table(const PlanReport& v, bool all) {
  Table t({"params", "layers", "hidden", "heads", "tokens", "plan", "iteration", "days",
           "MFU (16-bit peak)", "cost", "loss", "status"});
  const ResultTable& r = v.result;
  std::vector<int> rows;
  for (int i = static_cast<int>(r.candidates.size()) - 1; i >= 0; --i) rows.push_back(i);
  if (!all) {
    // Top candidates: the best, then the feasible ones by the objective, then
    // the smallest infeasible above it.
    std::vector<int> keep;
    if (r.best >= 0) keep.push_back(r.best);
    for (int i : rows) {
      if (i == r.best || keep.size() >= 8) continue;
      if (r.candidates[i].feasible || (r.best >= 0 && i > r.best && i <= r.best + 3) ||
          (r.best < 0 && i < 3)) {
        keep.push_back(i);
      }
    }
    std::sort(keep.begin(), keep.end(), [](int a, int b) { return a > b; });
    rows = keep;
  }
  for (int i : rows) {
    const CandidateRow& c = r.candidates[i];
    std::string plan = "-", iter = "-", mfu = "-";
    if (c.best_plan >= 0) {
      const PlanRow& p = r.plans[c.best_plan];
      plan = plan_label(p.plan);
      iter = seconds_human(p.iteration_time_s);
      mfu = percent(p.mfu);
    }
    std::string status = c.feasible ? (i == r.best ? "BEST" : "ok") : why_text(c, v);
    // Stopped at its first feasible plan (it cannot change the answer): the
    // plan, days and cost are that plan's, at most its best days.
    if (c.feasible && !c.optimised) status = "ok (first feasible plan)";
    if (r.pinned && i == r.best && !c.feasible) status = "PINNED: " + why_text(c, v);
    t.add_row({count_human(c.params), std::to_string(c.model.num_layers),
               std::to_string(c.model.hidden_size), std::to_string(c.model.num_heads),
               count_human(c.tokens), plan, iter, c.best_plan >= 0 ? days_str(c.days) : "-", mfu,
               c.best_plan >= 0 ? usd_str(c.cost_usd, v.cluster.usd_per_gpu_hour) : "-",
               c.best_plan >= 0 ? fmt::format("{:.3f}", c.loss) : "-", status});
  }
  return t;
}

std::string caveat_codes(uint32_t mask) {
  std::string out;
  for (uint32_t bit = 1; bit != 0 && bit <= simulator::kAllCaveats; bit <<= 1) {
    if ((mask & bit) == 0) continue;
    if (!out.empty()) out += ';';
    out += simulator::caveat_code(static_cast<simulator::CaveatBit>(bit));
  }
  return out;
}

std::string num(double x) {
  if (!std::isfinite(x) || x > 1e299) return "";
  return fmt::format("{}", x);
}

}  // namespace plan_report_internal

using plan_report_internal::activation_name;
using plan_report_internal::caveat_codes;
using plan_report_internal::candidate_table;
using plan_report_internal::days_str;
using plan_report_internal::num;
using plan_report_internal::usd_str;
using plan_report_internal::why_text;

const BandRow& answer_band(const PlanReport& v) {
  const ResultTable& r = v.result;
  return r.best < 0 ? v.options.band : r.candidates[r.best].band;
}

double days_at_low(const CandidateRow& c) {
  return c.band.known ? c.days * c.band.low_ratio : c.days;
}

double days_at_high(const CandidateRow& c) {
  return c.band.known ? c.days * c.band.high_ratio : c.days;
}

std::string architecture_line(const simulator::Model& m) {
  std::string heads = std::to_string(m.num_heads) + " heads";
  if (m.kv_heads() != m.num_heads) heads += fmt::format(" ({} KV)", m.kv_heads());
  std::string ffn = fmt::format("FFN {}", m.ffn_hidden());
  if (m.is_moe()) {
    ffn = fmt::format("{} experts top-{} of FFN {}{}", m.num_experts, m.moe_top_k,
                      m.moe_ffn_hidden(),
                      m.moe_shared_experts > 0
                          ? fmt::format(" + {} shared", m.moe_shared_experts)
                          : std::string());
    if (m.num_moe_layers() != m.num_layers) {
      ffn += fmt::format(" in {} of the layers (dense FFN {})", m.num_moe_layers(), m.ffn_hidden());
    }
  }
  std::string positions =
      m.positions == simulator::PositionEmbedding::kRotary ? "RoPE" : "learned positions";
  // Chunked attention (Llama 4).
  if (m.attention_chunk > 0) {
    positions += fmt::format(", chunked attention {}", m.attention_chunk);
    if (m.global_attention_every > 0) {
      positions += fmt::format(" (every {}th layer global, no RoPE)", m.global_attention_every);
    }
  }
  return fmt::format(
      "{} layers, hidden {}, {}, {} {}, {}, {} embeddings, {}, seq {}, vocab {}",
      m.num_layers, m.hidden_size, heads, ffn, activation_name(m), positions,
      m.tied_embeddings ? "tied" : "untied", m.linear_bias ? "LayerNorm + biases" : "RMSNorm, no biases",
      m.seq_length, m.vocab_size);
}

std::string command_line_text(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) out += ' ';
    out += i == 0 ? std::string("llmplan") : shell_quote(argv[i]);
  }
  return out;
}

std::string pricing_markdown(const presets::Pricing& p) {
  if (p.model != "owned") {
    return fmt::format(
        "- Cost model: cloud: {} (the cluster's price preset)\n",
        p.cloud_usd_per_gpu_hour > 0 ? usd_human(p.cloud_usd_per_gpu_hour) + "/GPU-hour"
                                     : std::string("no price"));
  }
  const presets::OwnedCost& c = p.owned;
  return fmt::format(
      "- Cost model: owned: {}/GPU-hour = capex {} / ({:g} years x 8,766 h) = {}/h + power "
      "{:.0f} W (TDP {:.0f} W x (1 + non-GPU share {:.3f})) x PUE {:g} x ${:g}/kWh = {}/h "
      "(datacentre space, staff, scale-out network and storage not included: a floor){}\n"
      "  - capex: {}\n  - years: {}\n  - PUE: {}\n  - $/kWh: {}\n  - power: {}\n",
      usd_human(c.usd_per_gpu_hour), usd_human(c.capex_usd_per_gpu), c.amortisation_years,
      usd_human(c.capex_usd_per_gpu_hour), c.it_power_w, c.tdp_w, c.non_gpu_power_share, c.pue,
      c.usd_per_kwh, usd_human(c.power_usd_per_gpu_hour),
      p.cloud_usd_per_gpu_hour > 0
          ? "; cloud price for comparison " + usd_human(p.cloud_usd_per_gpu_hour) + "/GPU-hour"
          : "",
      c.capex_source, c.years_source, c.pue_source, c.kwh_source, c.power_source);
}

double mfu_precision_peak(const PlanRow& p, const simulator::GpuSpec& gpu) {
  return simulator::mfu_of_precision_peak(p.mfu, gpu, p.plan.precision);
}

double model_tflops_per_gpu(const PlanRow& p, const simulator::GpuSpec& gpu) {
  return simulator::model_flops_per_gpu(p.mfu, gpu, p.plan.precision) / 1e12;
}

std::string mfu_text(const PlanRow& p, const simulator::GpuSpec& gpu) {
  const simulator::Precision prec = p.plan.precision;
  const std::string tflops = fmt::format("{:.0f} model TFLOP/s per GPU", model_tflops_per_gpu(p, gpu));
  if (simulator::low_precision(prec)) {
    return fmt::format("MFU {} of the BF16 peak ({} of the {} peak; {})", percent(p.mfu),
                       percent(mfu_precision_peak(p, gpu)),
                       prec == simulator::Precision::kNvfp4 ? "FP4" : "FP8", tflops);
  }
  return fmt::format("MFU {} of the {} peak ({})", percent(p.mfu),
                     prec == simulator::Precision::kFp16 ? "FP16" : "BF16", tflops);
}

std::string candidates_csv(const PlanReport& v) {
  const ResultTable& r = v.result;
  Table t({"name", "params", "layers", "hidden", "heads", "kv_heads", "ffn_hidden",
           "activation", "positions", "tied_embeddings", "linear_bias", "seq_length",
           "vocab_size", "tokens", "plan", "tp", "pp", "dp", "micro_batch", "global_batch",
           "virtual_stages", "recompute", "sequence_parallel", "distributed_optimizer",
           "zero_stage", "fsdp_group", "tp_comm_overlap", "overlap_grad_reduce",
           "overlap_param_gather", "gpus_used", "iteration_s", "mfu", "peak_memory_bytes", "days", "days_low",
           "days_high", "cost_usd", "loss", "feasible", "best", "why", "layouts",
           "memory_pruned", "plans_simulated", "plans_fit", "plans_in_time", "caveats",
           "experts", "active_params", "precision", "cp", "ep", "etp",
           "mfu_precision_peak", "model_tflops_per_gpu", "loss_low", "loss_high",
           "loss_vs_answer", "optimised"});
  if (r.failures) {  // issue 28's columns, appended
    std::vector<std::string> header = t.header();
    for (const std::string& h : failure_csv_header()) header.push_back(h);
    t = Table(header);
  }
  for (int i = static_cast<int>(r.candidates.size()) - 1; i >= 0; --i) {
    const CandidateRow& c = r.candidates[i];
    const simulator::Model& m = c.model;
    std::vector<std::string> row = {
        m.name, num(c.params), std::to_string(m.num_layers), std::to_string(m.hidden_size),
        std::to_string(m.num_heads), std::to_string(m.kv_heads()), std::to_string(m.ffn_hidden()),
        m.activation == simulator::Activation::kSwiglu        ? "swiglu"
        : m.activation == simulator::Activation::kSquaredRelu ? "squared_relu"
                                                              : "gelu",
        m.positions == simulator::PositionEmbedding::kRotary ? "rotary" : "learned",
        m.tied_embeddings ? "1" : "0", m.linear_bias ? "1" : "0", std::to_string(m.seq_length),
        std::to_string(m.vocab_size), num(c.tokens)};
    if (c.best_plan >= 0) {
      const PlanRow& p = r.plans[c.best_plan];
      const simulator::Plan& q = p.plan;
      row.insert(row.end(),
                 {plan_label(q), std::to_string(q.tensor_parallel), std::to_string(q.pipeline_parallel),
                  std::to_string(q.data_parallel), std::to_string(q.micro_batch_size),
                  std::to_string(q.global_batch_size), std::to_string(q.virtual_stages),
                  simulator::to_string(q.recompute), q.sequence_parallel ? "1" : "0",
                  q.distributed_optimizer ? "1" : "0", std::to_string(q.sharding_stage()),
                  std::to_string(q.shard_group_size()), q.tp_comm_overlap ? "1" : "0",
                  q.overlap_grad_reduce ? "1" : "0", q.overlap_param_gather ? "1" : "0",
                  std::to_string(p.gpus_used),
                  num(p.iteration_time_s), num(p.mfu), num(p.peak_memory_bytes), num(c.days),
                  num(days_at_low(c)), num(days_at_high(c)),
                  v.cluster.usd_per_gpu_hour > 0 ? num(c.cost_usd) : "", num(c.loss)});
    } else {
      row.insert(row.end(), 24, "");
    }
    row.insert(row.end(), {c.feasible ? "1" : "0", i == r.best ? "1" : "0", c.why,
                           std::to_string(c.layouts), std::to_string(c.memory_pruned),
                           std::to_string(c.plans_evaluated), std::to_string(c.plans_fit),
                           std::to_string(c.plans_in_time),
                           c.best_plan >= 0 ? caveat_codes(r.plans[c.best_plan].caveats) : "",
                           std::to_string(m.num_experts),
                           num(c.active_params > 0 ? c.active_params : c.params)});
    if (c.best_plan >= 0) {
      const PlanRow& p = r.plans[c.best_plan];
      row.insert(row.end(), {simulator::to_string(p.plan.precision),
                             std::to_string(p.plan.context_parallel),
                             std::to_string(p.plan.expert_parallel),
                             std::to_string(p.plan.expert_tensor_parallel),
                             num(mfu_precision_peak(p, v.cluster.gpu)),
                             num(model_tflops_per_gpu(p, v.cluster.gpu))});
    } else {
      row.insert(row.end(), 6, "");
    }
    // The loss's interval under the law's published uncertainty (empty:
    // unknown) and how it compares with the answer's (filled by the planner).
    const scaling::LossInterval& in = c.loss_interval;
    row.insert(row.end(), {in.known ? num(in.low) : "", in.known ? num(in.high) : "",
                           c.loss_vs_answer, c.optimised ? "1" : "0"});
    if (r.failures) {
      const Goodput* g = c.best_plan >= 0 ? &c.goodput : nullptr;
      for (const std::string& f : failure_csv_cells(c.compute_days, g)) row.push_back(f);
    }
    t.add_row(row);
  }
  return t.csv();
}

std::string plans_csv(const PlanReport& v) {
  const ResultTable& r = v.result;
  Table t({"name", "params", "layers", "hidden", "tp", "pp", "dp", "micro_batch",
           "global_batch", "virtual_stages", "recompute", "sequence_parallel",
           "distributed_optimizer", "zero_stage", "fsdp_group", "tp_comm_overlap",
           "overlap_grad_reduce", "overlap_param_gather", "gpus", "fits", "iteration_s", "mfu",
           "peak_memory_bytes", "tokens_per_s", "days", "cost_usd", "experts",
           "active_params", "precision", "cp", "ep", "etp", "mfu_precision_peak",
           "model_tflops_per_gpu"});
  for (const PlanRow& p : r.plans) {
    const CandidateRow& c = r.candidates[p.shape];
    const double d = p.days;
    t.add_row({c.model.name, num(c.params), std::to_string(c.model.num_layers),
               std::to_string(c.model.hidden_size), std::to_string(p.plan.tensor_parallel),
               std::to_string(p.plan.pipeline_parallel), std::to_string(p.plan.data_parallel),
               std::to_string(p.plan.micro_batch_size), std::to_string(p.plan.global_batch_size),
               std::to_string(p.plan.virtual_stages), simulator::to_string(p.plan.recompute),
               p.plan.sequence_parallel ? "1" : "0", p.plan.distributed_optimizer ? "1" : "0",
               std::to_string(p.plan.sharding_stage()), std::to_string(p.plan.shard_group_size()),
               p.plan.tp_comm_overlap ? "1" : "0", p.plan.overlap_grad_reduce ? "1" : "0",
               p.plan.overlap_param_gather ? "1" : "0", std::to_string(p.gpus_used), p.fits ? "1" : "0", num(p.iteration_time_s),
               num(p.mfu), num(p.peak_memory_bytes), num(p.tokens_per_s), p.fits ? num(d) : "",
               p.fits && v.cluster.usd_per_gpu_hour > 0
                   ? num(d * 24.0 * p.gpus_used * v.cluster.usd_per_gpu_hour)
                   : "",
               std::to_string(c.model.num_experts),
               num(c.active_params > 0 ? c.active_params : c.params),
               simulator::to_string(p.plan.precision), std::to_string(p.plan.context_parallel),
               std::to_string(p.plan.expert_parallel),
               std::to_string(p.plan.expert_tensor_parallel),
               num(mfu_precision_peak(p, v.cluster.gpu)),
               num(model_tflops_per_gpu(p, v.cluster.gpu))});
  }
  return t.csv();
}

std::string days_vs_params_svg(const PlanReport& v) {
  const ResultTable& r = v.result;
  Plot plot;
  plot.title = "Training days vs model size";
  plot.x = {"parameters", true};
  plot.y = {"days (best plan)", true};
  PlotSeries ok{"finishes in time", SeriesKind::kScatter, {}, {}, "#2a7"};
  ok.marker = MarkerShape::kCircle;
  PlotSeries late{"misses the deadline", SeriesKind::kScatter, {}, {}, "#c33"};
  late.marker = MarkerShape::kCross;
  PlotSeries dear{"over budget", SeriesKind::kScatter, {}, {}, "#e80"};
  dear.marker = MarkerShape::kTriangle;
  // Stopped at a first feasible plan (CandidateRow::optimised false): its days
  // are at most that plan's, so drawn apart from the optimised rows.
  PlotSeries first{"in time (first feasible plan: at most)", SeriesKind::kScatter, {}, {},
                            "#7b7"};
  first.marker = MarkerShape::kDiamond;
  for (const CandidateRow& c : r.candidates) {
    if (c.best_plan < 0 || !(c.days > 0) || c.days > 1e9) continue;
    auto& s = c.feasible ? (c.optimised ? ok : first) : c.why == "budget" ? dear : late;
    s.x.push_back(c.params);
    s.y.push_back(c.days);
  }
  for (auto* s : {&ok, &first, &late, &dear}) {
    if (!s->x.empty()) plot.series.push_back(*s);
  }
  if (plot.series.empty()) return "";
  plot.references.push_back({ReferenceKind::kHorizontal, v.options.days, "deadline",
                             fmt::format("deadline {:g} d", v.options.days)});
  if (r.naive_params > 0 && !r.pinned) {
    plot.references.push_back({ReferenceKind::kVertical, r.naive_params, "naive Chinchilla N",
                               "naive N " + count_human(r.naive_params)});
  }
  if (r.best >= 0) {
    const CandidateRow& c = r.candidates[r.best];
    plot.highlights.push_back({c.params, c.days,
                               fmt::format("answer: {}, {} d", count_human(c.params), days_str(c.days)),
                               ""});
  }
  auto svg = render_svg(plot);
  return svg.ok() ? svg.value() : "";
}

std::string pareto_svg(const PlanReport& v) {
  const ResultTable& r = v.result;
  if (r.best < 0) return "";
  const CandidateRow& c = r.candidates[r.best];
  Plot plot;
  plot.title = "Plans for the chosen model: time vs GPU-hours";
  plot.x = {"days", true};
  plot.y = {"GPU-hours", true};
  PlotSeries all{"plans", SeriesKind::kScatter, {}, {}, "#999"};
  for (const PlanRow& p : r.plans) {
    if (p.shape != r.best || !p.fits || !(p.tokens_per_s > 0)) continue;
    const double d = p.days;
    all.x.push_back(d);
    all.y.push_back(d * 24 * p.gpus_used);
  }
  PlotSeries front{"Pareto front", SeriesKind::kLine, {}, {}, "#36c"};
  for (int i : r.pareto) {
    const double d = r.plans[i].days;
    front.x.push_back(d);
    front.y.push_back(d * 24 * r.plans[i].gpus_used);
  }
  if (all.x.empty()) return "";
  plot.series = {all, front};
  plot.references.push_back({ReferenceKind::kVertical, v.options.days, "deadline",
                             fmt::format("deadline {:g} d", v.options.days)});
  const PlanRow& chosen = r.plans[c.best_plan];
  plot.highlights.push_back({c.days, c.days * 24 * chosen.gpus_used,
                             "chosen: " + plan_label(chosen.plan), ""});
  auto svg = render_svg(plot);
  return svg.ok() ? svg.value() : "";
}

}  // namespace llmplan::reports

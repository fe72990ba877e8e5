// report.md, the planner's Markdown report (plan_report.h's
// plan_report_markdown), one function per section.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/version.h"
#include "reports/failures_report.h"
#include "reports/plan_report.h"
#include "reports/plan_report_internal.h"
#include "reports/format.h"
#include "reports/table.h"
#include "simulator/error_band.h"

namespace llmplan::reports {

using plan_report_internal::activation_name;
using plan_report_internal::band_text;
using plan_report_internal::candidate_table;
using plan_report_internal::days_str;
using plan_report_internal::usd_str;
using plan_report_internal::why_text;

namespace {

// Why the answer leaves GPUs idle (issue 25: from 16,384 to 32,768 GPUs the
// answer did not grow, without a word): the global batch bounds the layouts
// (every replica runs at least one micro-batch, p of them with a pipeline,
// so GPUs <= t x cp x B / b), or the wider layouts are slower (pipeline
// bubble, communication), dearer, or do not fit.
std::string fewer_gpus_text(const PlanReport& v, const CandidateRow& c, const PlanRow& chosen) {
  const SearchInputs& o = v.options;
  const ResultTable& r = v.result;
  std::string why;
  if (c.most_layout_gpus < o.gpus) {
    const std::string batch =
        c.batch_tokens > 0
            ? fmt::format(
                  "its global batch of {} tokens (the ladder's rung at or above its "
                  "compute-optimal batch of {} tokens{})",
                  count_human(c.batch_tokens),
                  count_human(c.optimal_batch_tokens),
                  c.batch_tokens >= o.batch_ladder_top_tokens ? ", capped at the ladder's top: no published run used more"
                                                          : "")
            : std::string("the listed global batch");
    why = fmt::format(
        "no layout of this model uses more than {} GPUs: {} gives each data-parallel replica at least "
        "one micro-batch (p of them with a pipeline), so t x cp x p x d <= t x cp x B / b",
        c.most_layout_gpus, batch);
  } else {
    const PlanRow* wider = nullptr;
    for (const PlanRow& q : r.plans) {
      if (&r.candidates[q.shape] != &c || !q.fits || q.gpus_used <= chosen.gpus_used) continue;
      if (wider == nullptr || q.tokens_per_s > wider->tokens_per_s) wider = &q;
    }
    if (wider == nullptr) {
      why = fmt::format("its layouts on more GPUs (up to {}) do not fit in memory", c.most_layout_gpus);
    } else if (wider->tokens_per_s <= chosen.tokens_per_s) {
      why = fmt::format(
          "its layouts on more GPUs are slower: the fastest, {} on {} GPUs, needs {} days (fewer "
          "micro-batches per replica: a larger pipeline bubble; more communication)",
          plan_label(wider->plan), wider->gpus_used, days_str(wider->days));
    } else {
      why = fmt::format("its faster layouts on more GPUs (the fastest: {} on {} GPUs, {} days) cost more",
                        plan_label(wider->plan), wider->gpus_used,
                        days_str(wider->days));
    }
  }
  return fmt::format("It uses {} of the {} GPUs: {}.\n\n", chosen.gpus_used, o.gpus, why);
}

// The MoE answer against the dense (llama) answer for the same budget.
std::string dense_comparison_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  const ResultTable& d = v.dense;
  const double price = v.cluster.usd_per_gpu_hour;
  std::string md = "## MoE vs dense for the same budget\n\n";
  Table t({"", "MoE answer", "dense answer (llama family)"});
  const CandidateRow* m = r.best >= 0 ? &r.candidates[r.best] : nullptr;
  const CandidateRow* n = d.best >= 0 ? &d.candidates[d.best] : nullptr;
  auto cell = [](const CandidateRow* c, auto f) { return c ? f(*c) : std::string("-"); };
  auto plan_of = [&](const ResultTable& res, const CandidateRow& c) -> const PlanRow& {
    return res.plans[c.best_plan];
  };
  t.add_row({"model", cell(m, [](const CandidateRow& c) { return c.model.name; }),
             cell(n, [](const CandidateRow& c) { return c.model.name; })});
  t.add_row({"parameters (total)", cell(m, [](const CandidateRow& c) { return count_human(c.params); }),
             cell(n, [](const CandidateRow& c) { return count_human(c.params); })});
  t.add_row({"parameters (active per token)",
             cell(m, [](const CandidateRow& c) { return count_human(c.active_params); }),
             cell(n, [](const CandidateRow& c) { return count_human(c.active_params); })});
  t.add_row({"tokens", cell(m, [](const CandidateRow& c) { return count_human(c.tokens); }),
             cell(n, [](const CandidateRow& c) { return count_human(c.tokens); })});
  t.add_row({"training compute (6 N_active D)",
             cell(m, [](const CandidateRow& c) { return fmt::format("{:.3g} FLOP", 6 * c.active_params * c.tokens); }),
             cell(n, [](const CandidateRow& c) { return fmt::format("{:.3g} FLOP", 6 * c.active_params * c.tokens); })});
  auto loss_cell = [&](const CandidateRow& c) {
    const scaling::LossInterval& in = c.loss_interval;
    return fmt::format("{:.3f} ({}{})", c.loss, v.options.law.name,
                       in.known ? fmt::format(", interval {:.3f}-{:.3f}", in.low, in.high)
                                : std::string(", uncertainty unknown"));
  };
  t.add_row({"predicted loss", cell(m, loss_cell), cell(n, loss_cell)});
  t.add_row({"plan", cell(m, [&](const CandidateRow& c) { return plan_label(plan_of(r, c).plan); }),
             cell(n, [&](const CandidateRow& c) { return plan_label(plan_of(d, c).plan); })});
  t.add_row({"days", cell(m, [](const CandidateRow& c) { return days_str(c.days); }),
             cell(n, [](const CandidateRow& c) { return days_str(c.days); })});
  t.add_row({"MFU (active FLOPs, 16-bit peak)", cell(m, [&](const CandidateRow& c) { return percent(plan_of(r, c).mfu); }),
             cell(n, [&](const CandidateRow& c) { return percent(plan_of(d, c).mfu); })});
  t.add_row({"model TFLOP/s per GPU (active FLOPs)",
             cell(m, [&](const CandidateRow& c) {
               return fmt::format("{:.0f}", model_tflops_per_gpu(plan_of(r, c), v.cluster.gpu));
             }),
             cell(n, [&](const CandidateRow& c) {
               return fmt::format("{:.0f}", model_tflops_per_gpu(plan_of(d, c), v.cluster.gpu));
             })});
  t.add_row({"cost", cell(m, [&](const CandidateRow& c) { return usd_str(c.cost_usd, price); }),
             cell(n, [&](const CandidateRow& c) { return usd_str(c.cost_usd, price); })});
  md += t.markdown() + "\n";
  if (m != nullptr && n != nullptr) {
    const DenseVerdict& verdict = v.verdict;
    md += fmt::format(
        "Both losses come from law {} ({}); the difference, {:+.3f}, is the law's prediction of "
        "what routing buys for this budget. {}\n\nInterval method: {}\n\n",
        v.options.law.name,
        v.options.law.joint.present ? "one joint law for dense and MoE models, the dense one at one expert"
                                    : "the dense answer's from its dense part, the MoE answer's at its "
                                      "effective parameter count",
        m->loss - n->loss, verdict.sentence, verdict.comparison.method);
  }
  return md;
}

// The title: the question the report answers.
std::string title_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  const SearchInputs& o = v.options;
  std::string md;
  if (r.pinned && !o.shapes.empty()) {
    md += fmt::format("# llmplan: how to train {} on {} x {} within {} days\n\n", o.shapes[0].name,
                      o.gpus, v.cluster.gpu.name, o.days);
  } else {
    md += fmt::format("# llmplan: the best model {} x {} can train in {} days\n\n", o.gpus,
                      v.cluster.gpu.name, o.days);
  }
  return md;
}

// "Question and assumptions": the cluster, budget, objective and law.
std::string question_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  const SearchInputs& o = v.options;
  const double price = v.cluster.usd_per_gpu_hour;
  std::string md;
  md += "## Question and assumptions\n\n";
  md += fmt::format("- Cluster: {} ({} GPUs per node, {} peak bf16 per GPU){}\n", v.cluster.name,
                    v.cluster.gpus_per_node, fmt::format("{:.0f} TFLOP/s", v.cluster.gpu.peak_bf16_flops / 1e12),
                    price > 0 ? fmt::format(", {}/GPU-hour", usd_human(price)) : "");
  if (o.pricing.stated) md += pricing_markdown(o.pricing);
  md += fmt::format("- Up to {} GPUs for {} days{} (the planner may use fewer GPUs)\n", o.gpus, o.days,
                    o.budget_usd > 0 ? ", budget " + usd_human(o.budget_usd) : "");
  md += fmt::format("- Objective: {}; law: {}; tokens: {}\n",
                    r.pinned                         ? "the pinned model's fastest plan"
                    : o.training.target_loss > 0 ? "least lifetime (training + inference) compute"
                    : o.training.unique_tokens > 0 ? "lowest data-constrained loss"
                    : !o.loss_objective ? "largest model"
                                                         : "lowest predicted loss",
                    v.law_name,
                    o.training.tokens > 0 ? fmt::format("exactly {} (--tokens)", count_human(o.training.tokens))
                    : o.training.target_loss > 0 ? "those reaching the compute-optimal answer's loss (--inference-tokens)"
                    : o.trains_to_deadline      ? "as many as finish in time"
                    : o.tokens_use_law                           ? "law's compute-optimal D for N"
                                       : fmt::format("{} per {}parameter", o.tokens_per_param,
                                                     o.family == "moe" ? "active " : ""));
  if (o.law.joint.present) {
    md += fmt::format(
        "- MoE law ({}): one joint law for dense and MoE models (Ludziejewski et al. 2025, eq. 6): "
        "loss from active parameters, tokens and experts / top-k (E = 1: dense); tokens and "
        "compute count active parameters (C = 6 N_active D). Fitted on: {}\n",
        o.law.name, o.law.joint.assumption.empty() ? std::string("(not stated)") : o.law.joint.assumption);
  }
  if (o.law.moe.present) {
    md += fmt::format(
        "- MoE law ({}): an MoE model's loss is the law's dense loss at its effective parameter "
        "count (Clark et al. 2022: the dense size of equal loss, from active parameters and "
        "experts / top-k); tokens and compute count active parameters (C = 6 N_active D). Fitted "
        "on: {}\n",
        o.law.name, o.law.moe.assumption.empty() ? std::string("(not stated)") : o.law.moe.assumption);
  }
  return md;
}

// The assumptions' line on the shapes searched (pinned, --shapes, a family grid).
std::string shapes_line(const PlanReport& v) {
  const ResultTable& r = v.result;
  const SearchInputs& o = v.options;
  std::string md;
  if (r.pinned && !o.shapes.empty()) {
    md += fmt::format("- Model (pinned): {}: {}\n", o.shapes[0].name, architecture_line(o.shapes[0]));
  } else if (!o.shapes.empty()) {
    md += fmt::format("- Shapes: {} from --shapes (architecture of each in candidates.csv)\n",
                      o.shapes.size());
  } else if (o.family == "moe") {
    const simulator::Model& t = o.shape_template;
    std::vector<std::string> layouts;
    for (const MoeLayout& c : o.moe_layouts) {
      layouts.push_back(fmt::format("{} experts top-{} of {} h{}", c.experts, c.top_k,
                                    c.expert_ffn_per_hidden,
                                    c.shared_experts > 0 ? " + 1 shared" : ""));
    }
    md += fmt::format(
        "- Shapes: moe family grid (active sizes x {:g} apart, refined around the answer), every "
        "layer MoE, expert layouts {}; head dim 128, GQA with 8 KV heads, SwiGLU, RoPE, untied "
        "embeddings, dropless softmax routing, seq {}, vocab {}\n",
        o.moe_grid_step, fmt::join(layouts, "; "), t.seq_length, t.vocab_size);
  } else {
    const simulator::Model& t = o.shape_template;
    md += fmt::format("- Shapes: {} family grid, head dim 128: {}{}, {}, {} embeddings, seq {}, vocab {}\n",
                      o.family,
                      o.family == "llama" ? "GQA with 8 KV heads, FFN 8/3 h (multiple of 256) " :
                                                   "FFN 4h ",
                      activation_name(t),
                      t.positions == simulator::PositionEmbedding::kRotary ? "RoPE" : "learned positions",
                      t.tied_embeddings ? "tied" : "untied", t.seq_length, t.vocab_size);
  }
  return md;
}

// The assumptions' plan space, error band, failure model and notes.
std::string band_lines(const PlanReport& v) {
  const ResultTable& r = v.result;
  const SearchInputs& o = v.options;
  std::string md;
  md += "- Plan space: " + o.plan_space + "\n";
  if (const BandRow& b = answer_band(v); b.known) {
    const bool pooled = b.group == simulator::kPooledBandKey;
    md += fmt::format(
        "- Error band: measured/predicted iteration time P{:.0f} {:.3f}, P{:.0f} {:.3f} "
        "({:+.1f} % .. {:+.1f} %) from {} held-out runs {}: {} ({}){}\n",
        b.p_low * 100, b.low_ratio, b.p_high * 100, b.high_ratio, 100 * (b.low_ratio - 1),
        100 * (b.high_ratio - 1), b.samples,
        pooled ? (!o.band_has_cells || r.best < 0
                      ? "of all kinds"
                      : "of all kinds (no group like the answer's plan has enough)")
               : "like the answer's plan",
        b.group, b.source,
        b.confidence > 0
            ? fmt::format("; --confidence {}: days x the ratio at {} of each plan's band (the "
                          "answer's: {:.3f}) must meet the deadline",
                          b.confidence, b.confidence, b.confidence_ratio)
            : "");
  } else {
    md += fmt::format("- Error band: unknown ({} has no validation data)\n", v.cluster.gpu.name);
  }
  md += failures_assumption_line(o.reliability, v.cluster.gpus_per_node, v.cluster.gpu.name);
  for (const std::string& n : v.notes) md += "- " + n + "\n";
  return md;
}

// "Answer": the answer (or why there is none), with the dense verdict of --family moe.
std::string answer_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  const SearchInputs& o = v.options;
  const double price = v.cluster.usd_per_gpu_hour;
  std::string md;
  md += "\n## Answer\n\n";
  // --family moe: the verdict first; when the dense answer has the lower
  // predicted loss it is the headline (loss_verdict.h), the MoE follows.
  if (const DenseVerdict& dv = v.verdict; dv.available) {
    if (dv.headline == "dense") {
      const CandidateRow& n = v.dense.candidates[v.dense.best];
      const PlanRow& np = v.dense.plans[n.best_plan];
      md += fmt::format(
          "**Dense wins: {} parameters** ({}) trained on **{} tokens** in **{} days** with plan "
          "**{}** on {} of {} GPUs, cost {}, predicted loss {:.3f}: lower than the MoE answer "
          "below.\n\n",
          count_human(n.params), n.model.name, count_human(n.tokens), days_str(n.days),
          plan_label(np.plan), np.gpus_used, o.gpus, usd_str(n.cost_usd, price), n.loss);
    }
    md += dv.sentence + "\n\n";
    if (dv.headline == "dense") md += "The MoE answer of the moe family:\n\n";
  }
  if (r.best < 0) {
    if (r.pinned) {
      const CandidateRow& c = r.candidates.front();
      md += fmt::format("**No plan for the pinned model**: {} ({}).\n\n", c.model.name, why_text(c, v));
    } else {
      md += "**No feasible model**: no candidate finishes its tokens by the deadline";
      md += o.budget_usd > 0 ? " within the budget" : "";
      md += " with a plan that fits in memory.\n\n";
    }
  } else {
    const CandidateRow& c = r.candidates[r.best];
    const PlanRow& p = r.plans[c.best_plan];
    md += fmt::format(
        "**{} parameters** ({}) trained on **{} tokens** in **{} days** ({}) with plan **{}** "
        "on {} of {} GPUs: iteration {}, {}, cost {}, predicted loss {:.3f}.\n\n",
        c.model.is_moe() ? fmt::format("{} ({} active)", count_human(c.params),
                                       count_human(c.active_params))
                         : count_human(c.params),
        c.model.name, count_human(c.tokens), days_str(c.days),
        band_text(c), plan_label(p.plan), p.gpus_used, o.gpus,
        seconds_human(p.iteration_time_s), mfu_text(p, v.cluster.gpu),
        usd_str(c.cost_usd, price) +
            (answer_band(v).known && price > 0
                 ? fmt::format(" (P{:.0f}–P{:.0f} {}–{})", answer_band(v).p_low * 100,
                               answer_band(v).p_high * 100,
                               usd_human(c.cost_usd * answer_band(v).low_ratio),
                               usd_human(c.cost_usd * answer_band(v).high_ratio))
                 : ""),
        c.loss);
    md += "Architecture: " + architecture_line(c.model) + ".\n\n";
    if (const scaling::LossInterval& in = c.loss_interval; in.known) {
      md += fmt::format("Predicted loss {:.3f}, interval {:.3f}-{:.3f} ({:.0f} %; {}).\n\n", c.loss,
                        in.low, in.high, in.level * 100, in.method);
    } else {
      md += fmt::format("Predicted loss {:.3f}; its uncertainty is {}.\n\n", c.loss, in.method);
    }
    if (!r.pinned && p.gpus_used < o.gpus) md += fewer_gpus_text(v, c, p);
    if (r.pinned) {
      md += c.feasible ? fmt::format("The pinned model **meets** the {}-day deadline{}.\n\n", o.days,
                                     o.budget_usd > 0 ? " within the budget" : "")
                       : fmt::format("The pinned model **does not meet** the deadline: {}.\n\n",
                                     why_text(c, v));
    }
  }
  return md;
}

// Where the chosen plan's time and memory go (its full simulation).
std::string chosen_plan_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  std::string md;
  if (r.best >= 0 && v.best_report != nullptr) {
    const simulator::StepReport& s = *v.best_report;
    const simulator::StageBreakdown& t = s.breakdown;
    md += "## The chosen plan: where the time and memory go\n\n";
    md += fmt::format("Critical pipeline stage {} of {}, per iteration of {}:\n\n", s.critical_stage,
                      r.plans[r.candidates[r.best].best_plan].plan.pipeline_parallel,
                      seconds_human(s.iteration_time_s));
    Table bt({"time", "seconds", "share"});
    auto row = [&](const char* name, double x) {
      bt.add_row({name, fmt::format("{:.3f}", x),
                  s.iteration_time_s > 0 ? percent(x / s.iteration_time_s) : "-"});
    };
    row("compute (forward + backward)", t.compute_s);
    row("recompute", t.recompute_s);
    row("tensor-parallel communication", t.tp_comm_s);
    row("pipeline transfers (exposed)", t.pp_exposed_s);
    row("pipeline bubble", t.bubble_s);
    row("data-parallel communication (exposed)", t.dp_exposed_s);
    if (t.cp_comm_s > 0) row("context-parallel KV exchange (exposed)", t.cp_comm_s);
    if (t.moe_a2a_s > 0) row("MoE dispatch + combine all-to-all (exposed)", t.moe_a2a_s);
    row("optimizer step", t.optimizer_s);
    if (t.fp8_cast_s > 0) {
      const bool fp4 = r.plans[r.candidates[r.best].best_plan].plan.precision ==
                       simulator::Precision::kNvfp4;
      row(fp4 ? "NVFP4 casts" : "FP8 casts",
          t.fp8_cast_s);
    }
    row("host overhead", t.host_overhead_s);
    md += bt.markdown() + "\n";
    if (!s.stages.empty()) {
      const simulator::MemoryBreakdown* worst = &s.stages[0].memory;
      for (const auto& st : s.stages) {
        if (st.memory.total_bytes() > worst->total_bytes()) worst = &st.memory;
      }
      Table mt({"memory (worst stage)", "bytes"});
      mt.add_row({"weights, gradients, optimizer state", bytes_human(worst->weights_and_optimizer_bytes)});
      mt.add_row({"sharding working set (gathered parameters, gradients in flight)",
                  bytes_human(worst->sharded_working_bytes)});
      mt.add_row({"stored activations", bytes_human(worst->activation_bytes)});
      mt.add_row({"recompute working set", bytes_human(worst->recompute_bytes)});
      if (worst->context_parallel_bytes > 0) {
        mt.add_row({"context-parallel KV buffers",
                    bytes_human(worst->context_parallel_bytes)});
      }
      if (worst->moe_buffer_bytes > 0) {
        mt.add_row({"MoE dispatch / combine buffers", bytes_human(worst->moe_buffer_bytes)});
      }
      mt.add_row({"logits", bytes_human(worst->logits_bytes)});
      mt.add_row({"allocator fragmentation", bytes_human(worst->fragmentation_bytes)});
      mt.add_row({"reserved (CUDA, NCCL, workspaces)", bytes_human(worst->reserved_bytes)});
      mt.add_row({"total / capacity", bytes_human(worst->total_bytes()) + " / " +
                                          bytes_human(v.cluster.gpu.hbm_bytes)});
      md += mt.markdown() + "\n";
    }
  }
  return md;
}

// "Naive vs simulated" and the top candidates (not for a pinned model).
std::string naive_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  const SearchInputs& o = v.options;
  std::string md;
  if (!r.pinned) {
    md += "## Naive vs simulated\n\n";
    Table nv({"", "naive (100% of peak)", "simulated"});
    const CandidateRow* best = r.best >= 0 ? &r.candidates[r.best] : nullptr;
    nv.add_row({"compute", fmt::format("{:.3g} FLOP", r.naive_flops),
                best ? fmt::format("{:.3g} FLOP (6ND{})", 6.0 * best->active_params * best->tokens,
                           best->model.is_moe() ? ", N active" : "")
             : "-"});
    nv.add_row({"parameters", count_human(r.naive_params), best ? count_human(best->params) : "-"});
    nv.add_row({"tokens", count_human(r.naive_tokens), best ? count_human(best->tokens) : "-"});
    nv.add_row({"days for the naive model", fmt::format("{} (assumed)", o.days),
                r.naive_candidate < 0 ? "not simulated (--shapes)"
                : r.naive_days > 0    ? days_str(r.naive_days) + " (simulated)"
                                      : "no plan fits"});
    nv.add_row({"days for the answer", "-", best ? days_str(best->days) : "-"});
    md += nv.markdown() + "\n";
    if (r.naive_days > o.days) {
      md += fmt::format("The naive Chinchilla model assumes every FLOP of peak is usable; simulated, "
                        "it needs {} days, {:.1f}x the deadline.\n\n",
                        days_str(r.naive_days), r.naive_days / o.days);
    }
    if (v.has_dense) md += dense_comparison_markdown(v);
    md += "## Top candidates\n\n" + candidate_table(v, false).markdown() + "\n";
    {
      // Candidates whose loss differs from the answer's by less than the
      // law's uncertainty (paired draws): not ranked by the third decimal.
      std::vector<std::string> close;
      for (int i = 0; i < static_cast<int>(r.candidates.size()); ++i) {
        if (r.candidates[i].feasible && r.candidates[i].loss_vs_answer == "indistinguishable") {
          close.push_back(fmt::format("{} ({:.3f})", r.candidates[i].model.name, r.candidates[i].loss));
        }
      }
      if (!close.empty()) {
        md += fmt::format("Feasible candidates indistinguishable from the answer by predicted loss "
                          "(within law {}'s uncertainty, paired): {}.\n\n",
                          o.law.name, fmt::join(close, ", "));
      }
    }
  }
  return md;
}

// The time-cost Pareto front of the chosen model's plans.
std::string pareto_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  const double price = v.cluster.usd_per_gpu_hour;
  std::string md;
  md += "## Time-cost Pareto front of plans for the chosen model\n\n";
  const std::vector<int>& front = r.pareto;
  if (front.empty()) {
    md += "(no chosen model)\n\n";
  } else {
    Table pt({"plan", "GPUs", "iteration", "days", "MFU (16-bit peak)",
              "MFU (own precision's peak)", "model TFLOP/s per GPU", "GPU-hours", "cost"});
    for (int i : front) {
      const PlanRow& p = r.plans[i];
      const double d = p.days;
      pt.add_row({plan_label(p.plan), std::to_string(p.gpus_used), seconds_human(p.iteration_time_s),
                  days_str(d), percent(p.mfu), percent(mfu_precision_peak(p, v.cluster.gpu)),
                  fmt::format("{:.0f}", model_tflops_per_gpu(p, v.cluster.gpu)),
                  count_human(d * 24 * p.gpus_used),
                  usd_str(d * 24 * p.gpus_used * price, price)});
    }
    md += pt.markdown() + "\n";
  }
  return md;
}

// "Why larger models failed" (not for a pinned model).
std::string failed_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  const SearchInputs& o = v.options;
  std::string md;
  if (!r.pinned) {
    md += "## Why larger models failed\n\n";
    int shown = 0;
    for (int i = r.best + 1; i < static_cast<int>(r.candidates.size()) && shown < 6; ++i) {
      const CandidateRow& c = r.candidates[i];
      if (c.feasible) continue;
      ++shown;
      const std::string counts =
          fmt::format("{} layouts, {} dropped by the memory estimate, {} simulated, {} fit memory, "
                      "{} in time",
                      c.layouts, c.memory_pruned, c.plans_evaluated, c.plans_fit, c.plans_in_time);
      if (c.why == "no-layout") {
        md += fmt::format("- {} ({}): the plan space has no layout for {} GPUs ({})\n",
                          count_human(c.params), c.model.name, o.gpus, counts);
      } else if (c.why == "memory") {
        md += fmt::format("- {} ({}): no plan fits in {} of GPU memory ({})\n", count_human(c.params),
                          c.model.name, bytes_human(v.cluster.gpu.hbm_bytes), counts);
      } else {
        md += fmt::format("- {} ({}): {} days at best ({}), {} ({})\n", count_human(c.params),
                          c.model.name, days_str(c.days),
                          c.best_plan >= 0 ? plan_label(r.plans[c.best_plan].plan) : "-",
                          c.why == "budget" ? "over budget" : "misses the deadline", counts);
      }
    }
    if (shown == 0) md += "- (none larger were evaluated)\n";
    md += "\n";
  }
  return md;
}

// The plots, the counts of simulated and pruned plans, the command and version.
std::string closing_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  std::string md;
  md += "## Plots\n\n";
  if (v.plots_written) {
    if (!days_vs_params_svg(v).empty()) md += "![Training days vs model size](days_vs_params.svg)\n\n";
    if (!pareto_svg(v).empty()) md += "![Plans for the chosen model: time vs GPU-hours](pareto.svg)\n\n";
  } else {
    md += "`--out DIR` writes days_vs_params.svg and pareto.svg beside report.md.\n\n";
  }
  md += fmt::format("{} candidate shapes and {} plans simulated.\n\n", r.candidates.size(),
                    r.plans_evaluated);
  if (r.pruning_off.empty()) {
    md += fmt::format(
        "Pruned without simulation (an iteration-time lower bound proved they cannot be their "
        "model's best plan; the answer's model had every plan simulated; `--exhaustive` "
        "simulates all): {} whose bound misses the deadline or budget, {} that cannot beat their "
        "model's best plan.\n\n",
        r.plans_pruned_deadline, r.plans_pruned_incumbent);
    if (r.plans_pruned_answer > 0) {
      md += fmt::format(
          "Not simulated because their model ranks below a feasible model, so cannot change the "
          "answer: {} plans (each such model stopped at its first feasible plan: its row, \"ok "
          "(first feasible plan)\", shows that plan's days, at most its best; `--exact-rows` "
          "optimises every row).\n\n",
          r.plans_pruned_answer);
    }
  }
  if (!v.command_line.empty()) md += "Command: `" + command_line_text(v.command_line) + "`\n";
  md += "Version: " + version_line("llmplan") + "\n";
  return md;
}

// The answer's "## Failures, checkpoints and goodput" ("" when the failure
// model is off or there is no answer).
std::string answer_failures_markdown(const PlanReport& v) {
  const ResultTable& r = v.result;
  if (!v.options.reliability.enabled || r.best < 0) return "";
  const CandidateRow& c = r.candidates[r.best];
  return failures_markdown(c.goodput, r.answer_distribution, v.options.reliability,
                           r.plans[c.best_plan].gpus_used);
}

}  // namespace

std::string plan_report_markdown(const PlanReport& v) {
  std::string md;
  md += title_markdown(v);
  md += question_markdown(v);
  md += shapes_line(v);
  md += band_lines(v);
  md += answer_markdown(v);
  md += training_objective_markdown(v);  // --tokens, --unique-tokens, --inference-tokens
  md += answer_failures_markdown(v);
  if (!v.caveats.empty()) {
    md += "## Caveats\n\n";
    for (const simulator::Caveat& c : v.caveats) md += "- " + c.text + " (`" + c.code + "`)\n";
    md += "\n";
  }
  md += chosen_plan_markdown(v);
  md += "## Plan notation\n\n"
        "`t8 p4 d105 b1 B2100 v2 full SP ZeRO-1`: tensor parallel t, pipeline stages p, data-parallel "
        "replicas d (GPUs = t x p x d), micro-batch b sequences, global batch B sequences per step, "
        "v virtual stages per pipeline rank (interleaved 1F1B; absent: plain 1F1B), `full`/`selective` "
        "activation recomputation (absent: none), SP sequence parallelism, ZeRO-N state sharded over d "
        "(1: optimizer state, the distributed optimizer; 2: + gradients; 3: + parameters, FSDP), "
        "shardS hybrid sharding within groups of S data-parallel ranks, TPov tensor-parallel "
        "communication overlapped with GEMMs, PGov parameter all-gather overlapped with compute, "
        "noGRov gradient reduction not overlapped with backward, cpN context parallelism over N "
        "ranks (ring attention; cpNag: KV all-gather; GPUs = t x cp x p x d), zb-h1 the "
        "zero-bubble schedule, epN expert parallelism over N ranks (MoE; etpN expert tensor "
        "parallelism), A2Aov the MoE dispatch/combine all-to-all overlapped with compute, FP8 linear layers in FP8 with delayed scaling (FP8-current, "
        "FP8-mxfp8: those recipes), NVFP4 the same layers in NVFP4 (absent of both: bf16).\n\n";
  md += naive_markdown(v);
  md += pareto_markdown(v);
  md += failed_markdown(v);
  md += closing_markdown(v);
  return md;
}

}  // namespace llmplan::reports

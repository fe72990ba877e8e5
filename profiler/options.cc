#include "profiler/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "profiler/kernel_plan.h"
#include "simulator/profile_table_json.h"

namespace llmplan::profiler {
namespace {

using simulator::ProfileShape;

// The i-th model's value of a per-model list: empty -> `dflt`, one value ->
// that value, else the i-th.
int per_model(const std::vector<int>& v, size_t i, int dflt) {
  if (v.empty()) return dflt;
  return v.size() == 1 ? v[0] : v[i];
}

Status check_per_model(const std::vector<int>& v, size_t models, const char* flag,
                       const char* model_flag = "--hidden") {
  if (v.size() <= 1 || v.size() == models) return Status();
  return Status::invalid_argument(std::string(flag) + ": give one value, or one per " + model_flag +
                                  " (" + std::to_string(models) + "), not " +
                                  std::to_string(v.size()));
}

// The --moe-* flags as given.
struct MoeFlags {
  std::vector<int> hidden, experts, top_k, expert_ffn;
  std::vector<std::string> router;
  std::vector<int> local_experts, m, tokens;
  int64_t max_rows = 0;
  bool any() const {
    return !hidden.empty() || !experts.empty() || !top_k.empty() || !expert_ffn.empty() ||
           !router.empty() || !local_experts.empty() || !m.empty() || !tokens.empty() ||
           max_rows != 0;
  }
};

void add_moe_flags(CLI::App& app, bool* moe, MoeFlags* f) {
  app.add_flag("--moe", *moe,
               "measure the MoE kernel set (grouped expert GEMMs, router, token permutation) "
               "into its own JSON file instead of layer shapes");
  app.add_option("--moe-hidden", f->hidden, "MoE models' hidden sizes, one per model")
      ->delimiter(',');
  app.add_option("--moe-experts", f->experts, "routed experts E, one or one per model")
      ->delimiter(',');
  app.add_option("--moe-top-k", f->top_k, "experts per token k, one or one per model")
      ->delimiter(',');
  app.add_option("--moe-expert-ffn", f->expert_ffn, "expert FFN size f, one or one per model")
      ->delimiter(',');
  app.add_option("--moe-router", f->router, "softmax or sigmoid, one or one per model")
      ->delimiter(',')
      ->check(CLI::IsMember({"softmax", "sigmoid"}));
  app.add_option("--moe-local-experts", f->local_experts,
                 "local expert counts (swept; default 1,2,4,8,16,32)")
      ->delimiter(',');
  app.add_option("--moe-m", f->m,
                 "tokens per expert for the grouped GEMMs (swept; default "
                 "16,32,...,16384)")
      ->delimiter(',');
  app.add_option("--moe-tokens", f->tokens,
                 "tokens per rank T (swept; default 4096,8192): router and permutation, and the "
                 "balanced m = T*k/e of the grouped GEMMs")
      ->delimiter(',');
  app.add_option("--moe-max-rows", f->max_rows,
                 "at most this many rows (local experts x m) per grouped GEMM (default 65536)")
      ->check(CLI::PositiveNumber);
}

Result<MoeSettings> moe_settings(const MoeFlags& f) {
  MoeSettings s;
  if (f.hidden.empty()) return Status::invalid_argument("--moe-hidden: required with --moe");
  const size_t n = f.hidden.size();
  LLMPLAN_RETURN_IF_ERROR(check_per_model(f.experts, n, "--moe-experts", "--moe-hidden"));
  LLMPLAN_RETURN_IF_ERROR(check_per_model(f.top_k, n, "--moe-top-k", "--moe-hidden"));
  LLMPLAN_RETURN_IF_ERROR(check_per_model(f.expert_ffn, n, "--moe-expert-ffn", "--moe-hidden"));
  if (f.router.size() > 1 && f.router.size() != n) {
    return Status::invalid_argument("--moe-router: give one value, or one per --moe-hidden (" +
                                    std::to_string(n) + "), not " +
                                    std::to_string(f.router.size()));
  }
  for (const auto& [v, flag] :
       {std::pair{&f.experts, "--moe-experts"}, std::pair{&f.top_k, "--moe-top-k"},
        std::pair{&f.expert_ffn, "--moe-expert-ffn"}}) {
    if (v->empty()) return Status::invalid_argument(std::string(flag) + ": required with --moe");
  }
  for (size_t i = 0; i < n; ++i) {
    MoeModel m;
    m.hidden = f.hidden[i];
    m.experts = per_model(f.experts, i, 0);
    m.top_k = per_model(f.top_k, i, 0);
    m.expert_ffn = per_model(f.expert_ffn, i, 0);
    const std::string r = f.router.empty() ? "softmax" : f.router[f.router.size() == 1 ? 0 : i];
    m.score = r == "sigmoid" ? RouterScore::kSigmoid : RouterScore::kSoftmax;
    s.models.push_back(m);
  }
  if (!f.local_experts.empty()) s.local_experts = f.local_experts;
  if (!f.m.empty()) s.m_sweep = f.m;
  if (!f.tokens.empty()) s.tokens = f.tokens;
  if (f.max_rows != 0) s.max_rows = f.max_rows;
  LLMPLAN_RETURN_IF_ERROR(validate_moe_settings(s));
  return s;
}

}  // namespace

Result<std::vector<ProfileShape>> expand_shapes(const ShapeFlags& f,
                                                std::vector<std::string>* skipped) {
  if (f.hidden.empty()) return Status::invalid_argument("--hidden: required (or use --shapes)");
  if (f.heads.size() != f.hidden.size()) {
    return Status::invalid_argument("--heads: give one value per --hidden (" +
                                    std::to_string(f.hidden.size()) + ")");
  }
  LLMPLAN_RETURN_IF_ERROR(check_per_model(f.kv_heads, f.hidden.size(), "--kv-heads"));
  LLMPLAN_RETURN_IF_ERROR(check_per_model(f.ffn, f.hidden.size(), "--ffn"));
  LLMPLAN_RETURN_IF_ERROR(check_per_model(f.vocab, f.hidden.size(), "--vocab"));
  if (f.seq.empty()) return Status::invalid_argument("--seq: required (or use --shapes)");
  const std::vector<int> micro_batch = f.micro_batch.empty() ? std::vector<int>{1} : f.micro_batch;
  const std::vector<int> tp = f.tp.empty() ? std::vector<int>{1} : f.tp;
  std::vector<ProfileShape> out;
  for (size_t i = 0; i < f.hidden.size(); ++i) {
    for (int s : f.seq) {
      for (int b : micro_batch) {
        for (int t : tp) {
          ProfileShape shape;
          shape.hidden = f.hidden[i];
          shape.heads = f.heads[i];
          shape.kv_heads = per_model(f.kv_heads, i, 0);
          shape.ffn = per_model(f.ffn, i, 0);
          shape.vocab = per_model(f.vocab, i, 0);
          shape.seq = s;
          shape.micro_batch = b;
          shape.tp = t;
          shape.activation = f.activation;
          Status st = validate_shape(shape);
          if (st.ok()) {
            if (std::find(out.begin(), out.end(), shape) == out.end()) out.push_back(shape);
          } else if (skipped != nullptr) {
            skipped->push_back(describe_shape(shape) + ": " + st.message());
          }
        }
      }
    }
  }
  if (out.empty()) {
    return Status::invalid_argument("no valid layer shape among the flags' combinations" +
                                    std::string(skipped != nullptr && !skipped->empty()
                                                    ? " (first: " + skipped->front() + ")"
                                                    : ""));
  }
  return out;
}

namespace {

// What the flags hold before they become a ProfileOptions.
struct ProfileFlagValues {
  ShapeFlags f;
  std::string shapes_file;
  std::vector<std::string> precisions;
  std::string activation = "gelu";
  bool no_collectives = false;
  MoeFlags moe_flags;
};

// Declares every flag of llmplan-profile on `app`, writing into `o` and `v`.
void add_profile_flags(CLI::App& app, ProfileOptions& o, ProfileFlagValues& v) {
  app.add_flag("--version", o.show_version,
               "print the version and the git commit it was built from, and exit");
  app.add_flag("--list", o.list_only, "print what would be measured and exit; needs no GPU");
  app.add_option("--shapes", v.shapes_file,
                 "JSON file {\"shapes\": [{hidden, heads, seq, "
                 "micro_batch, tp, ...}]} instead of the shape flags");
  app.add_option("--hidden", v.f.hidden, "hidden sizes, one per model (comma-separated)")
      ->delimiter(',');
  app.add_option("--heads", v.f.heads, "attention heads, one per --hidden")->delimiter(',');
  app.add_option("--kv-heads", v.f.kv_heads, "kv heads (GQA), one or one per model; default heads")
      ->delimiter(',');
  app.add_option("--ffn", v.f.ffn, "FFN sizes, one or one per model; default 4*hidden")
      ->delimiter(',');
  app.add_option("--vocab", v.f.vocab, "vocabulary, one or one per model; measures the logits GEMM")
      ->delimiter(',');
  app.add_option("--activation", v.activation, "gelu or swiglu")
      ->check(CLI::IsMember({"gelu", "swiglu"}));
  app.add_option("--seq", v.f.seq, "sequence lengths (swept)")->delimiter(',');
  app.add_option("--micro-batch", v.f.micro_batch, "micro batch sizes (swept); default 1")
      ->delimiter(',');
  app.add_option("--tp", v.f.tp, "tensor-parallel degrees (swept); default 1")->delimiter(',');
  app.add_option("--precision", v.precisions,
                 "bf16, fp16 and/or fp8 (default bf16); fp8 measures the FP8 GEMMs, the FP8 "
                 "cast-transposes and the bf16 kernels FP8 training runs, and needs a GPU of "
                 "compute capability 8.9 or newer")
      ->delimiter(',')
      ->check(CLI::IsMember({"bf16", "fp16", "fp8"}));
  app.add_option("--warmup", o.warmup, "launches before timing (default 5)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--repeats", o.repeats, "timed launches per kernel (default 20)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--device", o.device, "GPU for the kernel measurements (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-collectives", v.no_collectives, "skip the NCCL measurements");
  app.add_option("--collective-min-bytes", o.collective_min_bytes, "default 1024")
      ->check(CLI::PositiveNumber);
  app.add_option("--collective-max-bytes", o.collective_max_bytes, "default 1073741824")
      ->check(CLI::PositiveNumber);
  app.add_option("-o,--output", o.output_path, "profile JSON to write (default profile.json)");
  add_moe_flags(app, &o.moe, &v.moe_flags);
}

// Turns the parsed flags into `o`: precisions, activation, collectives, and
// the shapes (MoE settings, a shapes file or the shape flags' combinations).
Result<ProfileOptions> finish_profile_options(ProfileOptions o, ProfileFlagValues& v) {
  o.collectives = !v.no_collectives;
  if (o.collective_min_bytes > o.collective_max_bytes) {
    return Status::invalid_argument("--collective-min-bytes exceeds --collective-max-bytes");
  }
  if (!v.precisions.empty()) {
    o.precisions.clear();
    for (const std::string& p : v.precisions) {
      simulator::Precision prec = simulator::Precision::kBf16;
      simulator::parse_precision(p, &prec);  // bf16, fp16 or fp8: CLI::IsMember admitted it
      if (std::find(o.precisions.begin(), o.precisions.end(), prec) == o.precisions.end()) {
        o.precisions.push_back(prec);
      }
    }
  }
  v.f.activation =
      v.activation == "swiglu" ? simulator::Activation::kSwiglu : simulator::Activation::kGelu;
  const bool any_shape_flag = !v.f.hidden.empty() || !v.f.heads.empty() || !v.f.seq.empty();
  if (!o.moe && v.moe_flags.any()) {
    return Status::invalid_argument("--moe-* flags need --moe");
  }
  if (o.moe) {
    if (any_shape_flag || !v.shapes_file.empty()) {
      return Status::invalid_argument(
          "--moe: give either the MoE flags or layer shapes (--hidden/--heads/--seq/--shapes)");
    }
    if (o.precisions != std::vector<simulator::Precision>{simulator::Precision::kBf16}) {
      return Status::invalid_argument("--moe: the MoE kernels are measured in bf16 only");
    }
    LLMPLAN_ASSIGN_OR_RETURN(o.moe_settings, moe_settings(v.moe_flags));
    return o;
  }
  if (!v.shapes_file.empty()) {
    if (any_shape_flag) {
      return Status::invalid_argument("--shapes: give either a shapes file or shape flags");
    }
    LLMPLAN_ASSIGN_OR_RETURN(o.shapes, simulator::read_profile_shapes_file(v.shapes_file));
    for (size_t i = 0; i < o.shapes.size(); ++i) {
      LLMPLAN_RETURN_IF_ERROR(
          validate_shape(o.shapes[i])
              .with_prefix(v.shapes_file + ": shapes[" + std::to_string(i) + "]"));
    }
  } else {
    LLMPLAN_ASSIGN_OR_RETURN(o.shapes, expand_shapes(v.f, &o.skipped_shapes));
  }
  return o;
}

}  // namespace

Result<ProfileOptions> parse_profile_args(int argc, const char* const* argv) {
  ProfileOptions o;
  ProfileFlagValues v;
  CLI::App app{
      "llmplan-profile: measure the kernels of transformer layers (cuBLAS GEMMs and memory-bound "
      "kernels, timed with CUPTI) and NCCL collectives on this machine's GPUs, and write a "
      "profile JSON that `llmplan --profile FILE` simulates with."};
  add_profile_flags(app, o, v);
  for (int i = 0; i < argc; ++i) o.command_line += (i > 0 ? " " : "") + std::string(argv[i]);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) return Status::invalid_argument(e.what());
    o.show_help = true;  // --help
    o.help_text = app.help();
    return o;
  }
  if (o.show_version) return o;
  return finish_profile_options(std::move(o), v);
}

Status check_gpu_precisions(const std::vector<simulator::Precision>& precisions,
                            const simulator::ProfileGpu& gpu, int device) {
  if (std::find(precisions.begin(), precisions.end(), simulator::Precision::kFp8) ==
      precisions.end()) {
    return Status();
  }
  int major = 0, minor = 0;
  if (std::sscanf(gpu.compute_capability.c_str(), "%d.%d", &major, &minor) != 2) {
    return Status::invalid_argument("--precision fp8: GPU " + std::to_string(device) + " (" +
                                    gpu.name + ") reports compute capability \"" +
                                    gpu.compute_capability + "\", not major.minor");
  }
  if (major * 10 + minor < 89) {
    return Status::invalid_argument(
        "--precision fp8: GPU " + std::to_string(device) + " (" + gpu.name +
        ") has compute capability " + gpu.compute_capability +
        "; FP8 tensor cores need 8.9 or newer (Ada, Hopper, Blackwell)");
  }
  return Status();
}

}  // namespace llmplan::profiler

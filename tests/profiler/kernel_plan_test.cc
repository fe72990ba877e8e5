#include "profiler/kernel_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <tuple>

#include "simulator/lowering.h"
#include "tests/simulator/test_models.h"

namespace llmplan::profiler {
namespace {

using simulator::GemmShape;
using simulator::KernelDesc;
using simulator::KernelKind;
using simulator::Pass;
using simulator::Precision;
using simulator::ProfileShape;

ProfileShape shape(int h, int a, int s, int b, int t) {
  ProfileShape p;
  std::tie(p.hidden, p.heads, p.seq, p.micro_batch, p.tp) = std::tie(h, a, s, b, t);
  return p;
}

const KernelJob* find(const std::vector<KernelJob>& jobs, KernelKind kind, Pass pass,
                      double bytes = -1) {
  for (const KernelJob& j : jobs) {
    if (j.desc.kind == kind && j.desc.pass == pass && (bytes < 0 || j.desc.bytes == bytes)) {
      return &j;
    }
  }
  return nullptr;
}

TEST(KernelPlan, GptLayerShapesFollowTheLoweringConventions) {
  // h 4096, 32 heads (d 128), s 2048, b 2, t 2.
  const std::vector<KernelJob> jobs =
      layer_kernel_jobs(shape(4096, 32, 2048, 2, 2), Precision::kBf16);
  struct Expect {
    KernelKind kind;
    GemmShape g;
  };
  for (const Expect& e : {Expect{KernelKind::kQkvGemm, {4096, 6144, 4096, 1}},
                          Expect{KernelKind::kAttnScoreGemm, {2048, 2048, 128, 32}},
                          Expect{KernelKind::kAttnValueGemm, {2048, 128, 2048, 32}},
                          Expect{KernelKind::kOutProjGemm, {4096, 4096, 2048, 1}},
                          Expect{KernelKind::kFc1Gemm, {4096, 8192, 4096, 1}},
                          Expect{KernelKind::kFc2Gemm, {4096, 4096, 8192, 1}}}) {
    for (Pass pass : {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeight}) {
      const KernelJob* j = find(jobs, e.kind, pass);
      ASSERT_NE(j, nullptr) << simulator::kernel_kind_name(e.kind) << " "
                            << simulator::pass_name(pass);
      EXPECT_EQ(j->desc.gemm, e.g) << simulator::kernel_kind_name(e.kind);
      EXPECT_EQ(j->desc.flops, 2.0 * e.g.m * e.g.n * e.g.k * e.g.batch);
    }
  }
  const double tokens = 2 * 2048, e = 2;
  // Layernorm at b*s rows and, for sequence parallelism, b*s/t rows.
  EXPECT_NE(find(jobs, KernelKind::kLayerNorm, Pass::kForward, 2 * tokens * 4096 * e), nullptr);
  EXPECT_NE(find(jobs, KernelKind::kLayerNorm, Pass::kForward, 2 * tokens / 2 * 4096 * e), nullptr);
  EXPECT_NE(find(jobs, KernelKind::kLayerNorm, Pass::kBackward, 3 * tokens * 4096 * e), nullptr);
  const double scores = 32.0 * 2048 * 2048;  // b*a/t * s * s
  const KernelJob* softmax = find(jobs, KernelKind::kSoftmax, Pass::kForward);
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->desc.bytes, 2 * scores * e);
  EXPECT_EQ(softmax->rows, 32 * 2048);
  EXPECT_EQ(softmax->cols, 2048);
  EXPECT_NE(find(jobs, KernelKind::kAttnDropout, Pass::kBackward, scores * (2 * e + 1)), nullptr);
  EXPECT_NE(find(jobs, KernelKind::kDropoutResidual, Pass::kForward, tokens * 4096 * (3 * e + 1)),
            nullptr);
  EXPECT_NE(find(jobs, KernelKind::kActivation, Pass::kBackward, tokens * 8192 * 3 * e), nullptr);
  // Adam over the layer's shard: 12h^2 + 13h parameters / t, 30 bytes each.
  const KernelJob* adam = find(jobs, KernelKind::kOptimizerStep, Pass::kForward);
  ASSERT_NE(adam, nullptr);
  EXPECT_EQ(adam->cols, (12LL * 4096 * 4096 + 13 * 4096) / 2);
  EXPECT_EQ(adam->desc.bytes, 30.0 * adam->cols);
  // Flash attention, causal, keyed like the lowering's op: the score GEMM's
  // shape, 4*heads*s*s*d FLOPs forward and 2.5x that backward.
  const KernelJob* flash_fwd = find(jobs, KernelKind::kFlashAttention, Pass::kForward);
  const KernelJob* flash_bwd = find(jobs, KernelKind::kFlashAttention, Pass::kBackward);
  ASSERT_NE(flash_fwd, nullptr);
  ASSERT_NE(flash_bwd, nullptr);
  EXPECT_EQ(flash_fwd->desc.gemm, (GemmShape{2048, 2048, 128, 32}));
  EXPECT_EQ(flash_fwd->desc.flops, 4.0 * 32 * 2048 * 2048 * 128);
  EXPECT_EQ(flash_bwd->desc.flops, 2.5 * flash_fwd->desc.flops);
  // Not measured: embedding, cross entropy, no vocab -> no logits; no FP8 casts at bf16.
  for (KernelKind k : {KernelKind::kEmbedding, KernelKind::kCrossEntropy, KernelKind::kLogitsGemm,
                       KernelKind::kFp8CastTranspose}) {
    EXPECT_EQ(find(jobs, k, Pass::kForward), nullptr) << simulator::kernel_kind_name(k);
  }
  for (const KernelJob& j : jobs) EXPECT_EQ(j.desc.precision, Precision::kBf16);
}

bool is_linear(KernelKind k) {
  return k == KernelKind::kQkvGemm || k == KernelKind::kOutProjGemm || k == KernelKind::kFc1Gemm ||
         k == KernelKind::kFc2Gemm;
}

TEST(KernelPlan, Fp8ListsFp8LinearGemmsCastsAndTheBf16Rest) {
  // h 4096, 32 heads (d 128), s 2048, b 2, t 2, vocab 32000.
  ProfileShape s = shape(4096, 32, 2048, 2, 2);
  s.vocab = 32000;
  const std::vector<KernelJob> bf16 = layer_kernel_jobs(s, Precision::kBf16);
  const std::vector<KernelJob> fp8 = layer_kernel_jobs(s, Precision::kFp8);
  // Every bf16 job has its FP8-training counterpart: the same key, with the
  // linear GEMMs under fp8 and the rest still under bf16.
  for (const KernelJob& b : bf16) {
    const Precision want = is_linear(b.desc.kind) ? Precision::kFp8 : Precision::kBf16;
    const bool found = std::any_of(fp8.begin(), fp8.end(), [&](const KernelJob& j) {
      return j.desc.kind == b.desc.kind && j.desc.pass == b.desc.pass && j.desc.precision == want &&
             j.desc.gemm == b.desc.gemm && j.desc.bytes == b.desc.bytes;
    });
    EXPECT_TRUE(found) << simulator::kernel_kind_name(b.desc.kind) << " "
                       << simulator::pass_name(b.desc.pass);
  }
  size_t casts = 0;
  for (const KernelJob& j : fp8) {
    if (j.desc.kind == KernelKind::kFp8CastTranspose) {
      ++casts;
      EXPECT_EQ(j.desc.precision, Precision::kFp8);
      EXPECT_EQ(j.desc.bytes, 4.0 * j.rows * j.cols);  // 2N read, N + N written
      EXPECT_TRUE(j.desc.pass == Pass::kForward || j.desc.pass == Pass::kBackward);
    } else if (is_linear(j.desc.kind)) {
      EXPECT_EQ(j.desc.precision, Precision::kFp8) << simulator::kernel_kind_name(j.desc.kind);
    } else {
      EXPECT_EQ(j.desc.precision, Precision::kBf16) << simulator::kernel_kind_name(j.desc.kind);
    }
  }
  EXPECT_EQ(fp8.size(), bf16.size() + casts);
  // Inputs b*s x h (qkv, fc1), b*s x h/t (out_proj), b*s x f/t (fc2), the
  // qkv gradient b*s x (a+2g)d/t, at b*s and (sequence parallel) b*s/t rows.
  const double tokens = 2 * 2048;
  for (double n : {tokens * 4096, tokens * 2048, tokens * 8192, tokens * 6144, tokens / 2 * 4096}) {
    for (Pass pass : {Pass::kForward, Pass::kBackward}) {
      EXPECT_NE(find(fp8, KernelKind::kFp8CastTranspose, pass, 4 * n), nullptr) << n;
    }
  }
  // Listed together, bf16 and fp8 share their bf16 kernels.
  const std::vector<KernelJob> both = plan_kernel_jobs({s}, {Precision::kBf16, Precision::kFp8});
  size_t linear = 0;
  for (const KernelJob& b : bf16) linear += is_linear(b.desc.kind) ? 1 : 0;
  EXPECT_EQ(linear, 12u);  // 4 GEMMs x 3 passes
  EXPECT_EQ(both.size(), bf16.size() + linear + casts);
}

TEST(KernelPlan, GqaSwigluAndVocab) {
  ProfileShape s = shape(4096, 32, 1024, 1, 4);
  s.kv_heads = 8;
  s.ffn = 11008;
  s.vocab = 32000;
  s.activation = simulator::Activation::kSwiglu;
  const std::vector<KernelJob> jobs = layer_kernel_jobs(s, Precision::kFp16);
  EXPECT_EQ(find(jobs, KernelKind::kQkvGemm, Pass::kForward)->desc.gemm,
            (GemmShape{1024, (32 + 16) * 128 / 4, 4096, 1}));
  EXPECT_EQ(find(jobs, KernelKind::kFc1Gemm, Pass::kForward)->desc.gemm,
            (GemmShape{1024, 2 * 11008 / 4, 4096, 1}));
  EXPECT_EQ(find(jobs, KernelKind::kLogitsGemm, Pass::kBackwardWeight)->desc.gemm,
            (GemmShape{1024, 8000, 4096, 1}));
  const KernelJob* act = find(jobs, KernelKind::kActivation, Pass::kForward);
  EXPECT_TRUE(act->swiglu);
  EXPECT_EQ(act->desc.bytes, 1024.0 * 2752 * 3 * 2);
  EXPECT_EQ(find(jobs, KernelKind::kActivation, Pass::kBackward)->desc.bytes,
            1024.0 * 2752 * 5 * 2);
  for (const KernelJob& j : jobs) EXPECT_EQ(j.desc.precision, Precision::kFp16);
}

TEST(KernelPlan, PlanRemovesDuplicatesAcrossShapes) {
  // b=2,t=2 and b=1,t=1 give the same attention work per GPU (b*a/t = 16
  // heads of s x s): those jobs are listed once.
  const ProfileShape a = shape(1024, 16, 512, 2, 2), b = shape(1024, 16, 512, 1, 1);
  const size_t na = layer_kernel_jobs(a, Precision::kBf16).size();
  const size_t nb = layer_kernel_jobs(b, Precision::kBf16).size();
  const std::vector<KernelJob> both = plan_kernel_jobs({a, b}, {Precision::kBf16});
  EXPECT_LT(both.size(), na + nb);
  for (size_t i = 0; i < both.size(); ++i) {
    for (size_t j = i + 1; j < both.size(); ++j) {
      const KernelDesc &x = both[i].desc, &y = both[j].desc;
      const bool same = x.kind == y.kind && x.pass == y.pass && x.precision == y.precision &&
                        (simulator::is_shape_keyed(x.kind) ? x.gemm == y.gemm : x.bytes == y.bytes);
      EXPECT_FALSE(same) << i << " " << j;
    }
  }
  // Both precisions: twice the jobs.
  EXPECT_EQ(plan_kernel_jobs({a, b}, {Precision::kBf16, Precision::kFp16}).size(), 2 * both.size());
}

// A CostModel that records what the simulator's lowering asks for.
class RecordingModel : public simulator::CostModel {
 public:
  double kernel_time_s(const KernelDesc& k) const override {
    asked.push_back(k);
    return 1e-6;
  }
  double collective_time_s(const simulator::CollectiveDesc&) const override { return 1e-6; }
  double microbatch_overhead_s() const override { return 0; }
  double iteration_overhead_s() const override { return 0; }
  std::string describe() const override { return "recording"; }
  mutable std::vector<KernelDesc> asked;
};

// One layer configuration of the coverage tests: the model and plan the
// lowering sees, and the profiler shape that describes the same layer.
struct CoverageCase {
  simulator::Model model;
  simulator::Plan plan;
  ProfileShape shape;
  std::string name;
};

std::vector<CoverageCase> coverage_cases(Precision precision) {
  std::vector<CoverageCase> out;
  for (bool swiglu : {false, true}) {
    for (bool sp : {false, true}) {
      for (bool flash : {false, true}) {
        CoverageCase c;
        c.model = simulator::testing::gpt(2, 1024, 16, 512, 32000);
        c.model.name.clear();
        if (swiglu) {
          c.model.activation = simulator::Activation::kSwiglu;
          c.model.ffn_hidden_size = 2816;
          c.model.num_kv_heads = 4;
          c.model.linear_bias = false;
        }
        c.plan = simulator::testing::layout_plan(2, 1, 1, 4);
        c.plan.micro_batch_size = 2;
        c.plan.flash_attention = flash;
        c.plan.sequence_parallel = sp;
        c.plan.precision = precision;
        c.shape = shape(1024, 16, 512, 2, 2);
        c.shape.vocab = 32000;
        c.shape.kv_heads = c.model.num_kv_heads;
        c.shape.ffn = c.model.ffn_hidden_size;
        c.shape.activation = c.model.activation;
        c.name = std::string(simulator::to_string(precision)) + " swiglu=" + (swiglu ? "1" : "0") +
                 " sp=" + (sp ? "1" : "0") + " flash=" + (flash ? "1" : "0");
        out.push_back(c);
      }
    }
  }
  return out;
}

// The kernels lower_chunk asks the cost model for, over the whole chunk.
std::vector<KernelDesc> lowering_lookups(const CoverageCase& c) {
  simulator::Cluster cluster;
  cluster.gpus_per_node = 8;
  EXPECT_TRUE(simulator::validate(c.model, c.plan).ok()) << c.name;
  RecordingModel rec;
  simulator::lower_chunk(c.model, c.plan, simulator::place(c.plan, cluster), rec, 0);
  EXPECT_FALSE(rec.asked.empty()) << c.name;
  return rec.asked;
}

// True when `jobs` has an entry with the key a ProfileTable looks `k` up
// by: kind, pass, precision and the GEMM shape or the bytes.
bool covered(const std::vector<KernelJob>& jobs, const KernelDesc& k) {
  return std::any_of(jobs.begin(), jobs.end(), [&](const KernelJob& j) {
    return j.desc.kind == k.kind && j.desc.pass == k.pass && j.desc.precision == k.precision &&
           (simulator::is_shape_keyed(k.kind) ? j.desc.gemm == k.gemm : j.desc.bytes == k.bytes);
  });
}

std::string describe(const KernelDesc& k) {
  std::ostringstream o;
  o << simulator::kernel_kind_name(k.kind) << " " << simulator::pass_name(k.pass) << " "
    << simulator::to_string(k.precision) << " m=" << k.gemm.m << " n=" << k.gemm.n
    << " k=" << k.gemm.k << " batch=" << k.gemm.batch << " bytes=" << k.bytes;
  return o.str();
}

// Outside the transformer layer: the profiler does not measure them.
bool outside_layer(const KernelDesc& k) {
  return k.kind == KernelKind::kEmbedding || k.kind == KernelKind::kCrossEntropy;
}

TEST(KernelPlan, CoversEveryKernelTheLoweringLooksUp) {
  for (Precision precision : {Precision::kBf16, Precision::kFp16}) {
    for (const CoverageCase& c : coverage_cases(precision)) {
      const std::vector<KernelJob> jobs = layer_kernel_jobs(c.shape, precision);
      for (const KernelDesc& k : lowering_lookups(c)) {
        if (outside_layer(k)) continue;
        EXPECT_TRUE(covered(jobs, k)) << c.name << ": " << describe(k);
      }
    }
  }
}

// FP8 training as the simulator lowers it (Transformer Engine's recipe): the
// bf16 layer's lookups with the linear GEMMs under fp8, plus one
// fp8_cast_transpose per linear GEMM input (forward) and per incoming
// gradient (backward), at the rows the GEMM runs on or, with sequence
// parallelism, before the all-gather (b*s/t rows). Derived here from the
// lowering's own bf16 lookups, so a change of shapes there is caught.
TEST(KernelPlan, Fp8CoversTheLinearGemmsCastsAndBf16KernelsOfTheLowering) {
  std::vector<CoverageCase> bf16_cases = coverage_cases(Precision::kBf16);
  for (CoverageCase& c : bf16_cases) {
    const std::vector<KernelJob> jobs = layer_kernel_jobs(c.shape, Precision::kFp8);
    const int64_t t = c.plan.tensor_parallel;
    for (KernelDesc k : lowering_lookups(c)) {
      if (outside_layer(k)) continue;
      if (!is_linear(k.kind)) {
        EXPECT_TRUE(covered(jobs, k)) << c.name << ": " << describe(k);
        continue;
      }
      k.precision = Precision::kFp8;
      EXPECT_TRUE(covered(jobs, k)) << c.name << ": " << describe(k);
      if (k.pass != Pass::kForward) continue;
      // Input [m, k] forward, gradient [m, n] backward; also at m/t rows.
      for (int64_t rows : {k.gemm.m, k.gemm.m / t}) {
        if (rows == k.gemm.m / t && !c.plan.sequence_parallel) continue;
        KernelDesc cast;
        cast.kind = KernelKind::kFp8CastTranspose;
        cast.precision = Precision::kFp8;
        cast.pass = Pass::kForward;
        cast.bytes = 4.0 * static_cast<double>(rows * k.gemm.k);
        EXPECT_TRUE(covered(jobs, cast)) << c.name << ": " << describe(cast);
        cast.pass = Pass::kBackward;
        cast.bytes = 4.0 * static_cast<double>(rows * k.gemm.n);
        EXPECT_TRUE(covered(jobs, cast)) << c.name << ": " << describe(cast);
      }
    }
  }
}

// The same against the lowering itself with plan.precision = fp8: every
// kernel it looks up (FP8 GEMMs, casts, bf16 attention / logits / norms) is
// a job of `llmplan-profile --precision fp8`. Needs a lowering that lowers
// FP8 (it emits fp8_cast_transpose ops); one that does not has nothing to
// check yet and the test says so.
TEST(KernelPlan, Fp8CoversEveryKernelTheFp8LoweringLooksUp) {
  for (const CoverageCase& c : coverage_cases(Precision::kFp8)) {
    const std::vector<KernelDesc> asked = lowering_lookups(c);
    const bool lowers_fp8 = std::any_of(asked.begin(), asked.end(), [](const KernelDesc& k) {
      return k.kind == KernelKind::kFp8CastTranspose;
    });
    if (!lowers_fp8) GTEST_SKIP() << "the simulator's lowering emits no FP8 casts yet";
    const std::vector<KernelJob> jobs = layer_kernel_jobs(c.shape, Precision::kFp8);
    size_t fp8_gemms = 0;
    for (const KernelDesc& k : asked) {
      if (outside_layer(k)) continue;
      EXPECT_TRUE(covered(jobs, k)) << c.name << ": " << describe(k);
      fp8_gemms += is_linear(k.kind) && k.precision == Precision::kFp8 ? 1 : 0;
    }
    EXPECT_GT(fp8_gemms, 0u) << c.name;
  }
}

TEST(KernelPlan, ValidateShapeNamesTheField) {
  EXPECT_TRUE(validate_shape(shape(1024, 16, 512, 1, 2)).ok());
  EXPECT_NE(validate_shape(shape(1000, 16, 512, 1, 1)).message().find("shape.heads"),
            std::string::npos);
  EXPECT_NE(validate_shape(shape(1024, 16, 512, 1, 3)).message().find("shape.tp"),
            std::string::npos);
  ProfileShape s = shape(1024, 16, 512, 1, 1);
  s.kv_heads = 3;
  EXPECT_NE(validate_shape(s).message().find("shape.kv_heads"), std::string::npos);
  s = shape(1024, 16, 512, 0, 1);
  EXPECT_NE(validate_shape(s).message().find("shape.micro_batch"), std::string::npos);
}

TEST(KernelPlan, CollectiveSweep) {
  const std::vector<double> sizes = collective_sizes(1024, 1 << 30);
  ASSERT_EQ(sizes.size(), 21u);  // 1 KiB .. 1 GiB
  EXPECT_EQ(sizes.front(), 1024);
  EXPECT_EQ(sizes.back(), 1 << 30);
  EXPECT_EQ(collective_group_sizes(8), (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(collective_group_sizes(6), (std::vector<int>{2, 4, 6}));
  EXPECT_EQ(collective_group_sizes(2), (std::vector<int>{2}));
  EXPECT_TRUE(collective_group_sizes(1).empty());
}

TEST(KernelPlan, FormatPlanListsEveryJobOnItsOwnLine) {
  const std::vector<ProfileShape> shapes = {shape(1024, 16, 512, 1, 2)};
  const std::vector<KernelJob> jobs = plan_kernel_jobs(shapes, {Precision::kBf16});
  const std::string text = format_plan(shapes, jobs, collective_sizes(1024, 1 << 30), true);
  std::istringstream in(text);
  std::string line;
  size_t kernel_lines = 0;
  while (std::getline(in, line)) {
    if (line.rfind("  ", 0) == 0 && line.find("bf16") != std::string::npos) ++kernel_lines;
  }
  EXPECT_EQ(kernel_lines, jobs.size());
  EXPECT_NE(text.find("kernels (" + std::to_string(jobs.size()) + "):"), std::string::npos);
  EXPECT_NE(text.find("  qkv_gemm          bwd_data   bf16 m=512 n=1536 k=1024 batch=1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("21 sizes from 1 KiB to 1 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("  flash_attention   bwd        bf16 m=512 n=512 k=64 batch=8"),
            std::string::npos)
      << text;
  EXPECT_NE(format_plan(shapes, jobs, {}, false).find("collectives: not measured"),
            std::string::npos);
}

}  // namespace
}  // namespace llmplan::profiler

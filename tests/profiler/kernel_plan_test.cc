#include "profiler/kernel_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "simulator/lowering.h"

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
  p.hidden = h;
  p.heads = a;
  p.seq = s;
  p.micro_batch = b;
  p.tp = t;
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
  // Not measured: flash attention, embedding, cross entropy, and no vocab -> no logits.
  for (KernelKind k : {KernelKind::kFlashAttention, KernelKind::kEmbedding,
                       KernelKind::kCrossEntropy, KernelKind::kLogitsGemm}) {
    EXPECT_EQ(find(jobs, k, Pass::kForward), nullptr) << simulator::kernel_kind_name(k);
  }
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

TEST(KernelPlan, CoversEveryKernelTheLoweringLooksUp) {
  simulator::Cluster cluster;
  cluster.gpus_per_node = 8;
  for (bool swiglu : {false, true}) {
    for (bool sp : {false, true}) {
      simulator::Model model;
      model.num_layers = 2;
      model.hidden_size = 1024;
      model.num_heads = 16;
      model.seq_length = 512;
      model.vocab_size = 32000;
      if (swiglu) {
        model.activation = simulator::Activation::kSwiglu;
        model.ffn_hidden_size = 2816;
        model.num_kv_heads = 4;
        model.linear_bias = false;
      }
      simulator::Plan plan;
      plan.tensor_parallel = 2;
      plan.micro_batch_size = 2;
      plan.global_batch_size = 4;
      plan.flash_attention = false;
      plan.sequence_parallel = sp;
      ASSERT_TRUE(simulator::validate(model, plan).ok());
      RecordingModel rec;
      simulator::lower_chunk(model, plan, simulator::place(plan, cluster), rec, 0);
      ASSERT_FALSE(rec.asked.empty());

      ProfileShape s = shape(1024, 16, 512, 2, 2);
      s.vocab = 32000;
      s.kv_heads = model.num_kv_heads;
      s.ffn = model.ffn_hidden_size;
      s.activation = model.activation;
      const std::vector<KernelJob> jobs = layer_kernel_jobs(s, Precision::kBf16);
      for (const KernelDesc& k : rec.asked) {
        if (k.kind == KernelKind::kEmbedding || k.kind == KernelKind::kCrossEntropy) continue;
        const bool covered = std::any_of(jobs.begin(), jobs.end(), [&](const KernelJob& j) {
          return j.desc.kind == k.kind && j.desc.pass == k.pass &&
                 j.desc.precision == k.precision &&
                 (simulator::is_shape_keyed(k.kind) ? j.desc.gemm == k.gemm
                                                    : j.desc.bytes == k.bytes);
        });
        EXPECT_TRUE(covered) << "swiglu=" << swiglu << " sp=" << sp << ": "
                             << simulator::kernel_kind_name(k.kind) << " "
                             << simulator::pass_name(k.pass) << " m=" << k.gemm.m
                             << " n=" << k.gemm.n << " k=" << k.gemm.k << " batch=" << k.gemm.batch
                             << " bytes=" << k.bytes;
      }
    }
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
  EXPECT_NE(text.find("flash_attention not measured"), std::string::npos);
  EXPECT_NE(format_plan(shapes, jobs, {}, false).find("collectives: not measured"),
            std::string::npos);
}

}  // namespace
}  // namespace llmplan::profiler

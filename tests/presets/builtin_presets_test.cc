// The built-in presets, read through the Catalog: they load, validate, and
// carry the reference figures of DESIGN.md section 9 and the papers.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "presets/catalog.h"
#include "scaling/law.h"
#include "simulator/cluster.h"
#include "simulator/model.h"
#include "simulator/roofline.h"
#include "tests/presets/test_catalog.h"

namespace llmplan::presets {
namespace {

using fixtures::builtin;

TEST(BuiltinPresets, EveryPresetLoadsAndValidates) {
  const Catalog catalog = builtin();
  std::set<std::string> names;
  for (const PresetInfo& info : catalog.list()) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate " << info.name;
    EXPECT_EQ(info.origin, "built-in");
    EXPECT_FALSE(info.description.empty()) << info.name;
    Status s;
    switch (info.kind) {
      case PresetKind::kGpu:
        s = catalog.gpu(info.name).status();
        break;
      case PresetKind::kCluster: {
        Result<simulator::Cluster> c = catalog.cluster(info.name);
        s = c.ok() ? simulator::validate(*c) : c.status();
        break;
      }
      case PresetKind::kModel: {
        Result<simulator::Model> m = catalog.model(info.name);
        s = m.ok() ? simulator::validate(*m) : m.status();
        if (m.ok()) {
          EXPECT_EQ(m->name, info.name);
        }
        break;
      }
      case PresetKind::kLaw: {
        Result<scaling::LossLaw> l = catalog.law(info.name);
        s = l.ok() ? scaling::validate(*l) : l.status();
        break;
      }
      case PresetKind::kPrice:
        s = catalog.price(info.name).status();
        break;
      case PresetKind::kCollectives:
        s = catalog.collectives(info.name).status();
        break;
    }
    EXPECT_TRUE(s.ok()) << info.name << ": " << s.message();
    EXPECT_TRUE(catalog.show(info.name).ok()) << info.name;
  }
  for (const char* name :
       {"a100-40gb",     "a100-80gb",     "h100-sxm",      "h200-sxm",      "b200",
        "dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100",      "dgx-h200",      "dgx-b200",
        "gpt3-175b",     "mt-nlg-530b",   "bloom-176b",    "llama2-7b",     "llama2-13b",
        "llama2-70b",    "llama3-8b",     "llama3-70b",    "llama3-405b",   "chinchilla-70b",
        "aws-p4d-2024",  "aws-p4d-2025",  "aws-p4de-2024", "aws-p4de-2025", "aws-p5-2024",
        "aws-p5-2025",   "aws-p5en-2024", "aws-p5en-2025"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
}

TEST(BuiltinPresets, ModelParameterCountsMatchThePapers) {
  const Catalog catalog = builtin();
  struct Case {
    const char* name;
    double params;
  };
  // Published or released-checkpoint counts.
  for (const Case& c :
       {Case{"llama2-7b", 6.74e9}, Case{"llama2-13b", 13.02e9}, Case{"llama2-70b", 68.98e9},
        Case{"llama3-8b", 8.03e9}, Case{"llama3-70b", 70.55e9}, Case{"llama3-405b", 405.9e9},
        Case{"gpt3-175b", 174.6e9}, Case{"mt-nlg-530b", 530e9}, Case{"bloom-176b", 176.2e9}}) {
    Result<simulator::Model> m = catalog.model(c.name);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_NEAR(static_cast<double>(m->parameter_count()) / c.params, 1.0, 0.01) << c.name;
  }
  // Chinchilla's relative-position projections are not describable (see the
  // preset's note): about 8% below the published 70B.
  Result<simulator::Model> chinchilla = catalog.model("chinchilla-70b");
  ASSERT_TRUE(chinchilla.ok());
  EXPECT_NEAR(static_cast<double>(chinchilla->parameter_count()) / 64.7e9, 1.0, 0.01);
}

TEST(BuiltinPresets, ModelFamiliesHaveTheirArchitecture) {
  const Catalog catalog = builtin();
  for (const char* name : {"gpt3-175b", "mt-nlg-530b"}) {
    simulator::Model m = *catalog.model(name);
    EXPECT_EQ(m.positions, simulator::PositionEmbedding::kLearned) << name;
    EXPECT_EQ(m.activation, simulator::Activation::kGelu) << name;
    EXPECT_EQ(m.ffn_hidden(), 4 * m.hidden_size) << name;
    EXPECT_TRUE(m.tied_embeddings && m.linear_bias) << name;
  }
  for (const char* name :
       {"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b"}) {
    simulator::Model m = *catalog.model(name);
    EXPECT_EQ(m.positions, simulator::PositionEmbedding::kRotary) << name;
    EXPECT_EQ(m.activation, simulator::Activation::kSwiglu) << name;
    EXPECT_FALSE(m.tied_embeddings || m.linear_bias) << name;
    EXPECT_EQ(m.head_dim(), 128) << name;
  }
  EXPECT_EQ(catalog.model("llama2-7b")->kv_heads(), 32);
  EXPECT_EQ(catalog.model("llama2-70b")->kv_heads(), 8);
  EXPECT_EQ(catalog.model("llama3-405b")->kv_heads(), 8);
}

TEST(BuiltinPresets, GpusCarryTheDatasheetFigures) {
  const Catalog catalog = builtin();
  struct Case {
    const char* name;
    double tflops, hbm_gb, hbm_tb_per_s, nvlink_gb_per_s, tdp_w;
    int sms;
  };
  // DESIGN.md section 9. Memory: the datasheet's GB, except where the
  // memory CUDA reports is known (nvidia-smi's total: 81920 MiB on an A100
  // 80GB, 81559 MiB on an H100 80GB, 143771 MiB on an H200, 183359 MiB on a B200,
  // 189471 MiB on a GB200; presets/gpus.json).
  constexpr double kMiB = 1024.0 * 1024.0;
  for (const Case& c : {Case{"a100-40gb", 312, 40, 1.555, 600, 400, 108},
                        Case{"a100-80gb", 312, 81920 * kMiB / 1e9, 2.039, 600, 400, 108},
                        Case{"h100-sxm", 989, 81559 * kMiB / 1e9, 3.35, 900, 700, 132},
                        Case{"h200-sxm", 989, 143771 * kMiB / 1e9, 4.8, 900, 700, 132},
                        Case{"b200", 2250, 183359 * kMiB / 1e9, 7.7, 1800, 1000, 148},
                        Case{"gb200", 2500, 189471 * kMiB / 1e9, 8, 1800, 1200, 152},
                        Case{"b300", 2250, 270, 7.7, 1800, 1100, 148},
                        Case{"gb300", 2500, 279, 8, 1800, 1400, 152}}) {
    Result<simulator::GpuSpec> g = catalog.gpu(c.name);
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_DOUBLE_EQ(g->peak_bf16_flops, c.tflops * 1e12) << c.name;
    EXPECT_DOUBLE_EQ(g->peak_fp16_flops, g->peak_bf16_flops) << c.name;
    EXPECT_NEAR(g->hbm_bytes, c.hbm_gb * 1e9, 1) << c.name;
    EXPECT_DOUBLE_EQ(g->hbm_bytes_per_s, c.hbm_tb_per_s * 1e12) << c.name;
    EXPECT_DOUBLE_EQ(g->nvlink_bytes_per_s, c.nvlink_gb_per_s * 1e9) << c.name;
    EXPECT_DOUBLE_EQ(g->tdp_w, c.tdp_w) << c.name;
    EXPECT_EQ(g->num_sms, c.sms) << c.name;
    EXPECT_EQ(g->name, c.name);
  }
}

TEST(BuiltinPresets, ClustersResolveTheirGpuAndPrice) {
  const Catalog catalog = builtin();
  struct Case {
    const char* cluster;
    const char* gpu;
    double nic_bytes_per_s;
    const char* price;  // nullptr: unknown
  };
  for (const Case& c : {Case{"dgx-a100-40gb", "a100-40gb", 25e9, "aws-p4d-2025"},
                        Case{"dgx-a100-80gb", "a100-80gb", 25e9, "aws-p4de-2025"},
                        Case{"dgx-h100", "h100-sxm", 50e9, "aws-p5-2025"},
                        Case{"dgx-h200", "h200-sxm", 50e9, "aws-p5en-2025"},
                        Case{"dgx-b200", "b200", 50e9, "aws-p6-b200-2026"}}) {
    Result<simulator::Cluster> cl = catalog.cluster(c.cluster);
    ASSERT_TRUE(cl.ok()) << cl.status().message();
    EXPECT_EQ(cl->gpu, *catalog.gpu(c.gpu)) << c.cluster;
    EXPECT_EQ(cl->gpus_per_node, 8);
    EXPECT_EQ(cl->nvlink_domain(), 8) << c.cluster;
    EXPECT_EQ(cl->num_nodes, 0);
    EXPECT_DOUBLE_EQ(cl->nic_bytes_per_s, c.nic_bytes_per_s) << c.cluster;
    const double usd = c.price ? catalog.price(c.price)->usd_per_gpu_hour : 0.0;
    EXPECT_DOUBLE_EQ(cl->usd_per_gpu_hour, usd) << c.cluster;
  }
}

// Blackwell: every GPU has its dense FP8 and FP4 peaks (datasheet, sparse /
// 2) and block scaling; b300/gb300 are derived from b200/gb200, never fitted;
// b200 and gb200 are calibrated (data/blackwell).
TEST(BuiltinPresets, BlackwellGpusCarryFp8AndFp4PeaksAndTheDerivedOnesSaySo) {
  const Catalog catalog = builtin();
  struct Case {
    const char* name;
    double fp8_pflops, fp4_pflops;
    const char* derived_from;  // "" = not derived
  };
  for (const Case& c : {Case{"b200", 4.5, 9, ""}, Case{"gb200", 5, 10, ""},
                        Case{"b300", 4.5, 13.5, "b200"}, Case{"gb300", 5, 15, "gb200"}}) {
    Result<simulator::GpuSpec> g = catalog.gpu(c.name);
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_DOUBLE_EQ(g->peak_fp8_flops, c.fp8_pflops * 1e15) << c.name;
    EXPECT_DOUBLE_EQ(g->peak_fp4_flops, c.fp4_pflops * 1e15) << c.name;
    EXPECT_TRUE(g->fp8_block_scaling) << c.name;
    // b200 and gb200 are calibrated on data/blackwell (their latest
    // releases); the derived ones never are.
    EXPECT_EQ(g->validation.calibrated, std::string(c.derived_from).empty()) << c.name;
    EXPECT_EQ(g->validation.derived_from, c.derived_from) << c.name;
    // A cited BF16 GEMM ceiling (MAMF) below 1; the NVFP4 GEMM (pytorch/ao's
    // B200 benchmark) and attention (FlashAttention-4) ceilings cited since
    // the restricted dense fit (#26) needs them as bounds.
    EXPECT_GT(g->ceilings.gemm_efficiency, 0.7) << c.name;
    EXPECT_LT(g->ceilings.gemm_efficiency, 0.8) << c.name;
    EXPECT_LT(g->ceilings.fp8_gemm_efficiency, 0.8) << c.name;
    EXPECT_DOUBLE_EQ(g->ceilings.fp4_gemm_efficiency, 0.611) << c.name;
    EXPECT_DOUBLE_EQ(g->ceilings.flash_attention_efficiency, 0.717) << c.name;
  }
  // A derived GPU carries its source's Roofline constants.
  EXPECT_EQ(catalog.gpu("b300")->roofline, catalog.gpu("b200")->roofline);
  EXPECT_EQ(catalog.gpu("gb300")->roofline, catalog.gpu("gb200")->roofline);
  // Older GPUs have no FP4 tensor cores.
  EXPECT_EQ(catalog.gpu("h100-sxm")->peak_fp4_flops, 0.0);
}

// Rack-scale clusters: a node is a 4-GPU compute tray, the NVLink domain the
// 72-GPU rack; DGX nodes are their own domain. NICs: 400 Gb/s ConnectX-7 on
// B200/GB200, 800 Gb/s ConnectX-8 on B300/GB300. Every one has a price.
TEST(BuiltinPresets, BlackwellClustersHaveTheirDomainNicAndPrice) {
  const Catalog catalog = builtin();
  struct Case {
    const char* cluster;
    const char* gpu;
    int gpus_per_node, domain;
    double nic_bytes_per_s;
    const char* price;
  };
  for (const Case& c : {Case{"dgx-b200", "b200", 8, 8, 50e9, "aws-p6-b200-2026"},
                        Case{"gb200-nvl72", "gb200", 4, 72, 50e9, "coreweave-gb200-nvl72-2025"},
                        Case{"dgx-b300", "b300", 8, 8, 100e9, "market-b300-2026"},
                        Case{"gb300-nvl72", "gb300", 4, 72, 100e9, "market-b300-2026"}}) {
    Result<simulator::Cluster> cl = catalog.cluster(c.cluster);
    ASSERT_TRUE(cl.ok()) << cl.status().message();
    EXPECT_EQ(cl->gpu, *catalog.gpu(c.gpu)) << c.cluster;
    EXPECT_EQ(cl->gpus_per_node, c.gpus_per_node) << c.cluster;
    EXPECT_EQ(cl->nvlink_domain(), c.domain) << c.cluster;
    EXPECT_DOUBLE_EQ(cl->nic_bytes_per_s, c.nic_bytes_per_s) << c.cluster;
    // NVLink 5: 900 GB/s per direction per GPU.
    EXPECT_DOUBLE_EQ(cl->gpu.nvlink_bytes_per_s / 2, 900e9) << c.cluster;
    Result<Price> p = catalog.price(c.price);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_GT(p->usd_per_gpu_hour, 0) << c.price;
    EXPECT_FALSE(p->date.empty()) << c.price;
    EXPECT_DOUBLE_EQ(cl->usd_per_gpu_hour, p->usd_per_gpu_hour) << c.cluster;
  }
  // $113.93 per p6-b200.48xlarge instance-hour / 8; $42.00 per 4-GPU gb200-4x.
  EXPECT_NEAR(catalog.price("aws-p6-b200-2026")->usd_per_gpu_hour * 8, 113.93, 0.01);
  EXPECT_NEAR(catalog.price("coreweave-gb200-nvl72-2025")->usd_per_gpu_hour * 4, 42.0, 1e-9);
}

TEST(BuiltinPresets, A100ClustersCarryVtrainAllReduceCurves) {
  const Catalog catalog = builtin();
  for (const char* name : {"dgx-a100-40gb", "dgx-a100-80gb"}) {
    Result<simulator::Cluster> c = catalog.cluster(name);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->collectives.name, "a100-nvswitch-vtrain");
    ASSERT_EQ(c->collectives.all_reduce.size(), 7u) << name;
    for (int n = 2; n <= 8; ++n) {
      const simulator::InNodeCurve& curve = c->collectives.all_reduce[n - 2];
      EXPECT_EQ(curve.group_size, n);
      EXPECT_EQ(curve.curve.bytes.front(), 1 << 20);
      EXPECT_EQ(curve.curve.bytes.back(), 1 << 30);
    }
    // An 8-GPU in-node all-reduce takes vTrain's measured time: 1 MiB in
    // (92790 + 92150) / 2 ns (AR_GPU8_1M_1024M_LUT, first row), and the same
    // below 1 MiB (latency floor); 1 GiB in (8193000 + 8196400) / 2 ns.
    const simulator::Roofline roofline(*c);
    using simulator::CollectiveKind;
    EXPECT_NEAR(roofline.collective_time_s({CollectiveKind::kAllReduce, 1 << 20, {8, 8}}), 92.47e-6,
                1e-10);
    EXPECT_NEAR(roofline.collective_time_s({CollectiveKind::kAllReduce, 4096, {8, 8}}), 92.47e-6,
                1e-10);
    EXPECT_NEAR(roofline.collective_time_s({CollectiveKind::kAllReduce, 1 << 30, {8, 8}}),
                8194.7e-6, 1e-10);
    // Groups spanning nodes keep the alpha-beta formula.
    const simulator::CollectiveDesc wide{CollectiveKind::kAllReduce, 1 << 20, {64, 8}};
    EXPECT_DOUBLE_EQ(roofline.collective_time_s(wide), roofline.collectives().formula_time_s(wide));
  }
  // Other node types have no measured curves.
  for (const char* name : {"dgx-h100", "dgx-h200", "dgx-b200"}) {
    EXPECT_TRUE(catalog.cluster(name)->collectives.empty()) << name;
  }
}

TEST(BuiltinPresets, PricesAreInstancePricesOverEightGpus) {
  const Catalog catalog = builtin();
  struct Case {
    const char* name;
    double usd_per_instance_hour;
    const char* gpu;
  };
  // DESIGN.md section 9: AWS us-east on-demand, before -> after the mid-2025 cut.
  for (const Case& c :
       {Case{"aws-p4d-2024", 32.77, "a100-40gb"}, Case{"aws-p4d-2025", 21.96, "a100-40gb"},
        Case{"aws-p4de-2024", 40.97, "a100-80gb"}, Case{"aws-p4de-2025", 27.45, "a100-80gb"},
        Case{"aws-p5-2024", 98.32, "h100-sxm"}, Case{"aws-p5-2025", 55.04, "h100-sxm"},
        Case{"aws-p5en-2024", 84.80, "h200-sxm"}, Case{"aws-p5en-2025", 63.30, "h200-sxm"}}) {
    Result<Price> p = catalog.price(c.name);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_NEAR(p->usd_per_gpu_hour * 8, c.usd_per_instance_hour, 1e-9) << c.name;
    EXPECT_EQ(p->gpu, c.gpu);
    EXPECT_FALSE(p->date.empty());
    EXPECT_FALSE(p->instance.empty());
  }
}

}  // namespace
}  // namespace llmplan::presets

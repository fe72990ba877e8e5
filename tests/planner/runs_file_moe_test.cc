// The runs-file reader on mixture-of-experts rows: the MoE columns, layer
// patterns, sliding windows, the all-to-all overlap, every MoE row of
// data/h100/published_runs.csv, and validation grouped by model. The reader
// on dense rows: runs_file_test.cc.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/runs_file.h"
#include "planner/accuracy/runs_report.h"
#include "planner/cli/command.h"
#include "presets/catalog.h"
#include "base/strict_json.h"
#include "tests/planner/runs_file_rows.h"
#include "tests/planner/simulate_cli.h"

namespace llmplan::planner {
namespace {

using namespace runs_file_rows;  // the shared models table and rows

// A models table without the MoE columns still reads when every model is
// dense; an MoE model needs them (one-line errors naming line and column).
TEST(RunsFile, MoeColumnsAreRequiredOnlyForMoeModels) {
  const std::string dense_header =
      "model,layers,hidden,heads,kv_heads,head_dim,ffn,vocab,seq,activation,tied_embeddings,"
      "positions,linear_bias,norm,moe_experts\n";
  const std::string mpt = "mpt-7b,32,4096,32,32,128,16384,50368,2048,gelu,true,learned,true,"
                          "LayerNorm,0\n";
  Result<std::vector<PublishedRun>> r = read(kMptRow, dense_header + mpt);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->front().missing.empty());
  EXPECT_EQ(error_of(kMptRow, dense_header + mpt +
                                  "q,48,2048,32,4,128,6144,151936,4096,swiglu,false,rotary,"
                                  "false,RMSNorm,128\n"),
            "models.csv:3: column \"moe_experts\": model \"q\" has 128 experts but the table "
            "has no column \"moe_top_k\"");
  const std::string moe = "q,48,2048,32,4,128,6144,151936,4096,swiglu,false,rotary,false,"
                          "RMSNorm,128,";
  EXPECT_EQ(error_of(kMptRow, std::string(kModelsHeader) + moe + "129,768,0,every layer\n"),
            "models.csv:2: column \"moe_top_k\": must be from 1 to moe_experts (128), got 129");
  EXPECT_EQ(error_of(kMptRow, std::string(kModelsHeader) + moe + "0,768,0,every layer\n"),
            "models.csv:2: column \"moe_top_k\": must be from 1 to moe_experts (128), got 0");
  EXPECT_EQ(error_of(kMptRow, std::string(kModelsHeader) +
                                  "mpt-7b,32,4096,32,32,128,16384,50368,2048,gelu,true,learned,"
                                  "true,LayerNorm,0,8,0,0,dense\n"),
            "models.csv:2: column \"moe_top_k\": must be 0 for a model without experts "
            "(moe_experts 0), got 8");
  EXPECT_NE(error_of(kMptRow, std::string(kModelsHeader) + moe + "8,-1,0,every layer\n")
                .find("models.csv:2: column \"moe_expert_ffn\": must be non-negative"),
            std::string::npos);
}

// The layer pattern: every layer, every k-th, the first n dense; anything
// else is listed as missing rather than guessed. ep > 1 on a dense model is
// listed too.
TEST(RunsFile, MoeLayerPatterns) {
  const auto model_of = [](const std::string& pattern) {
    const std::string models = std::string(kModelsHeader) +
                               "m,24,2048,16,16,128,8192,50000,4096,swiglu,false,rotary,false,"
                               "RMSNorm,64,6,1024,2," + pattern + "\n";
    return read("m_row,src,x,8,8,m,4096,bf16,1,1,1,1,8,4,zero1,1,64,none,unstated,3.0\n",
                models);
  };
  Result<std::vector<PublishedRun>> r = model_of("every layer MoE (moe_layer_freq 1)");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->front().missing.empty());
  simulator::Model m = r->front().config.model;
  EXPECT_EQ(m.num_experts, 64);
  EXPECT_EQ(m.moe_top_k, 6);
  EXPECT_EQ(m.moe_ffn_hidden(), 1024);
  EXPECT_EQ(m.moe_shared_experts, 2);
  EXPECT_EQ(m.num_moe_layers(), 24);
  r = model_of("every 2 layers");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->front().missing.empty());
  m = r->front().config.model;
  EXPECT_EQ(m.moe_layer_every, 2);
  EXPECT_EQ(m.num_moe_layers(), 12);
  EXPECT_TRUE(m.is_moe_layer(0));
  EXPECT_FALSE(m.is_moe_layer(1));
  r = model_of("\"first 3 layers dense, then every layer\"");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->front().missing.empty());
  m = r->front().config.model;
  EXPECT_EQ(m.moe_first_dense, 3);
  EXPECT_EQ(m.moe_layer_every, 1);
  EXPECT_FALSE(m.is_moe_layer(2));
  EXPECT_TRUE(m.is_moe_layer(3));
  EXPECT_EQ(m.num_moe_layers(), 21);
  r = model_of("\"interleaved with dense (pattern [1,0,0])\"");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->front().missing,
            std::vector<std::string>{"moe_layer_pattern interleaved with dense (pattern [1,0,0])"});
  // ep > 1 with a dense model.
  r = read("d_row,src,x,8,8,llama2-70b,4096,bf16,1,1,1,1,8,4,zero1,1,64,none,unstated,3.0\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->front().missing, std::vector<std::string>{"ep > 1 on a dense model"});
}

// The sliding window: from shape_notes (data/h100/models.csv states it only
// there) or from the optional columns, which take precedence.
TEST(RunsFile, SlidingWindowFromNotesOrColumns) {
  const std::string row = "o_row,src,x,8,8,o,4096,bf16,1,1,1,1,8,8,zero1,1,64,none,unstated,3.0\n";
  const std::string shape = "o,36,2880,64,8,64,2880,201088,4096,swiglu,false,rotary,true,RMSNorm,"
                            "128,4,2880,0,every layer MoE,";
  Result<std::vector<PublishedRun>> r =
      read(row, std::string(kModelsHeader).insert(std::string(kModelsHeader).size() - 1,
                                                   ",shape_notes") +
                    shape +
                    "\"Sliding-window attention (window 128) on alternating layers "
                    "(window_attn_skip_freq 2) and learnable softmax.\"\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->front().missing.empty());
  simulator::Model m = r->front().config.model;
  EXPECT_EQ(m.sliding_window, 128);
  EXPECT_EQ(m.full_attention_every, 2);
  EXPECT_TRUE(m.is_windowed_layer(0));
  EXPECT_FALSE(m.is_windowed_layer(1));
  EXPECT_EQ(m.attention_span(0), 128);
  EXPECT_EQ(m.attention_span(1), 4096);
  // No window stated: none.
  r = read(row, std::string(kModelsHeader).insert(std::string(kModelsHeader).size() - 1,
                                                   ",shape_notes") +
                    shape + "\"YaRN rotary.\"\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->front().config.model.sliding_window, 0);
  EXPECT_EQ(r->front().config.model.full_attention_every, 0);
  // Columns: every layer windowed (full_attention_every 0).
  r = read(row, std::string(kModelsHeader).insert(std::string(kModelsHeader).size() - 1,
                                                   ",sliding_window,full_attention_every,"
                                                   "shape_notes") +
                    shape + "256,0,\"sliding-window attention (window 128)\"\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  m = r->front().config.model;
  EXPECT_EQ(m.sliding_window, 256);
  EXPECT_EQ(m.full_attention_every, 0);
  EXPECT_TRUE(m.is_windowed_layer(1));
}

// The overlaps column's MoE all-to-all overlap, and Megatron-Bridge's
// unstated overlaps with the distributed optimizer.
TEST(RunsFile, MoeAllToAllOverlapFromTheOverlapsColumn) {
  const auto plan_of = [](const std::string& source, const std::string& overlaps) {
    Result<std::vector<PublishedRun>> r =
        read("q_row," + source + ",x,16,8,qwen-moe,4096,fp8-current,1,2,12,1,8,8,zero1,1,1024,"
             "none (recipe),\"" + overlaps + "\",50.0\n");
    EXPECT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r.ok() && r->front().missing.empty());
    return r.ok() ? r->front().config.plan : simulator::Plan();
  };
  const std::string mb = "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/x/docs/p.md";
  simulator::Plan p = plan_of(mb, "TP=1 (no TP communication); MoE all-to-all overlap on "
                                  "(moe_a2a_overlap=True); DP: overlap_grad_reduce and "
                                  "overlap_param_gather on (distributed optimizer) (recipe)");
  EXPECT_TRUE(p.moe_a2a_overlap);
  EXPECT_TRUE(p.overlap_grad_reduce);
  EXPECT_EQ(p.expert_parallel, 8);
  EXPECT_EQ(p.expert_data_parallel(), 1);
  p = plan_of(mb, "TP=1; MoE all-to-all overlap off (moe_a2a_overlap=False); DP: "
                  "overlap_grad_reduce and overlap_param_gather on");
  EXPECT_FALSE(p.moe_a2a_overlap);
  p = plan_of(mb, "MoE all-to-all overlap not set (default off)");
  EXPECT_FALSE(p.moe_a2a_overlap);
  p = plan_of(mb, "unstated");
  EXPECT_FALSE(p.moe_a2a_overlap);
  EXPECT_FALSE(p.tp_comm_overlap);
  EXPECT_TRUE(p.overlap_grad_reduce);   // Megatron-Bridge recipes with the distributed optimizer
  EXPECT_TRUE(p.overlap_param_gather);
  EXPECT_EQ(p.grad_bucket_bytes, 160'000'000);
  // Another source with unstated overlaps keeps no overlap.
  p = plan_of("https://github.com/NVIDIA/Megatron-LM/blob/x/README.md", "unstated");
  EXPECT_FALSE(p.overlap_grad_reduce);
  EXPECT_FALSE(p.moe_a2a_overlap);
}

// Every MoE row of data/h100/published_runs.csv (16: GPT-OSS 120B 5,
// Qwen3-30B-A3B 6, Qwen3-235B-A22B 5) maps onto an MoE model and plan; no
// row is left out for "moe" or head_dim any more.
TEST(RunsFile, PublishedMoeRowsMap) {
  Result<std::vector<PublishedRun>> r = read_runs_csv_file(
      std::string(LLMPLAN_DATA_DIR) + "/h100/published_runs.csv", "", catalog());
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::map<std::string, const PublishedRun*> by_name;
  std::map<std::string, int> moe_rows;
  for (const PublishedRun& run : *r) {
    by_name[run.name] = &run;
    if (run.model == "gpt-oss-120b" || starts_with_qwen3(run.model)) {
      EXPECT_TRUE(run.missing.empty()) << run.name;
      if (!run.missing.empty()) continue;
      EXPECT_TRUE(run.config.model.is_moe()) << run.name;
      EXPECT_GT(run.config.plan.expert_parallel, 1) << run.name;
      EXPECT_EQ(run.config.plan.expert_tensor_parallel, 1) << run.name;
      EXPECT_DOUBLE_EQ(run.config.plan.moe_imbalance, 1.0) << run.name;
      EXPECT_DOUBLE_EQ(run.config.model.moe_capacity_factor, 0.0) << run.name;
      ++moe_rows[run.model];
    } else if (run.missing.empty()) {
      // Dense rows keep the dense mapping.
      EXPECT_FALSE(run.config.model.is_moe()) << run.name;
      EXPECT_EQ(run.config.model.head_dim_size, 0) << run.name;
      EXPECT_EQ(run.config.model.sliding_window, 0) << run.name;
      EXPECT_EQ(run.config.plan.expert_parallel, 1) << run.name;
      EXPECT_FALSE(run.config.plan.moe_a2a_overlap) << run.name;
    }
  }
  EXPECT_EQ(moe_rows, (std::map<std::string, int>{
                          {"gpt-oss-120b", 5}, {"qwen3-235b-a22b", 5}, {"qwen3-30b-a3b", 6}}));
  const auto counts = missing_feature_counts(*r);
  EXPECT_EQ(counts.count("moe"), 0u);
  EXPECT_EQ(counts.count("head_dim != hidden/heads"), 0u);

  // GPT-OSS 120B, 26.04: PP 4, DP 16, EP 8 (expert-data-parallel 2).
  const PublishedRun* g = by_name.at("gpt-oss-120b_mbridge26.04_bf16_64gpu_gbs1280");
  ASSERT_TRUE(g->missing.empty());
  const simulator::Model& gm = g->config.model;
  EXPECT_EQ(gm.num_layers, 36);
  EXPECT_EQ(gm.hidden_size, 2880);
  EXPECT_EQ(gm.num_heads, 64);
  EXPECT_EQ(gm.num_kv_heads, 8);
  EXPECT_EQ(gm.head_dim_size, 64);
  EXPECT_EQ(gm.num_experts, 128);
  EXPECT_EQ(gm.moe_top_k, 4);
  EXPECT_EQ(gm.moe_ffn_hidden(), 2880);
  EXPECT_EQ(gm.moe_shared_experts, 0);
  EXPECT_EQ(gm.num_moe_layers(), 36);
  EXPECT_EQ(gm.activation, simulator::Activation::kSwiglu);  // quick_gelu gate costed as SwiGLU
  EXPECT_TRUE(gm.linear_bias);
  EXPECT_EQ(gm.sliding_window, 128);
  EXPECT_EQ(gm.full_attention_every, 2);
  EXPECT_TRUE(gm.is_windowed_layer(0));  // Megatron-Core: 1-based layer 2, 4, ... full
  EXPECT_FALSE(gm.is_windowed_layer(1));
  const simulator::Plan& gp = g->config.plan;
  EXPECT_EQ(gp.pipeline_parallel, 4);
  EXPECT_EQ(gp.data_parallel, 16);
  EXPECT_EQ(gp.expert_parallel, 8);
  EXPECT_EQ(gp.expert_data_parallel(), 2);
  EXPECT_FALSE(gp.moe_a2a_overlap);  // "not set (default off)"
  // "selective (recompute_modules: layernorm, moe_act)": the list replaces
  // Megatron-Core's default ["core_attn"], so the attention core is kept.
  EXPECT_EQ(gp.recompute, simulator::Recompute::kNone);
  EXPECT_TRUE(gp.recomputes(simulator::kRecomputeLayernorm));
  EXPECT_TRUE(gp.recomputes(simulator::kRecomputeMoeAct));
  EXPECT_EQ(gp.precision, simulator::Precision::kBf16);
  EXPECT_TRUE(gp.overlap_grad_reduce);
  EXPECT_FALSE(gp.dropout);

  // Qwen3-235B-A22B, 26.04: TP 2, PP 8, VP 4, EP 32, all-to-all overlap on.
  const PublishedRun* q = by_name.at("qwen3-235b-a22b_mbridge26.04_fp8_256gpu_gbs8192");
  ASSERT_TRUE(q->missing.empty());
  const simulator::Model& qm = q->config.model;
  EXPECT_EQ(qm.num_layers, 94);
  EXPECT_EQ(qm.hidden_size, 4096);
  EXPECT_EQ(qm.head_dim_size, 128);
  EXPECT_EQ(qm.num_experts, 128);
  EXPECT_EQ(qm.moe_top_k, 8);
  EXPECT_EQ(qm.moe_ffn_hidden(), 1536);
  EXPECT_EQ(qm.sliding_window, 0);
  EXPECT_FALSE(qm.linear_bias);
  const simulator::Plan& qp = q->config.plan;
  EXPECT_EQ(qp.tensor_parallel, 2);
  EXPECT_EQ(qp.pipeline_parallel, 8);
  EXPECT_EQ(qp.virtual_stages, 4);
  EXPECT_EQ(qp.expert_parallel, 32);
  EXPECT_EQ(qp.expert_data_parallel(), 1);
  EXPECT_TRUE(qp.moe_a2a_overlap);
  EXPECT_FALSE(qp.tp_comm_overlap);  // "TP-comm overlap off"
  EXPECT_TRUE(qp.sequence_parallel);
  EXPECT_EQ(qp.precision, simulator::Precision::kFp8);
  EXPECT_EQ(qp.fp8_recipe, simulator::Fp8Recipe::kCurrent);
  EXPECT_EQ(qp.recompute, simulator::Recompute::kNone);

  // Qwen3-30B-A3B: overlap on in 26.02, off in 26.04, unstated in 26.02.01.
  const auto a2a = [&](const char* name) { return by_name.at(name)->config.plan.moe_a2a_overlap; };
  EXPECT_TRUE(a2a("qwen3-30b-a3b_mbridge26.02_fp8_16gpu_gbs1024"));
  EXPECT_FALSE(a2a("qwen3-30b-a3b_mbridge26.04_fp8_16gpu_gbs1024"));
  EXPECT_FALSE(a2a("qwen3-30b-a3b_mbridge26.02.01_fp8_16gpu_gbs1024"));
  const simulator::Model& sm =
      by_name.at("qwen3-30b-a3b_mbridge26.04_fp8_16gpu_gbs1024")->config.model;
  EXPECT_EQ(sm.num_experts, 128);
  EXPECT_EQ(sm.moe_top_k, 8);
  EXPECT_EQ(sm.moe_ffn_hidden(), 768);
  EXPECT_EQ(sm.head_dim(), 128);
  EXPECT_EQ(by_name.at("qwen3-30b-a3b_mbridge26.04_fp8_16gpu_gbs1024")->config.plan.expert_parallel,
            16);
  const simulator::Plan& u = by_name.at("qwen3-30b-a3b_mbridge25.11_fp8_16gpu_gbs512")->config.plan;
  EXPECT_EQ(u.virtual_stages, 24);
  EXPECT_EQ(u.micro_batch_size, 2);
  EXPECT_EQ(u.recompute, simulator::Recompute::kNone);  // unstated
  EXPECT_EQ(u.expert_parallel, 8);
}

// validate on a runs file with an MoE row: the "moe" feature group, the
// by_model group (rows, excluded rows, in-sample MAPE = the mean of its rows'
// errors) and every row with its error in JSON and Markdown.
TEST(RunsFile, ValidateGroupsByModel) {
  const std::string dir = testing::TempDir();
  std::string other = kMptRow;
  other.replace(other.find(",8,512,"), 7, ",4,256,");
  other.replace(0, 3, "oth");
  std::string fp4 = kMptRow;
  fp4.replace(fp4.find("bf16 (amp_bf16)"), 15, "fp4 (nvfp4)");
  fp4.replace(0, 3, "fp4");
  const std::string moe =
      "moe_row,https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/x/p.md,DGX-H100,16,8 (DGX-H100),"
      "qwen-moe,4096,bf16,1,1,1,1,16,8,zero1,1,256,none,\"MoE all-to-all overlap off\",12.0\n";
  std::ofstream(dir + "/runs_moe.csv") << kRunsHeader << kMptRow << other << fp4 << moe;
  std::ofstream(dir + "/runs_moe_models.csv") << kModels;
  const auto run = [&](const std::string& format) {
    const testing_cli::CliRun cli = testing_cli::run_command(
        {add_validate_command}, "validate " + dir + "/runs_moe.csv --models " + dir +
                                    "/runs_moe_models.csv --folds 0 --format " + format);
    EXPECT_TRUE(cli.status.ok()) << cli.status.message();
    return cli.out;
  };
  const std::string out = run("json");
  Result<boost::json::value> v = json::parse(out, "validate");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const boost::json::object& o = v->as_object();
  const boost::json::array& moe_group = o.at("groups").at("moe").as_array();
  ASSERT_EQ(moe_group.size(), 2u);
  EXPECT_EQ(moe_group[0].at("key"), "no");
  EXPECT_EQ(moe_group[0].at("rows").to_number<int>(), 2);
  EXPECT_EQ(moe_group[1].at("key"), "yes");
  EXPECT_EQ(moe_group[1].at("rows").to_number<int>(), 1);
  const boost::json::object& by = o.at("by_model").as_object();
  ASSERT_EQ(by.size(), 2u);
  const boost::json::object& mpt = by.at("mpt-7b").as_object();
  EXPECT_EQ(mpt.at("rows").to_number<int>(), 2);
  EXPECT_EQ(mpt.at("excluded_rows").to_number<int>(), 1);
  EXPECT_FALSE(mpt.at("moe").as_bool());
  EXPECT_TRUE(mpt.at("held_out_mape").is_null());
  const boost::json::object& q = by.at("qwen-moe").as_object();
  EXPECT_EQ(q.at("rows").to_number<int>(), 1);
  EXPECT_EQ(q.at("excluded_rows").to_number<int>(), 0);
  EXPECT_TRUE(q.at("moe").as_bool());
  // Each model's in-sample MAPE is the mean of its rows' errors.
  std::map<std::string, std::vector<double>> ape;
  const boost::json::array& runs = o.at("runs").as_array();
  ASSERT_EQ(runs.size(), 3u);
  for (const boost::json::value& x : runs) {
    ape[std::string(x.at("model").as_string())].push_back(x.at("ape").to_number<double>());
  }
  ASSERT_EQ(ape.at("mpt-7b").size(), 2u);
  EXPECT_NEAR(mpt.at("in_sample_mape").to_number<double>(),
              (ape.at("mpt-7b")[0] + ape.at("mpt-7b")[1]) / 2, 1e-12);
  EXPECT_NEAR(q.at("in_sample_mape").to_number<double>(), ape.at("qwen-moe")[0], 1e-12);
  EXPECT_EQ(runs[2].at("name"), "moe_row");
  EXPECT_EQ(runs[2].at("ep").to_number<int>(), 8);
  EXPECT_GT(runs[2].at("predicted_s").to_number<double>(), 0.0);
  // The memory check per row: the peak and the margin to the H100's
  // 81,559 MiB (presets/gpus.json), positive exactly when the row fits.
  for (const boost::json::value& x : runs) {
    const double peak = x.at("peak_memory_bytes").to_number<double>();
    const double margin = x.at("memory_margin_bytes").to_number<double>();
    EXPECT_GT(peak, 1e9);
    EXPECT_NEAR(peak + margin, 81559.0 * 1024 * 1024, 1.0);
    EXPECT_EQ(x.at("fits").as_bool(), margin >= 0);
  }
  // Markdown: the table by model and every expressible row with its error.
  const std::string md = run("md");
  EXPECT_NE(md.find("## Error by model"), std::string::npos) << md;
  EXPECT_NE(md.find("## Error by moe"), std::string::npos) << md;
  EXPECT_NE(md.find("| qwen-moe"), std::string::npos) << md;
  for (const char* name : {"| mpt-7b_foundry", "| oth-7b_foundry", "| moe_row"}) {
    EXPECT_NE(md.find(name), std::string::npos) << name;
  }
  // CSV: model and ep columns, then the memory check's peak and margin
  // (capacity - peak, whole bytes; empty for the excluded row), then the
  // release (empty: the H100 form states none).
  const std::string csv = run("csv");
  EXPECT_NE(csv.find(",missing,model,ep,peak_memory_bytes,memory_margin_bytes,release\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",qwen-moe,8,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",precision fp4,mpt-7b,,,,\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace llmplan::planner

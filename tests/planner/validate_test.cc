// The accuracy commands' core: the measured-times CSV reader and the
// validation of the shipped A100 constants on vTrain's measurements.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "planner/accuracy/accuracy.h"
#include "planner/accuracy/held_out.h"
#include "planner/accuracy/measured_csv.h"
#include "planner/accuracy/runs_file.h"
#include "presets/catalog.h"
#include "simulator/simulate.h"

namespace llmplan::planner {
namespace {

constexpr const char* kHeader =
    "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
    "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)";

std::string error_of(const std::string& text) {
  Result<std::vector<MeasuredRun>> r = read_measured_csv_text(text, "runs.csv");
  return r.ok() ? "OK" : r.status().message();
}

TEST(MeasuredCsv, ReadsBomCrlfAndParamsColumn) {
  const std::string text = "\xEF\xBB\xBF" "Parameters (billion)," + std::string(kHeader) +
                           "\r\n3.6,64,512,8,3072,32,30,2048,1,64,1,3566.5\r\n\r\n";
  Result<std::vector<MeasuredRun>> r = read_measured_csv_text(text, "runs.csv");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  const MeasuredRun& run = r->front();
  EXPECT_EQ(run.line, 2);
  EXPECT_DOUBLE_EQ(run.params_billion, 3.6);
  EXPECT_EQ(run.num_gpus, 64);
  EXPECT_EQ(run.data, 64);
  EXPECT_EQ(run.seq_length, 2048);
  EXPECT_DOUBLE_EQ(run.iteration_time_s, 3.5665);
}

TEST(MeasuredCsv, ErrorsNameLineOrColumn) {
  const std::string h = std::string(kHeader) + "\n";
  EXPECT_EQ(error_of(""), "runs.csv: empty file (no header row)");
  EXPECT_EQ(error_of("\xEF\xBB\xBF\r\n"), "runs.csv: empty file (no header row)");
  EXPECT_EQ(error_of(h), "runs.csv: no data rows after the header");
  EXPECT_NE(error_of("# GPUs,colour\n1,2\n").find("runs.csv:1: column 2 \"colour\": unknown column"),
            std::string::npos);
  EXPECT_NE(error_of(h + "8,32,4,1024,16,24,1024,2,2,2\n").find("runs.csv:2: 10 cells"),
            std::string::npos);
  EXPECT_NE(error_of(h + "8,32,4,1024,16,24,1024,2,2,2,219.7\n8,32,x,1024,16,24,1024,2,2,2,1\n")
                .find("runs.csv:3: column \"micro batch\": \"x\" is not a decimal number"),
            std::string::npos);
  EXPECT_NE(error_of(h + "8,32,4,1024,16,24,1024,2,2,1,219.7\n").find("runs.csv:2: # GPUs 8"),
            std::string::npos);
  EXPECT_NE(error_of("# GPUs,global batch\n1,2\n").find("missing column"), std::string::npos);
}

// The accuracy cases of one of vTrain's files under the shipped constants.
std::vector<AccuracyCase> cases_of(const std::string& file) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  EXPECT_TRUE(catalog.ok());
  const std::string path = std::string(LLMPLAN_DATA_DIR) + "/vtrain/" + file;
  Result<std::vector<MeasuredRun>> runs = read_measured_csv_file(path);
  EXPECT_TRUE(runs.ok()) << runs.status().message();
  Result<std::vector<AccuracyCase>> cases = make_accuracy_cases(*runs, path, *catalog, nullptr);
  EXPECT_TRUE(cases.ok()) << cases.status().message();
  return cases.ok() ? *cases : std::vector<AccuracyCase>{};
}

// MAPE of the shipped A100 constants on one of vTrain's files.
double shipped_mape(const std::string& file) {
  const std::vector<AccuracyCase> cases = cases_of(file);
  Result<std::vector<double>> pred = predict_iteration_times(cases, nullptr);
  EXPECT_TRUE(pred.ok()) << pred.status().message();
  std::vector<double> meas;
  for (const AccuracyCase& c : cases) meas.push_back(c.run.iteration_time_s);
  return summarise(*pred, meas).mape;
}

TEST(Calibrate, IsDeterministicAndBounded) {
  const std::vector<AccuracyCase> all = cases_of("ground_truth_single.csv");
  ASSERT_GE(all.size(), 1440u);
  std::vector<AccuracyCase> some;
  for (size_t i = 0; i < all.size(); i += 60) some.push_back(all[i]);  // 24 rows
  CalibrationOptions options;
  options.max_iterations = 4;
  const AccuracyConstants initial = constants_of(some.front());
  Result<CalibrationResult> a = calibrate(some, initial, options);
  ASSERT_TRUE(a.ok()) << a.status().message();
  // Not started from the current constants: changing them does not matter.
  AccuracyConstants other = initial;
  other.roofline.gemm_efficiency = 0.3;
  other.roofline.kernel_overhead_s = 1e-3;
  Result<CalibrationResult> b = calibrate(some, other, options);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(a->constants.roofline, b->constants.roofline);
  EXPECT_EQ(a->cost, b->cost);
  EXPECT_EQ(a->in_sample_mape, b->in_sample_mape);
  EXPECT_EQ(a->starts, 1);
  EXPECT_LE(a->constants.roofline.gemm_efficiency, 0.9);
  EXPECT_LT(a->in_sample_mape, 0.25);
}

// Issue 31, item 7: one row "calibrated" to "MAPE 0.98 % over 1 rows". Fewer
// rows than fitted constants is still a result, but it says so.
TEST(Calibrate, SaysWhenTheFitIsUnderdetermined) {
  const std::vector<AccuracyCase> all = cases_of("ground_truth_single.csv");
  ASSERT_GE(all.size(), 1440u);
  CalibrationOptions options;
  options.starts = 1;
  options.max_iterations = 2;
  const std::vector<AccuracyCase> one(all.begin(), all.begin() + 1);
  Result<CalibrationResult> r = calibrate(one, constants_of(one.front()), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->summary.find("warning: 1 rows for 7 fitted constants: the fit is underdetermined"),
            std::string::npos)
      << r->summary;
  std::vector<AccuracyCase> some;
  for (size_t i = 0; i < all.size(); i += 60) some.push_back(all[i]);  // 24 rows
  r = calibrate(some, constants_of(some.front()), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->summary.find("underdetermined"), std::string::npos);
}

TEST(Calibrate, NeverFitsAboveThePhysicalCeilings) {
  const std::vector<AccuracyCase> all = cases_of("ground_truth_single.csv");
  ASSERT_GE(all.size(), 1440u);
  std::vector<AccuracyCase> some;
  for (size_t i = 0; i < all.size(); i += 60) some.push_back(all[i]);  // 24 rows
  // The shipped A100 carries a cited GEMM ceiling below the 0.90 bound.
  EXPECT_LT(some.front().config.cluster.gpu.ceilings.gemm_efficiency, 0.9);
  for (AccuracyCase& c : some) {
    c.config.cluster.gpu.ceilings.gemm_efficiency = 0.55;  // below every screened start
    c.config.cluster.gpu.ceilings.memory_efficiency = 0.45;
  }
  CalibrationOptions options;
  options.max_iterations = 4;
  Result<CalibrationResult> r = calibrate(some, constants_of(some.front()), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LE(r->constants.roofline.gemm_efficiency, 0.55);
  EXPECT_LE(r->constants.roofline.memory_efficiency, 0.45);
}

TEST(Calibrate, StreamsItsSummaryAndReportsProgress) {
  const std::vector<AccuracyCase> all = cases_of("ground_truth_single.csv");
  ASSERT_GE(all.size(), 1440u);
  std::vector<AccuracyCase> some;
  for (size_t i = 0; i < all.size(); i += 120) some.push_back(all[i]);  // 12 rows
  CalibrationOptions options;
  options.max_iterations = 3;
  std::string streamed;
  int screened = 0, polish_events = 0, last_iteration = -1;
  bool ordered = true;
  options.on_line = [&](const std::string& line) { streamed += line; };
  options.on_progress = [&](const CalibrationProgress& p) {
    if (p.stage == CalibrationProgress::Stage::kScreen) {
      ordered &= polish_events == 0 && p.step == screened + 1 && p.steps == kCalibrationScreenPoints;
      ++screened;
    } else {
      ordered &= p.step == 1 && p.steps == 1 && p.iteration == last_iteration + 1;
      last_iteration = p.iteration;
      ++polish_events;
    }
  };
  Result<CalibrationResult> r = calibrate(some, constants_of(some.front()), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(streamed, r->summary);
  EXPECT_EQ(streamed.rfind("screened 32 starting points: best cost ", 0), 0u) << streamed;
  EXPECT_NE(streamed.find("\nstart 0 (screen cost "), std::string::npos) << streamed;
  EXPECT_EQ(screened, kCalibrationScreenPoints);
  EXPECT_GE(polish_events, 2);  // iteration 0 and at least one more
  EXPECT_LE(last_iteration, options.max_iterations);
  EXPECT_TRUE(ordered);
}

// Issue 26: fp4_gemm_efficiency is a fit parameter when the runs hold
// NVFP4 rows (as fp8_gemm_efficiency for FP8 rows), bounded by the GPU's
// ceilings.fp4_gemm_efficiency, and held otherwise. Rows: 12 vTrain A100
// layouts on an A100 given a (test-only) FP4 peak, half of them in NVFP4,
// their "measured" times simulated with fp4_gemm_efficiency 0.45.
TEST(Calibrate, FitsTheFp4GemmEfficiencyOnNvfp4Rows) {
  const std::vector<AccuracyCase> all = cases_of("ground_truth_single.csv");
  ASSERT_GE(all.size(), 1440u);
  std::vector<AccuracyCase> some;
  for (size_t i = 0; i < all.size(); i += 120) some.push_back(all[i]);  // 12 rows
  for (size_t i = 0; i < some.size(); ++i) {
    simulator::GpuSpec& g = some[i].config.cluster.gpu;
    g.peak_fp4_flops = 4 * g.peak_bf16_flops;
    g.ceilings.fp4_gemm_efficiency = 0.5;
    g.roofline.fp4_gemm_efficiency = 0.45;
    if (i % 2 == 1) some[i].config.plan.precision = simulator::Precision::kNvfp4;
  }
  Result<std::vector<double>> truth = predict_iteration_times(some, nullptr);
  ASSERT_TRUE(truth.ok()) << truth.status().message();
  for (size_t i = 0; i < some.size(); ++i) some[i].run.iteration_time_s = (*truth)[i];
  CalibrationOptions options;
  options.max_iterations = 6;
  AccuracyConstants initial = constants_of(some.front());
  initial.roofline.fp4_gemm_efficiency = 0.9;  // not a start: the fit starts from 0.5
  Result<CalibrationResult> r = calibrate(some, initial, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LE(r->constants.roofline.fp4_gemm_efficiency, 0.5);
  EXPECT_NEAR(r->constants.roofline.fp4_gemm_efficiency, 0.45, 0.05);
  // Without NVFP4 rows it is held where it was.
  std::vector<AccuracyCase> bf16_only;
  for (size_t i = 0; i < some.size(); i += 2) bf16_only.push_back(some[i]);
  r = calibrate(bf16_only, initial, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->constants.roofline.fp4_gemm_efficiency, 0.9);
}

// Achieved with the shipped constants (see presets/gpus.json provenance);
// fail on a regression of more than one percentage point.
TEST(Validate, SingleNodeMapeDoesNotRegress) {
  EXPECT_LE(shipped_mape("ground_truth_single.csv"), 0.0612 + 0.01);  // achieved 6.12 %
}
TEST(Validate, MultiNodeMapeDoesNotRegress) {
  EXPECT_LE(shipped_mape("ground_truth_multi.csv"), 0.0896 + 0.01);  // achieved 8.96 %
}

// Every measured vTrain run (A100 80GB, Megatron-LM) ran, so the memory
// model must predict each to fit.
TEST(ShippedRunsMemory, EveryVtrainRunFits) {
  for (const char* file : {"ground_truth_single.csv", "ground_truth_multi.csv"}) {
    const std::vector<AccuracyCase> cases = cases_of(file);
    ASSERT_FALSE(cases.empty()) << file;
    std::vector<bool> fits;
    std::vector<double> peak, capacity;
    ASSERT_TRUE(predict_iteration_times(cases, nullptr, &fits, &peak, &capacity).ok());
    for (size_t i = 0; i < cases.size(); ++i) {
      EXPECT_TRUE(fits[i]) << file << ":" << cases[i].run.line << " peak " << peak[i];
      EXPECT_LE(peak[i], capacity[i]);
    }
  }
}

// The H100 runs file: every expressible row is predicted to fit but one,
// gpt-oss-120b_mbridge25.11_bf16_64gpu_gbs512, whose source table is
// inconsistent (GA 2 against GBS / (DP x MBS) = 8) and whose recompute
// setting is unstated (read as none): at micro-batch 4 without recompute it
// needs about 135 GB; the same model's other releases ran micro-batch 1
// with selective recompute.
TEST(ShippedRunsMemory, EveryExpressibleH100RunFits) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  const std::string path = std::string(LLMPLAN_DATA_DIR) + "/h100/published_runs.csv";
  Result<std::vector<PublishedRun>> runs = read_runs_file(path, "", *catalog);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  std::set<std::string> not_fitting;
  int expressible = 0;
  double tightest = 1e300;
  for (const PublishedRun& r : *runs) {
    if (!r.missing.empty()) continue;
    ++expressible;
    Result<simulator::StepReport> rep =
        simulator::simulate(r.config.model, r.config.plan, r.config.cluster);
    ASSERT_TRUE(rep.ok()) << r.name << ": " << rep.status().message();
    if (!rep->fits_in_memory) {
      not_fitting.insert(r.name);
    } else {
      tightest = std::min(tightest, rep->memory_capacity_bytes - rep->peak_memory_bytes);
    }
  }
  EXPECT_GE(expressible, 120);
  // nemotron4-340b (expressible since squared-relu maps, #27) is predicted
  // about 10 GB over 80 GB with dropout off as its recipe runs it: known, not
  // yet mapped (its launcher config, nemotron_340b.yaml, syncs gradients in
  // bf16, optim.grad_sync_dtype bf16, which the NeMo 24.07 mapping does not
  // read).
  EXPECT_EQ(not_fitting, (std::set<std::string>{"gpt-oss-120b_mbridge25.11_bf16_64gpu_gbs512",
                                                "nemotron4-340b_nemo2407_fp8_128gpu_gbs32"}));
  // The tightest rows are close to the capacity: the model is not loose.
  EXPECT_LT(tightest, 2e9);
  EXPECT_GT(tightest, 0);
}

// calibrate's report of the H100 runs file, MoE rows included (they are
// cross-validated but not fitted): the MFU ranges, overall and by precision,
// are over the fitted (dense) rows and are fractions of a peak. A regression
// test: the by-precision lines once indexed the dense rows' MFU with the
// index of all rows.
TEST(ShippedRunsMemory, CalibrateReportsMfuOverTheFittedRows) {
  Result<presets::Catalog> catalog = presets::Catalog::builtin();
  ASSERT_TRUE(catalog.ok());
  const std::string path = std::string(LLMPLAN_DATA_DIR) + "/h100/published_runs.csv";
  Result<std::vector<PublishedRun>> runs = read_runs_file(path, "", *catalog);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  std::vector<PublishedRun> expressible;
  for (const PublishedRun& r : *runs) {
    if (r.missing.empty()) expressible.push_back(r);
  }
  const std::vector<AccuracyCase> cases = make_runs_cases(expressible);
  size_t moe = 0;
  for (const AccuracyCase& c : cases) moe += c.config.model.is_moe() ? 1 : 0;
  ASSERT_GT(moe, 0u);
  std::vector<double> predicted;
  for (const AccuracyCase& c : cases) predicted.push_back(c.run.iteration_time_s);
  const std::string text =
      held_out_report(cases, predicted, std::vector<int>(cases.size(), 0), 5);
  const std::string fitted = std::to_string(cases.size() - moe);
  // The 16-bit and FP8 lines: counts add up to the dense rows, ranges in (0, 1).
  size_t counted = 0;
  for (const std::string label : {"16-bit runs (", "FP8 runs ("}) {
    const size_t at = text.find(label);
    ASSERT_NE(at, std::string::npos) << text;
    counted += std::stoul(text.substr(at + label.size()));
    const size_t colon = text.find("): ", at);
    ASSERT_NE(colon, std::string::npos);
    const double lo = std::stod(text.substr(colon + 3));
    const double hi = std::stod(text.substr(text.find(" .. ", colon) + 4));
    EXPECT_GT(lo, 0.05) << label;
    EXPECT_LT(hi, 0.6) << label;
    EXPECT_LE(lo, hi) << label;
  }
  EXPECT_EQ(std::to_string(counted), fitted) << text;
}

}  // namespace
}  // namespace llmplan::planner

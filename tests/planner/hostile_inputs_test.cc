// Regression tests for issue 17's hostile-input defects in the file readers:
//  5 (file parts): an input file too large, or one that never ends
//    (/dev/zero), is refused with a one-line error naming it, by every
//    reader and through the CLI, instead of being read until memory runs out;
//  9: one CSV reader, one set of rules -- a hex cell (0x10) and an
//    unterminated quote ("3566.5) are refused by every CSV reader, naming the
//    file, line and column (`validate` and `calibrate` used to accept both).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "planner/accuracy/accuracy_json.h"
#include "planner/accuracy/measured_csv.h"
#include "planner/cli/command.h"
#include "planner/search/shapes_json.h"
#include "planner/study/schedule/job.h"
#include "presets/catalog.h"
#include "presets/sim_config.h"
#include "scaling/law.h"
#include "scaling/loss_csv.h"
#include "simulator/collective_curve.h"
#include "base/input_file.h"
#include "simulator/profile_table_json.h"
#include "simulator/roofline.h"
#include "base/strict_json.h"

namespace llmplan::planner {
namespace {

const presets::Catalog& catalog() {
  static const presets::Catalog c = presets::Catalog::builtin().value();
  return c;
}

// Every reader of a user's file, as a function of the path to its error
// message ("OK" when it read the file).
std::vector<std::pair<std::string, std::function<std::string(const std::string&)>>> readers() {
  auto message = [](const Status& s) { return s.ok() ? std::string("OK") : s.message(); };
  return {
      {"measured csv",
       [=](const std::string& p) { return message(read_measured_csv_file(p).status()); }},
      {"loss csv",
       [=](const std::string& p) { return message(scaling::read_loss_csv(p).status()); }},
      {"jobs",
       [=](const std::string& p) {
         return message(schedule::read_jobs_file(p, catalog()).status());
       }},
      {"sim config",
       [=](const std::string& p) {
         return message(presets::load_sim_config_file(p, catalog()).status());
       }},
      {"vtrain config",
       [=](const std::string& p) {
         return message(presets::load_vtrain_config_file(p, catalog()).status());
       }},
      {"preset file",
       [=](const std::string& p) {
         presets::Catalog c = catalog();
         return message(c.add_file(p));
       }},
      {"shapes",
       [=](const std::string& p) { return message(read_shapes_file(p, 2048, 51200).status()); }},
      {"profile",
       [=](const std::string& p) { return message(simulator::read_profile_file(p).status()); }},
      {"profile table",
       [=](const std::string& p) {
         auto roofline =
             std::make_shared<simulator::Roofline>(catalog().cluster("dgx-h100").value());
         return message(simulator::load_profile_table(p, roofline).status());
       }},
      {"profiler shapes",
       [=](const std::string& p) {
         return message(simulator::read_profile_shapes_file(p).status());
       }},
      {"constants",
       [=](const std::string& p) {
         AccuracyConstants k;
         return message(read_constants_file(p, &k));
       }},
      {"law", [=](const std::string& p) { return message(scaling::read_law_file(p).status()); }},
      {"nccl-tests",
       [=](const std::string& p) { return message(simulator::read_nccl_tests_file(p).status()); }},
      {"json", [=](const std::string& p) { return message(json::parse_file(p).status()); }},
  };
}

TEST(HostileInputs, EveryReaderStopsAtDevZero) {
  const std::string expected =
      "/dev/zero: more than the 16 MiB limit for input files (not a regular file; reading "
      "stopped there)";
  for (const auto& [name, read] : readers()) EXPECT_EQ(read("/dev/zero"), expected) << name;
}

TEST(HostileInputs, EveryReaderRefusesAFileOverTheCap) {
  // Sparse: 16 MiB + 1 byte on disk costs nothing.
  const std::string path =
      (std::filesystem::path(testing::TempDir()) / "llmplan_hostile_huge.json").string();
  { std::ofstream touch(path); }
  std::filesystem::resize_file(path, kMaxInputFileBytes + 1);
  for (const auto& [name, read] : readers()) {
    EXPECT_EQ(read(path),
              path + ": file too large: 16777217 bytes, more than the 16 MiB limit for input files")
        << name;
  }
  std::filesystem::remove(path);
}

TEST(HostileInputs, ValidateCommandRefusesDevZero) {
  CLI::App app{"test"};
  GlobalOptions global;
  Action action;
  add_validate_command(app, global, &action);
  app.parse("validate /dev/zero");
  ASSERT_TRUE(static_cast<bool>(action));
  const Status status = action();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "/dev/zero: more than the 16 MiB limit for input files (not a regular file; reading "
            "stopped there)");
}

// A valid file of each CSV reader with one cell replaced by `cell`.
struct CsvCase {
  std::string name;
  std::string header;
  std::string row;  // holds "@" where the cell goes
  std::string column;
  std::function<Status(const std::string& text)> parse;
};

std::vector<CsvCase> csv_readers() {
  return {
      {"measured",
       "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
       "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)",
       "64,512,8,3072,32,30,2048,1,64,1,@", "iteration time (ms)",
       [](const std::string& t) { return read_measured_csv_text(t, "f.csv").status(); }},
      {"measured (count)",
       "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
       "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)",
       "64,512,@,3072,32,30,2048,1,64,1,3566.5", "micro batch",
       [](const std::string& t) { return read_measured_csv_text(t, "f.csv").status(); }},
      {"loss", "N,D,loss", "1e8,2e9,@", "loss",
       [](const std::string& t) { return scaling::parse_loss_csv(t, "f.csv").status(); }},
      {"jobs", "name,model,tokens,arrival_h,deadline_h,gpus", "a,gpt3-175b,3e9,0,12,@", "gpus",
       [](const std::string& t) {
         return schedule::read_jobs_csv(t, "f.csv", catalog()).status();
       }},
      {"jobs (hours)", "name,model,tokens,arrival_h,deadline_h", "a,gpt3-175b,3e9,@,40",
       "arrival_h",
       [](const std::string& t) {
         return schedule::read_jobs_csv(t, "f.csv", catalog()).status();
       }},
  };
}

std::string file_with(const CsvCase& c, const std::string& cell) {
  std::string row = c.row;
  row.replace(row.find('@'), 1, cell);
  // Five rows: the last one holds the cell (loss tables need five points).
  std::string text = c.header + "\n";
  for (int i = 0; i < 4; ++i) {
    std::string good = c.row;
    good.replace(good.find('@'), 1, "16");
    if (c.name.rfind("jobs", 0) == 0) good.replace(0, 1, "j" + std::to_string(i));
    text += good + "\n";
  }
  return text + row + "\n";
}

TEST(HostileInputs, EveryCsvReaderFollowsTheSameRules) {
  for (const CsvCase& c : csv_readers()) {
    // The same file with a plain cell reads.
    EXPECT_TRUE(c.parse(file_with(c, "16")).ok())
        << c.name << ": " << c.parse(file_with(c, "16")).message();
    EXPECT_TRUE(c.parse(file_with(c, "\"16\"")).ok()) << c.name;
    const std::string where = "f.csv:6: column \"" + c.column + "\": ";
    const Status hex = c.parse(file_with(c, "0x10"));
    EXPECT_EQ(hex.code(), StatusCode::kParseError) << c.name;
    EXPECT_EQ(hex.message(), where + "\"0x10\" is not a decimal number") << c.name;
    const Status quote = c.parse(file_with(c, "\"3566.5"));
    EXPECT_EQ(quote.code(), StatusCode::kParseError) << c.name;
    EXPECT_EQ(quote.message(), where + "unterminated quote (a quoted cell must close on its line)")
        << c.name;
    for (const char* bad : {"inf", "nan", "1e999", "16abc", "1 6", "16\"", "\"16\"x"}) {
      const Status s = c.parse(file_with(c, bad));
      EXPECT_EQ(s.code(), StatusCode::kParseError) << c.name << " " << bad;
      EXPECT_EQ(s.message().rfind(where, 0), 0u) << c.name << " " << bad << ": " << s.message();
    }
  }
}

TEST(HostileInputs, NcclTestsCurvesAreDecimalToo) {
  const std::string header = "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n";
  for (const char* bad : {"0x10", "inf", "nan", "1e999"}) {
    Result<simulator::CollectiveCurve> r = simulator::parse_nccl_tests_text(
        header + "1024,256,float," + bad + ",1.0,1000,1.0\n", "lut");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), std::string("lut:2: bad time \"") + bad + "\"");
  }
}

// Caps on rows and entries: what a file may make llmplan keep and work
// through after parsing is bounded, with a message naming the cap.
TEST(HostileInputs, RowAndEntryCaps) {
  auto repeat = [](const std::string& head, const std::string& item, size_t n,
                   const std::string& sep, const std::string& tail) {
    std::string text = head;
    for (size_t i = 0; i < n; ++i) text += (i ? sep : "") + item;
    return text + tail;
  };
  // Measured times: 20,000 rows.
  const std::string measured_header =
      "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
      "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n";
  const std::string measured_row = "8,32,4,1024,16,24,1024,2,2,2,219.7\n";
  EXPECT_TRUE(
      read_measured_csv_text(repeat(measured_header, measured_row, kMaxMeasuredRuns, "", ""), "m")
          .ok());
  EXPECT_EQ(read_measured_csv_text(
                repeat(measured_header, measured_row, kMaxMeasuredRuns + 1, "", ""), "m.csv")
                .status()
                .message(),
            "m.csv:20002: more than 20000 records (the limit for this file)");
  // Loss tables: 100,000 rows.
  EXPECT_EQ(scaling::parse_loss_csv(
                repeat("N,D,loss\n", "1e8,2e9,3\n", scaling::kMaxLossRows + 1, "", ""), "l.csv")
                .status()
                .message(),
            "l.csv:10002: more than 10000 records (the limit for this file)");
  // Job files: 100,000 jobs, CSV or JSON.
  std::string jobs_csv = "name,model,tokens,arrival_h,deadline_h\n";
  for (size_t i = 0; i <= schedule::kMaxJobsPerFile; ++i) {
    jobs_csv += "j" + std::to_string(i) + ",24x2048x16,1e9,0,9\n";
  }
  EXPECT_EQ(schedule::read_jobs_csv(jobs_csv, "j.csv", catalog()).status().message(),
            "j.csv:100002: more than 100000 records (the limit for this file)");
  EXPECT_EQ(schedule::read_jobs_json(
                repeat("{\"jobs\": [", "{}", schedule::kMaxJobsPerFile + 1, ",", "]}"), "j.json",
                catalog())
                .status()
                .message(),
            "j.json: jobs: 100001 jobs, more than the 100000 a job file may hold");
  // Shapes: 1,000.
  const std::string shape = R"({"layers": 2, "hidden": 64, "heads": 4})";
  EXPECT_TRUE(
      parse_shapes_text(repeat("[", shape, kMaxShapes, ",", "]"), "s.json", 128, 1000).ok());
  EXPECT_EQ(parse_shapes_text(repeat("[", shape, kMaxShapes + 1, ",", "]"), "s.json", 128, 1000)
                .status()
                .message(),
            "--shapes s.json: 1001 shapes, more than 1000");
  // Preset files: 1,000 entries.
  std::string laws = R"({"laws": [)";
  for (int i = 0; i <= 1000; ++i) {
    laws += std::string(i ? "," : "") + R"({"name": "l)" + std::to_string(i) +
            R"(", "E": 1, "A": 1, "B": 1, "alpha": 0.3, "beta": 0.3})";
  }
  presets::Catalog c = catalog();
  EXPECT_EQ(c.add_text(laws + "]}", "p.json").message(),
            "p.json: laws: more than the 1000 presets a preset file may hold");
  // nccl-tests curves: 100,000 rows; measured curves in presets: 100,000
  // points in all, 1,024 curves.
  std::string lut = "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n";
  for (size_t i = 1; i <= simulator::kMaxCurvePoints + 1; ++i) {
    lut += std::to_string(i) + ",1,float,1000,1,1000,1\n";
  }
  EXPECT_EQ(simulator::parse_nccl_tests_text(lut, "lut").status().message(),
            "lut:100002: more than 100000 rows (the limit for a measured curve)");
  simulator::MeasuredCollectives m;
  for (int g = 2; g < 4; ++g) {
    simulator::InNodeCurve curve{g, {}};
    for (size_t i = 1; i <= simulator::kMaxCurvePoints / 2 + 1; ++i) {
      curve.curve.bytes.push_back(static_cast<double>(i));
      curve.curve.seconds.push_back(1e-5);
    }
    m.all_reduce.push_back(curve);
  }
  EXPECT_EQ(simulator::validate(m).message(), "all_reduce: 100002 points in all, more than 100000");
  m.all_reduce.assign(simulator::kMaxInNodeCurves + 1, {2, {{1}, {1e-5}}});
  EXPECT_EQ(simulator::validate(m).message(), "all_reduce: 1025 curves, more than 1024");
  // Profiles: 100,000 kernels, 10,000 collectives.
  simulator::Profile profile;
  profile.gpu.name = "g";
  simulator::ProfileKernel kernel;
  kernel.bytes = 1;
  kernel.time_s = 1e-6;
  profile.kernels.assign(simulator::kMaxProfileKernels + 1, kernel);
  EXPECT_EQ(simulator::validate(profile).message(), "kernels: 100001 entries, more than 100000");
}

// The profile's duplicate check sorts instead of comparing every pair, and
// still names the first entry that repeats an earlier one.
TEST(HostileInputs, ProfileDuplicatesAreFoundInLargeProfiles) {
  simulator::Profile profile;
  profile.gpu.name = "g";
  for (int i = 0; i < 50000; ++i) {
    simulator::ProfileKernel k;
    k.kind = simulator::KernelKind::kFc1Gemm;
    k.gemm = {1 + i, 64, 64, 1};
    k.time_s = 1e-6;
    profile.kernels.push_back(k);
  }
  EXPECT_TRUE(simulator::validate(profile).ok());
  profile.kernels[40000].gemm = profile.kernels[30000].gemm;  // a repeat
  profile.kernels[45000].gemm = profile.kernels[10].gemm;     // and a later one
  EXPECT_EQ(simulator::validate(profile).message(),
            "kernels[40000]: duplicate of an earlier entry with the same kind, pass, precision "
            "and size");
  profile.kernels[40000].precision = simulator::Precision::kFp16;  // another key
  EXPECT_EQ(simulator::validate(profile).message().substr(0, 15), "kernels[45000]:");
}

}  // namespace
}  // namespace llmplan::planner

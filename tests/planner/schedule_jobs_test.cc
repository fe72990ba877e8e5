// The job files of `llmplan schedule` (CSV and JSON readers, the CSV
// writer) and the synthetic trace generator.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "planner/study/schedule/job.h"
#include "presets/catalog.h"

namespace llmplan::planner::schedule {
namespace {

const presets::Catalog& catalog() {
  static const presets::Catalog kCatalog = presets::Catalog::builtin().value();
  return kCatalog;
}

constexpr const char* kHeader = "name,model,tokens,arrival_h,deadline_h\n";

std::string csv_error(const std::string& text) {
  Result<std::vector<Job>> r = read_jobs_csv(text, "jobs.csv", catalog());
  return r.ok() ? "OK" : r.status().message();
}

std::string json_error(const std::string& text) {
  Result<std::vector<Job>> r = read_jobs_json(text, "jobs.json", catalog());
  return r.ok() ? "OK" : r.status().message();
}

bool one_line(const std::string& s) { return s.find('\n') == std::string::npos; }

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// ---- CSV --------------------------------------------------------------------

TEST(JobsCsv, ReadsPresetAndShape) {
  Result<std::vector<Job>> r =
      read_jobs_csv(std::string(kHeader) + "big,gpt3-175b,3e9,0,12\nsmall,24x2048x16,1e9,0.5,2.5\n",
                    "jobs.csv", catalog());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  const Job& big = (*r)[0];
  EXPECT_EQ(big.name, "big");
  EXPECT_EQ(big.model_name, "gpt3-175b");
  EXPECT_EQ(big.model, catalog().model("gpt3-175b").value());
  EXPECT_DOUBLE_EQ(big.tokens, 3e9);
  EXPECT_DOUBLE_EQ(big.arrival_s, 0);
  EXPECT_DOUBLE_EQ(big.deadline_s, 12 * 3600.0);
  EXPECT_EQ(big.min_gpus, 0);
  EXPECT_EQ(big.max_gpus, 0);
  EXPECT_EQ(big.gpus, 0);
  EXPECT_EQ(big.line, 2);

  const Job& small = (*r)[1];
  EXPECT_EQ(small.model_name, "24x2048x16");
  EXPECT_EQ(small.model.name, "24x2048x16");
  EXPECT_EQ(small.model.num_layers, 24);
  EXPECT_EQ(small.model.hidden_size, 2048);
  EXPECT_EQ(small.model.num_heads, 16);
  EXPECT_EQ(small.model.seq_length, kShapeSeqLength);
  EXPECT_EQ(small.model.vocab_size, kShapeVocabSize);
  EXPECT_EQ(small.model.activation, simulator::Activation::kGelu);
  EXPECT_EQ(small.model.positions, simulator::PositionEmbedding::kLearned);
  EXPECT_TRUE(small.model.tied_embeddings);
  EXPECT_TRUE(small.model.linear_bias);
  EXPECT_DOUBLE_EQ(small.arrival_s, 1800);
  EXPECT_DOUBLE_EQ(small.deadline_s, 9000);
}

TEST(JobsCsv, ReadsOptionalColumnsBomCrlfAndDefaultNames) {
  const std::string text =
      "\xEF\xBB\xBF"
      "Name, Model ,tokens,arrival_h,deadline_h,gpus,min_gpus,max_gpus\r\n"
      "\r\n"
      ",llama2-7b,2e9,1,5,64,32,128\r\n"
      "\"b, the second\",32x4096x32,4e9,2,6,,,\r\n";
  Result<std::vector<Job>> r = read_jobs_csv(text, "jobs.csv", catalog());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "job1");
  EXPECT_EQ((*r)[0].line, 3);
  EXPECT_EQ((*r)[0].gpus, 64);
  EXPECT_EQ((*r)[0].min_gpus, 32);
  EXPECT_EQ((*r)[0].max_gpus, 128);
  EXPECT_EQ((*r)[1].name, "b, the second");
  EXPECT_EQ((*r)[1].gpus, 0);
  EXPECT_EQ((*r)[1].min_gpus, 0);
  EXPECT_EQ((*r)[1].max_gpus, 0);
}

TEST(JobsCsv, SortsByArrivalStably) {
  Result<std::vector<Job>> r = read_jobs_csv(std::string(kHeader) +
                                                 "c,24x2048x16,1e9,3,9\n"
                                                 "a,24x2048x16,1e9,1,9\n"
                                                 "b,24x2048x16,1e9,3,9\n"
                                                 "d,24x2048x16,1e9,0,9\n",
                                             "jobs.csv", catalog());
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::vector<std::string> names;
  for (const Job& j : *r) names.push_back(j.name);
  EXPECT_EQ(names, (std::vector<std::string>{"d", "a", "c", "b"}));
}

TEST(JobsCsv, ErrorsNameLineAndField) {
  const std::string h = kHeader;
  std::vector<std::string> errors;
  auto expect = [&](const std::string& text, const std::string& wanted) {
    const std::string e = csv_error(text);
    EXPECT_NE(e.find(wanted), std::string::npos) << "got: " << e << "\nwanted: " << wanted;
    EXPECT_TRUE(one_line(e)) << e;
  };
  expect(h + "a,gpt-99,1e9,0,1\n", "jobs.csv:2: model: unknown model preset \"gpt-99\"");
  expect(h + "a,gpt-99,1e9,0,1\n", "gpt3-175b");  // lists the presets
  expect(h + "a,gpt-99,1e9,0,1\n", "LxHxA");
  expect(h + "a,24x2000x24,1e9,0,1\n", "jobs.csv:2: model: shape \"24x2000x24\": heads:");
  expect(h + "a,gpt3-175b,-5,0,1\n", "jobs.csv:2: tokens: must be a positive number, got -5");
  expect(h + "a,gpt3-175b,0,0,1\n", "jobs.csv:2: tokens:");
  expect(h + "a,gpt3-175b,1e9,4,2\n", "jobs.csv:2: deadline_h: 2 is not after arrival_h 4");
  expect(h + "a,gpt3-175b,1e9,4,4\n", "jobs.csv:2: deadline_h: 4 is not after arrival_h 4");
  expect(h + "a,gpt3-175b,1e9,-1,4\n", "jobs.csv:2: arrival_h: must be >= 0");
  expect(h + "\na,gpt3-175b,1e9x,0,4\n",
         "jobs.csv:3: column \"tokens\": \"1e9x\" is not a decimal number");
  expect(h + "a,gpt3-175b,,0,4\n", "jobs.csv:2: column \"tokens\": \"\" is not a decimal number");
  expect(h + "a,gpt3-175b,1e9,0,nan\n",
         "jobs.csv:2: column \"deadline_h\": \"nan\" is not a decimal number");
  expect(h + "a,gpt3-175b,1e9,0,4\nb,gpt3-175b,1e9,0\n", "jobs.csv:3: 4 cells, the header has 5");
  expect(h + "a,,1e9,0,4\n", "jobs.csv:2: model: empty");
  expect(h + "\"a,gpt3-175b,1e9,0,4\n", "jobs.csv:2: column \"name\": unterminated quote");
  expect("name,model,tokns,arrival_h,deadline_h\n",
         "jobs.csv:1: column 3 \"tokns\": unknown column");
  expect("name,model,tokens,tokens,arrival_h,deadline_h\n",
         "jobs.csv:1: column 4 \"tokens\": duplicated column");
  expect("name,model,tokens,deadline_h\na,gpt3-175b,1e9,4\n",
         "jobs.csv:1: missing column \"arrival_h\"");
  expect("", "jobs.csv: empty file");
  expect("\xEF\xBB\xBF\r\n \r\n", "jobs.csv: empty file");
  expect(h + "\r\n", "jobs.csv: no jobs after the header");
  expect(h + "a,gpt3-175b,1e9,0,4\nb,gpt3-175b,1e9,0,4\na,gpt3-175b,1e9,1,4\n",
         "jobs.csv:4: name: duplicate name \"a\" (first on line 2)");
  expect(h + "job2,gpt3-175b,1e9,0,4\n,gpt3-175b,1e9,0,4\n", "jobs.csv:3: name: duplicate name");
  const std::string hg = "name,model,tokens,arrival_h,deadline_h,min_gpus,max_gpus,gpus\n";
  expect(hg + "a,gpt3-175b,1e9,0,4,512,256,\n",
         "jobs.csv:2: min_gpus: 512 is more than max_gpus 256");
  expect(hg + "a,gpt3-175b,1e9,0,4,64,256,32\n", "jobs.csv:2: gpus: 32 is less than min_gpus 64");
  expect(hg + "a,gpt3-175b,1e9,0,4,64,256,512\n",
         "jobs.csv:2: gpus: 512 is more than max_gpus 256");
  expect(hg + "a,gpt3-175b,1e9,0,4,-8,,\n", "jobs.csv:2: min_gpus: must be >= 0, got -8");
  expect(hg + "a,gpt3-175b,1e9,0,4,,8.5,\n",
         "jobs.csv:2: column \"max_gpus\": \"8.5\" is not a whole number");
}

TEST(JobsCsv, UnknownModelIsNotFound) {
  Result<std::vector<Job>> r =
      read_jobs_csv(std::string(kHeader) + "a,gpt-99,1e9,0,1\n", "jobs.csv", catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(JobsCsv, WriterRoundTrips) {
  std::vector<Job> jobs;
  {
    Result<std::vector<Job>> r = read_jobs_csv(
        "name,model,tokens,arrival_h,deadline_h,min_gpus,max_gpus,gpus\n"
        "\"x, \"\"quoted\"\"\",gpt3-175b,3.25e9,0.1,12.7,64,512,256\n"
        " padded ,24x2048x16,123456789,1.3333333333333333,2.9,,,\n",
        "jobs.csv", catalog());
    ASSERT_TRUE(r.ok()) << r.status().message();
    jobs = *r;
  }
  Result<std::vector<Job>> generated = generate_jobs({.num_jobs = 50, .seed = 7});
  ASSERT_TRUE(generated.ok()) << generated.status().message();
  jobs.insert(jobs.end(), generated->begin(), generated->end());
  jobs.push_back(jobs.back());
  jobs.back().name = " edge space";
  jobs.back().arrival_s = 1.0 / 3.0;  // not on the hours grid: still read back closely

  const std::string csv = jobs_to_csv(jobs);
  Result<std::vector<Job>> back = read_jobs_csv(csv, "back.csv", catalog());
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << csv;
  std::vector<Job> want = jobs;
  std::stable_sort(want.begin(), want.end(),
                   [](const Job& a, const Job& b) { return a.arrival_s < b.arrival_s; });
  ASSERT_EQ(back->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    const Job& a = want[i];
    const Job& b = (*back)[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.model_name, b.model_name);
    EXPECT_EQ(a.model, b.model);
    EXPECT_EQ(a.tokens, b.tokens);
    if (a.name == " edge space") {
      EXPECT_DOUBLE_EQ(a.arrival_s, b.arrival_s);
    } else {
      EXPECT_EQ(a.arrival_s, b.arrival_s);  // exactly
    }
    EXPECT_EQ(a.deadline_s, b.deadline_s);
    EXPECT_EQ(a.min_gpus, b.min_gpus);
    EXPECT_EQ(a.max_gpus, b.max_gpus);
    EXPECT_EQ(a.gpus, b.gpus);
  }
}

// ---- JSON -------------------------------------------------------------------

TEST(JobsJson, ReadsPresetShapeAndModelObject) {
  const std::string text = R"({"jobs": [
    {"name": "a", "model": "gpt3-175b", "tokens": 3e9, "arrival_h": 2, "deadline_h": 12,
     "min_gpus": 64, "max_gpus": 512, "gpus": 256},
    {"model": "24x2048x16", "tokens": 1000000000, "arrival_h": 0.5, "deadline_h": 3},
    {"model": {"layers": 32, "hidden": 4096, "heads": 32, "seq": 4096}, "tokens": 1e9,
     "arrival_h": 1, "deadline_h": 30}
  ]})";
  Result<std::vector<Job>> r = read_jobs_json(text, "jobs.json", catalog());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  // Sorted by arrival: job2 (0.5 h), job3 (1 h), a (2 h).
  const Job& shape = (*r)[0];
  EXPECT_EQ(shape.name, "job2");
  EXPECT_EQ(shape.line, 2);
  EXPECT_EQ(shape.model, shape_model(24, 2048, 16));
  EXPECT_DOUBLE_EQ(shape.arrival_s, 1800);

  const Job& object = (*r)[1];
  EXPECT_EQ(object.name, "job3");
  EXPECT_EQ(object.model_name, "32x4096x32");
  simulator::Model want = shape_model(32, 4096, 32);
  want.seq_length = 4096;
  EXPECT_EQ(object.model, want);

  const Job& preset = (*r)[2];
  EXPECT_EQ(preset.name, "a");
  EXPECT_EQ(preset.model, catalog().model("gpt3-175b").value());
  EXPECT_EQ(preset.min_gpus, 64);
  EXPECT_EQ(preset.max_gpus, 512);
  EXPECT_EQ(preset.gpus, 256);
  EXPECT_DOUBLE_EQ(preset.deadline_s, 12 * 3600.0);
}

TEST(JobsJson, ErrorsNameThePath) {
  auto job = [](const std::string& fields) {
    return R"({"jobs": [{"model": "gpt3-175b", "tokens": 1e9, "arrival_h": 0, "deadline_h": 4},
                        {)" +
           fields + "}]}";
  };
  auto expect = [&](const std::string& text, const std::string& wanted) {
    const std::string e = json_error(text);
    EXPECT_NE(e.find(wanted), std::string::npos) << "got: " << e << "\nwanted: " << wanted;
    EXPECT_TRUE(one_line(e)) << e;
  };
  const std::string base = R"("tokens": 1e9, "arrival_h": 0, "deadline_h": 4)";
  expect(job(R"("model": "gpt-99", )" + base),
         "jobs.json: jobs[1].model: unknown model preset \"gpt-99\"");
  expect(job(R"("model": "gpt-99", )" + base), "llama2-7b");
  expect(job(R"("model": 7, )" + base), "jobs.json: jobs[1].model: expected a preset name");
  expect(job(R"("model": {"layers": 2, "hidden": 64, "heads": 3}, )" + base),
         "jobs.json: jobs[1].model.heads: 3 heads do not divide hidden size 64");
  expect(job(R"("model": {"layers": 2, "hidden": 64}, )" + base),
         "jobs.json: jobs[1].model.heads: must be positive");
  expect(job(R"("model": {"layrs": 2}, )" + base),
         "jobs.json: jobs[1].model: unknown key \"layrs\"");
  expect(job(R"("model": "gpt3-175b", "tokns": 1e9, "arrival_h": 0, "deadline_h": 4)"),
         "jobs.json: jobs[1].tokns: unknown key (expected name, model, tokens");
  expect(job(R"("model": "gpt3-175b", "arrival_h": 0, "deadline_h": 4)"),
         "jobs.json: jobs[1].tokens: missing required field");
  expect(job(R"("model": "gpt3-175b", "tokens": -5, "arrival_h": 0, "deadline_h": 4)"),
         "jobs.json: jobs[1].tokens: must be a positive number, got -5");
  expect(job(R"("model": "gpt3-175b", "tokens": "many", "arrival_h": 0, "deadline_h": 4)"),
         "jobs.json: jobs[1].tokens: expected a number, got a string");
  expect(job(R"("model": "gpt3-175b", "tokens": 1e9, "arrival_h": 5, "deadline_h": 4)"),
         "jobs.json: jobs[1].deadline_h: 4 is not after arrival_h 5");
  expect(job(R"("model": "gpt3-175b", "tokens": 1e9, "arrival_h": 4, "deadline_h": 4)"),
         "jobs.json: jobs[1].deadline_h: 4 is not after arrival_h 4");
  expect(job(R"("min_gpus": 512, "max_gpus": 64, "model": "gpt3-175b", )" + base),
         "jobs.json: jobs[1].min_gpus: 512 is more than max_gpus 64");
  expect(job(R"("gpus": 8.5, "model": "gpt3-175b", )" + base),
         "jobs.json: jobs[1].gpus: expected an integer");
  expect(job(R"("name": "job1", "model": "gpt3-175b", )" + base),
         "jobs.json: jobs[1].name: duplicate name \"job1\" (first in jobs[0])");
  expect(R"({"jobs": [{"model": "gpt3-175b", "tokens": 1e9,)"
         "\n  \"arrival_h\": 0 \"deadline_h\": 4}]}",
         "jobs.json:2:18: malformed JSON");
  expect(R"({"jobs": [], "comment": 1})", "jobs.json: comment: unknown key (expected jobs)");
  expect(R"({"jobs": []})", "jobs.json: jobs: no jobs");
  expect(R"({"job": []})", "jobs.json: job: unknown key");
  expect(R"({})", "jobs.json: jobs: missing required field");
  expect(R"({"jobs": {}})", "jobs.json: jobs: expected an array");
  expect(R"([1])", "jobs.json: expected an object");
  expect(R"({"jobs": [3]})", "jobs.json: jobs[0]: expected an object, got a number");
  expect(" \n", "jobs.json: empty file");
}

// ---- Files ------------------------------------------------------------------

TEST(JobsFile, ChoosesFormatByExtensionThenContent) {
  const std::string csv = std::string(kHeader) + "a,gpt3-175b,1e9,0,4\n";
  const std::string json =
      R"({"jobs": [{"model": "gpt3-175b", "tokens": 1e9, "arrival_h": 0, "deadline_h": 4}]})";
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{{"jobs_a.csv", csv},
                                                        {"jobs_b.JSON", json},
                                                        {"jobs_c.txt", csv},
                                                        {"jobs_d", "\xEF\xBB\xBF  \n" + json}}) {
    Result<std::vector<Job>> r = read_jobs_file(write_temp(name, text), catalog());
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().message();
    EXPECT_EQ(r->size(), 1u);
  }
  // A .json file is read as JSON even when it holds CSV.
  const std::string path = write_temp("jobs_e.json", csv);
  Result<std::vector<Job>> r = read_jobs_file(path, catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path + ":1:1: malformed JSON"), std::string::npos)
      << r.status().message();
}

TEST(JobsFile, ErrorsNameThePath) {
  const std::string missing = ::testing::TempDir() + "no_such_jobs.csv";
  Result<std::vector<Job>> r = read_jobs_file(missing, catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), missing + ": cannot open file");

  const std::string empty = write_temp("empty_jobs.json", "\n");
  r = read_jobs_file(empty, catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), empty + ": empty file");

  const std::string bad = write_temp("bad_jobs.csv", std::string(kHeader) + "a,gpt3-175b,-1,0,4\n");
  r = read_jobs_file(bad, catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), bad + ":2: tokens: must be a positive number, got -1");
}

TEST(ResolveModel, ShapesAndPresets) {
  Result<simulator::Model> m = resolve_model("96X12288X96", catalog());
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(*m, shape_model(96, 12288, 96));
  EXPECT_EQ(shape_string(*m), "96x12288x96");
  EXPECT_TRUE(resolve_model("llama2-7b", catalog()).ok());
  EXPECT_EQ(resolve_model("24x2048", catalog()).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(resolve_model("0x2048x16", catalog()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(resolve_model("99999999999x2048x16", catalog()).status().code(),
            StatusCode::kInvalidArgument);
}

// ---- Generator --------------------------------------------------------------

TEST(GenerateJobs, IsDeterministicPerSeed) {
  Result<std::vector<Job>> a = generate_jobs({.num_jobs = 64, .seed = 42});
  Result<std::vector<Job>> b = generate_jobs({.num_jobs = 64, .seed = 42});
  Result<std::vector<Job>> c = generate_jobs({.num_jobs = 64, .seed = 43});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(jobs_to_csv(*a), jobs_to_csv(*b));
  EXPECT_NE(jobs_to_csv(*a), jobs_to_csv(*c));
}

TEST(GenerateJobs, HasTheAdvertisedProperties) {
  GenerateOptions o;
  o.num_jobs = 500;
  o.seed = 3;
  o.cluster_gpus = 256;
  Result<std::vector<Job>> r = generate_jobs(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 500u);
  EXPECT_EQ(r->front().name, "job001");
  EXPECT_EQ(r->back().name, "job500");
  EXPECT_EQ(r->front().arrival_s, 0);
  std::set<std::string> shapes, names;
  for (size_t i = 0; i < r->size(); ++i) {
    const Job& j = (*r)[i];
    SCOPED_TRACE(j.name);
    EXPECT_TRUE(validate_job(j, j.name).ok());
    if (i > 0) {
      EXPECT_GE(j.arrival_s, (*r)[i - 1].arrival_s);
    }
    EXPECT_GT(j.deadline_s, j.arrival_s);
    EXPECT_GT(j.gpus, 0);
    EXPECT_LE(j.gpus, o.cluster_gpus);
    EXPECT_EQ(j.gpus % o.gpus_per_node, 0);
    EXPECT_EQ(j.min_gpus, 0);
    EXPECT_EQ(j.max_gpus, 0);
    EXPECT_EQ(j.tokens, std::round(j.tokens));
    EXPECT_EQ(j.model_name, shape_string(j.model));
    EXPECT_EQ(j.model.num_heads % 8, 0);
    // Ideal time at the request within [min, max] duration (tokens rounding aside).
    const double ideal = 6.0 * static_cast<double>(j.model.parameter_count()) * j.tokens /
                         (j.gpus * o.peak_flops * o.ideal_mfu);
    EXPECT_GE(ideal, o.min_duration_s * 0.999);
    EXPECT_LE(ideal, o.max_duration_s * 1.001);
    const double slack = (j.deadline_s - j.arrival_s) / ideal;
    EXPECT_GE(slack, o.min_slack * 0.999);
    EXPECT_LE(slack, o.max_slack * 1.001);
    shapes.insert(j.model_name);
    names.insert(j.name);
  }
  EXPECT_EQ(names.size(), 500u);
  EXPECT_TRUE(shapes.count("24x2048x16"));   // 1.3B
  EXPECT_TRUE(shapes.count("96x12288x96"));  // 175B
  EXPECT_EQ(shapes.size(), 7u);
}

TEST(GenerateJobs, SmallClusterCapsRequests) {
  Result<std::vector<Job>> r =
      generate_jobs({.num_jobs = 200, .seed = 5, .cluster_gpus = 60, .gpus_per_node = 8});
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const Job& j : *r) {
    EXPECT_LE(j.gpus, 56);
    EXPECT_EQ(j.gpus % 8, 0);
  }
}

TEST(GenerateJobs, MeanInterarrivalMatchesOption) {
  GenerateOptions o;
  o.num_jobs = 2000;
  o.seed = 11;
  o.mean_interarrival_s = 900;
  Result<std::vector<Job>> r = generate_jobs(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double mean = r->back().arrival_s / (o.num_jobs - 1);
  EXPECT_NEAR(mean, o.mean_interarrival_s, 0.15 * o.mean_interarrival_s);
}

TEST(GenerateJobs, RejectsBadOptions) {
  auto error = [](GenerateOptions o) {
    if (o.num_jobs == 0) o.num_jobs = 10;
    Result<std::vector<Job>> r = generate_jobs(o);
    return r.ok() ? "OK" : r.status().message();
  };
  auto starts = [](const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
  };
  EXPECT_TRUE(starts(error({.num_jobs = -1}), "generate: num_jobs: must be between 1 and 10000"));
  EXPECT_TRUE(starts(error({.num_jobs = 100001}), "generate: num_jobs:"));
  EXPECT_TRUE(starts(error({.mean_interarrival_s = 0}), "generate: mean_interarrival_s:"));
  EXPECT_TRUE(starts(error({.min_duration_s = -1}), "generate: min_duration_s:"));
  EXPECT_TRUE(
      starts(error({.min_duration_s = 10, .max_duration_s = 5}), "generate: max_duration_s:"));
  EXPECT_TRUE(starts(error({.min_slack = 0.5}), "generate: min_slack:"));
  EXPECT_TRUE(starts(error({.min_slack = 2, .max_slack = 1.5}), "generate: max_slack:"));
  EXPECT_TRUE(starts(error({.cluster_gpus = 4, .gpus_per_node = 8}), "generate: cluster_gpus:"));
  EXPECT_TRUE(starts(error({.gpus_per_node = 0}), "generate: gpus_per_node:"));
  EXPECT_TRUE(starts(error({.peak_flops = 0}), "generate: peak_flops:"));
  EXPECT_TRUE(starts(error({.ideal_mfu = 1.5}), "generate: ideal_mfu:"));
  EXPECT_TRUE(starts(error({.ideal_mfu = 0}), "generate: ideal_mfu:"));
  EXPECT_EQ(error({}), "OK");
}

}  // namespace
}  // namespace llmplan::planner::schedule

#include "scaling/loss_csv.h"

#include <gtest/gtest.h>

#include <string>

namespace llmplan::scaling {
namespace {

// Six well-formed rows after `header`, with cells in the order N, D, loss.
std::string rows(const std::string& header, const std::string& eol = "\n") {
  std::string text = header + eol;
  const char* data[] = {"1e8,2e9,3.1",    "2e8,4e9,2.9",      "4e8,8e9,2.7",
                        "8e8,1.6e10,2.5", "1.6e9,3.2e10,2.4", "3.2e9,6.4e10,2.3"};
  for (const char* row : data) text += std::string(row) + eol;
  return text;
}

// Options with one field set: opts([](LossCsvOptions& o) { o.loss_column = "x"; }).
template <typename Set>
LossCsvOptions opts(Set set) {
  LossCsvOptions o;
  set(o);
  return o;
}

std::string error_of(const std::string& text, const LossCsvOptions& options = {}) {
  Result<LossData> data = parse_loss_csv(text, "runs.csv", options);
  return data.ok() ? "OK" : data.status().message();
}

TEST(LossCsv, DetectsCommonSpellings) {
  for (const char* header : {"N,D,loss", "params,tokens,loss", "N_params,D_tokens,Loss",
                             "model size,training tokens,final loss", "Parameters,num_tokens,L"}) {
    Result<LossData> data = parse_loss_csv(rows(header), "runs.csv");
    ASSERT_TRUE(data.ok()) << header << ": " << data.status().message();
    ASSERT_EQ(data->points.size(), 6u);
    EXPECT_EQ(data->points[1], (LossPoint{2e8, 4e9, 2.9}));
    EXPECT_EQ(data->rows_read, 6);
  }
}

TEST(LossCsv, TokensFromFlops) {
  // Columns in another order, extra columns ignored, D = C/(6N).
  Result<LossData> data = parse_loss_csv(
      "x,Model Size,color,Training FLOP,loss\n"
      "1,1e9,#fff,6e19,2.5\n2,1e9,#fff,1.2e20,2.4\n3,2e9,#fff,1.2e20,2.35\n"
      "4,2e9,#fff,2.4e20,2.3\n5,4e9,#fff,2.4e20,2.25\n",
      "svg.csv");
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->flops_column, "Training FLOP");
  EXPECT_TRUE(data->tokens_column.empty());
  EXPECT_DOUBLE_EQ(data->points[0].n_tokens, 1e10);
  EXPECT_DOUBLE_EQ(data->points[4].n_tokens, 1e10);
  EXPECT_EQ(describe(*data),
            "N from \"Model Size\", D = C/(6N) from \"Training FLOP\", loss from \"loss\"; 5 "
            "rows; 5 used");
}

TEST(LossCsv, BomCrlfQuotesAndBlankLines) {
  std::string text = "\xEF\xBB\xBF" + rows("\"N\",\"D\",\"loss\"", "\r\n") + "\r\n\r\n";
  Result<LossData> data = parse_loss_csv(text, "runs.csv");
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->points.size(), 6u);
  EXPECT_EQ(data->params_column, "N");
  EXPECT_EQ(data->points[5].loss, 2.3);
  // A quoted header with a comma inside.
  data = parse_loss_csv(rows("\"params, total\",D,loss"), "runs.csv",
                        opts([](LossCsvOptions& o) { o.params_column = "params, total"; }));
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->params_column, "params, total");
}

TEST(LossCsv, FlagsNameColumns) {
  LossCsvOptions options;
  options.params_column = "size";
  options.tokens_column = "data";
  options.loss_column = "ppl_loss";
  Result<LossData> data = parse_loss_csv(rows("size,data,ppl_loss"), "runs.csv", options);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->points[0], (LossPoint{1e8, 2e9, 3.1}));
  // Naming --flops-column uses FLOPs even when a tokens column exists.
  options = {};
  options.flops_column = "C";
  data = parse_loss_csv(rows("N,C,loss"), "runs.csv", options);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_DOUBLE_EQ(data->points[0].n_tokens, 2e9 / (6 * 1e8));
}

// Issue 31, item 7: `fit --params-column loss --loss-column loss` "converged".
TEST(LossCsv, OneColumnInTwoRolesIsAnError) {
  LossCsvOptions options;
  options.params_column = "loss";
  options.loss_column = "loss";
  EXPECT_EQ(parse_loss_csv(rows("N,D,loss"), "runs.csv", options).status().message(),
            "runs.csv:1: column \"loss\" is both the parameters column and the loss column; name "
            "different columns with --params-column and --loss-column");
  options = {};
  options.tokens_column = "N";  // N is also detected as the parameters column
  EXPECT_NE(parse_loss_csv(rows("N,D,loss"), "runs.csv", options).status().message().find(
                "is both the parameters column and the tokens column"),
            std::string::npos);
}

// Issue 31, item 8: fit on 100,000 rows ran for minutes; the table holds at
// most kMaxLossRows (10,000) rows, which fit in about a minute.
TEST(LossCsv, HoldsAtMostTenThousandRows) {
  std::string text = "params,tokens,loss\n";
  for (size_t i = 0; i < kMaxLossRows; ++i) text += "1e8,2e9,3.1\n";
  ASSERT_EQ(kMaxLossRows, 10000u);
  Result<LossData> data = parse_loss_csv(text, "runs.csv", {});
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->points.size(), kMaxLossRows);
  text += "1e8,2e9,3.1\n";
  EXPECT_EQ(parse_loss_csv(text, "runs.csv", {}).status().message(),
            "runs.csv:10002: more than 10000 records (the limit for this file)");
}

TEST(LossCsv, ExcludedColumnAndDropHighestLoss) {
  const std::string text =
      "N_params,D_tokens,C_flops,loss,excluded_by_epoch\n"
      "1e8,2e9,1.2e18,9.0,True\n"
      "1e8,4e9,2.4e18,3.0,False\n2e8,4e9,4.8e18,2.8,false\n4e8,8e9,1.9e19,2.6,0\n"
      "8e8,1.6e10,7.7e19,2.5,no\n1.6e9,3.2e10,3.1e20,2.4,FALSE\n3.2e9,6.4e10,1.2e21,2.3,False\n";
  // By default the column is ignored.
  EXPECT_EQ(parse_loss_csv(text, "d.csv")->points.size(), 7u);
  LossCsvOptions options;
  options.honour_excluded = true;
  Result<LossData> data = parse_loss_csv(text, "d.csv", options);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->points.size(), 6u);
  EXPECT_EQ(data->rows_excluded, 1);
  EXPECT_EQ(data->excluded_column, "excluded_by_epoch");
  EXPECT_EQ(data->points[0].loss, 3.0);
  // Dropping the K highest losses instead (the same row here), keeping file order.
  options = {};
  options.drop_highest_loss = 2;
  data = parse_loss_csv(text, "d.csv", options);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->rows_dropped, 2);
  ASSERT_EQ(data->points.size(), 5u);
  EXPECT_EQ(data->points[0].loss, 2.8);
  EXPECT_EQ(data->points[4].loss, 2.3);
}

TEST(LossCsv, EveryBadInputIsAOneLineError) {
  EXPECT_EQ(error_of(""), "runs.csv: empty file (no header row)");
  EXPECT_EQ(error_of("\xEF\xBB\xBF\r\n  \n"), "runs.csv: empty file (no header row)");
  EXPECT_EQ(error_of(rows("N,D,score")),
            "runs.csv:1: no loss column (looked for loss, L, final loss, eval loss, val loss, "
            "validation loss, test loss); name it with --loss-column");
  EXPECT_EQ(error_of(rows("width,D,loss")).substr(0, 34), "runs.csv:1: no parameters column (");
  EXPECT_NE(error_of(rows("N,steps,loss")).find("no tokens column"), std::string::npos);
  EXPECT_NE(error_of(rows("N,steps,loss")).find("--tokens-column or --flops-column"),
            std::string::npos);
  EXPECT_EQ(error_of(rows("N,D,loss"), opts([](LossCsvOptions& o) { o.loss_column = "eval"; })),
            "runs.csv:1: no column \"eval\" (named by --loss-column); the columns are: N, D, "
            "loss");
  EXPECT_EQ(error_of("N,params,D,loss\n1,1,1,1\n"),
            "runs.csv:1: columns \"N\" and \"params\" both look like the parameters column; "
            "choose one with --params-column");
  EXPECT_EQ(error_of("N,D,loss\n1e8,2e9,3\n1e8,2e9,3\n1e8,2e9,3\n1e8,2e9,3\n"),
            "runs.csv: 4 usable data rows (4 read, 0 excluded, 0 dropped); a fit needs at "
            "least 5 (it has 5 unknowns)");
  EXPECT_EQ(error_of("N,D,loss\n"),
            "runs.csv: 0 usable data rows (0 read, 0 excluded, 0 dropped); a fit needs at least "
            "5 (it has 5 unknowns)");
  EXPECT_NE(error_of(rows("N,D,loss"), opts([](LossCsvOptions& o) { o.drop_highest_loss = 2; }))
                .find("4 usable data rows"),
            std::string::npos);

  std::string text = rows("N,D,loss");
  auto with_row = [&](const std::string& row) {
    return "N,D,loss\n" + row + "\n" + text.substr(9);
  };
  EXPECT_EQ(error_of(with_row("1e8,2e9,abc")),
            "runs.csv:2: column \"loss\": \"abc\" is not a decimal number");
  EXPECT_EQ(error_of(with_row("1e8,,3")), "runs.csv:2: column \"D\": \"\" is not a decimal number");
  EXPECT_EQ(error_of(with_row("1e8,2e9,3.1x")),
            "runs.csv:2: column \"loss\": \"3.1x\" is not a decimal number");
  EXPECT_EQ(error_of(with_row("1e8,2e9,NaN")),
            "runs.csv:2: column \"loss\": \"NaN\" is not a decimal number");
  EXPECT_EQ(error_of(with_row("1e8,2e9,nan")),
            "runs.csv:2: column \"loss\": \"nan\" is not a decimal number");
  EXPECT_EQ(error_of(with_row("0,2e9,3")), "runs.csv:2: column \"N\": must be positive, got 0");
  EXPECT_EQ(error_of(with_row("1e8,-2e9,3")),
            "runs.csv:2: column \"D\": must be positive, got -2e9");
  EXPECT_EQ(error_of(with_row("1e8,inf,3")),
            "runs.csv:2: column \"D\": \"inf\" is not a decimal number");
  EXPECT_EQ(error_of(with_row("1e8,1e999,3")),
            "runs.csv:2: column \"D\": \"1e999\" is out of range for a number");
  EXPECT_EQ(error_of(with_row("1e8,2e9")), "runs.csv:2: 2 cells, the header has 3");
  EXPECT_EQ(error_of(with_row("1e8,2e9,\"3")),
            "runs.csv:2: column \"loss\": unterminated quote (a quoted cell must close on its "
            "line)");
  // Line numbers count blank lines and CRLF files alike.
  EXPECT_EQ(error_of("N,D,loss\r\n\r\n1e8,2e9,x\r\n"),
            "runs.csv:3: column \"loss\": \"x\" is not a decimal number");
  EXPECT_EQ(error_of("N,D,loss,excluded\n1e8,2e9,3,maybe\n",
                     opts([](LossCsvOptions& o) { o.honour_excluded = true; })),
            "runs.csv:2: column \"excluded\": cannot parse \"maybe\" as true/false (or 1/0, "
            "yes/no)");
  EXPECT_NE(error_of(rows("N,D,loss"), opts([](LossCsvOptions& o) { o.honour_excluded = true; }))
                .find("no excluded column"),
            std::string::npos);
  EXPECT_NE(error_of(rows("N,D,loss"), opts([](LossCsvOptions& o) { o.drop_highest_loss = -1; }))
                .find("must be >= 0"),
            std::string::npos);
}

TEST(LossCsv, MissingFile) {
  Result<LossData> data = read_loss_csv("/nonexistent/runs.csv");
  EXPECT_EQ(data.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(data.status().message(), "/nonexistent/runs.csv: cannot open file");
}

TEST(LossCsv, ChinchillaFilesAgree) {
  // The published refit's 240 rows, selected two ways: the 5 highest losses
  // dropped from the SVG extraction, or the derived file's excluded flags.
  LossCsvOptions drop;
  drop.drop_highest_loss = 5;
  Result<LossData> svg = read_loss_csv(LLMPLAN_DATA_DIR "/chinchilla/svg_extracted_data.csv", drop);
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  LossCsvOptions excluded;
  excluded.honour_excluded = true;
  Result<LossData> derived =
      read_loss_csv(LLMPLAN_DATA_DIR "/chinchilla/chinchilla_NDCL_derived.csv", excluded);
  ASSERT_TRUE(derived.ok()) << derived.status().message();
  EXPECT_EQ(svg->rows_read, 245);
  EXPECT_EQ(derived->rows_excluded, 5);
  ASSERT_EQ(svg->points.size(), 240u);
  ASSERT_EQ(derived->points.size(), 240u);
  for (size_t i = 0; i < 240; ++i) {
    EXPECT_NEAR(svg->points[i].n_params / derived->points[i].n_params, 1, 1e-12) << i;
    EXPECT_NEAR(svg->points[i].n_tokens / derived->points[i].n_tokens, 1, 1e-12) << i;
    EXPECT_DOUBLE_EQ(svg->points[i].loss, derived->points[i].loss) << i;
  }
}

}  // namespace
}  // namespace llmplan::scaling

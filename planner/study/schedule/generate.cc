// generate_jobs: the synthetic trace generator (see job.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "planner/study/schedule/job.h"
#include "base/number_text.h"

namespace llmplan::planner::schedule {
namespace {

// One size class of the mix: a GPT-3 style shape, its share of the jobs and
// the range of GPU counts its jobs request (for 8-GPU nodes).
struct SizeClass {
  int layers, hidden, heads;
  double weight;
  int min_gpus, max_gpus;  // powers of two
};

constexpr std::array<SizeClass, 7> kMix = {{
    {24, 2048, 16, 0.25, 8, 32},      // 1.3B
    {32, 2560, 32, 0.20, 16, 64},     // 2.7B
    {32, 4096, 32, 0.18, 32, 128},    // 6.7B
    {40, 5120, 40, 0.15, 64, 256},    // 13B
    {48, 7168, 56, 0.10, 64, 256},    // 30B
    {80, 8192, 64, 0.07, 128, 512},   // 70B
    {96, 12288, 96, 0.05, 128, 512},  // 175B
}};

// splitmix64 (Steele, Lea, Flood 2014): tiny, fast and identical on every
// platform, which is all a trace generator needs.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

Status check_options(const GenerateOptions& o) {
  auto bad = [](const char* option, const std::string& why) {
    return Status::invalid_argument(std::string("generate: ") + option + ": " + why);
  };
  if (o.num_jobs < 1 || o.num_jobs > kMaxJobs) {
    return bad("num_jobs", "must be between 1 and " + std::to_string(kMaxJobs) + ", got " +
                               std::to_string(o.num_jobs));
  }
  if (!(o.mean_interarrival_s > 0) || !std::isfinite(o.mean_interarrival_s)) {
    return bad("mean_interarrival_s", "must be positive, got " + number_text(o.mean_interarrival_s));
  }
  if (!(o.min_duration_s > 0) || !std::isfinite(o.min_duration_s)) {
    return bad("min_duration_s", "must be positive, got " + number_text(o.min_duration_s));
  }
  if (!(o.max_duration_s >= o.min_duration_s) || !std::isfinite(o.max_duration_s)) {
    return bad("max_duration_s",
               number_text(o.max_duration_s) + " is less than min_duration_s " + number_text(o.min_duration_s));
  }
  if (!(o.min_slack >= 1) || !std::isfinite(o.min_slack)) {
    return bad("min_slack", "must be >= 1, got " + number_text(o.min_slack));
  }
  if (!(o.max_slack >= o.min_slack) || !std::isfinite(o.max_slack)) {
    return bad("max_slack", number_text(o.max_slack) + " is less than min_slack " + number_text(o.min_slack));
  }
  if (o.gpus_per_node < 1) {
    return bad("gpus_per_node", "must be >= 1, got " + std::to_string(o.gpus_per_node));
  }
  if (o.cluster_gpus < o.gpus_per_node) {
    return bad("cluster_gpus", std::to_string(o.cluster_gpus) + " is less than gpus_per_node " +
                                   std::to_string(o.gpus_per_node));
  }
  if (!(o.peak_flops > 0) || !std::isfinite(o.peak_flops)) {
    return bad("peak_flops", "must be positive, got " + number_text(o.peak_flops));
  }
  if (!(o.ideal_mfu > 0 && o.ideal_mfu <= 1)) {
    return bad("ideal_mfu", "must be in (0, 1], got " + number_text(o.ideal_mfu));
  }
  return Status();
}

// `seconds` rounded to a value that hours * kSecondsPerHour gives back, so
// the trace survives jobs_to_csv / read_jobs_csv unchanged.
double on_hour_grid(double seconds) { return (seconds / kSecondsPerHour) * kSecondsPerHour; }

}  // namespace

Result<std::vector<Job>> generate_jobs(const GenerateOptions& options) {
  LLMPLAN_RETURN_IF_ERROR(check_options(options));
  SplitMix64 rng(options.seed);
  const int node = options.gpus_per_node;
  const int largest = options.cluster_gpus / node * node;
  const int width = static_cast<int>(std::to_string(options.num_jobs).size());
  double total_weight = 0;
  for (const SizeClass& c : kMix) total_weight += c.weight;

  std::vector<Job> jobs;
  jobs.reserve(static_cast<size_t>(options.num_jobs));
  double clock_s = 0;
  for (int i = 0; i < options.num_jobs; ++i) {
    if (i > 0) clock_s += -options.mean_interarrival_s * std::log(1.0 - rng.uniform());

    // Size class, by weight.
    double pick = rng.uniform() * total_weight;
    size_t k = 0;
    while (k + 1 < kMix.size() && pick >= kMix[k].weight) pick -= kMix[k++].weight;
    const SizeClass& size = kMix[k];

    // Request: a power of two in [min, max], log-uniform, in whole nodes.
    int choices = 1;
    while ((size.min_gpus << choices) <= size.max_gpus) ++choices;
    const int step = std::min(choices - 1, static_cast<int>(rng.uniform() * choices));
    const int raw = size.min_gpus << step;
    int gpus = (raw + node - 1) / node * node;
    gpus = std::min(gpus, largest);

    Job job;
    job.model = shape_model(size.layers, size.hidden, size.heads);
    job.model_name = job.model.name;
    job.gpus = gpus;
    job.line = i + 1;
    std::string number = std::to_string(i + 1);
    job.name = "job" + std::string(static_cast<size_t>(width) - number.size(), '0') + number;

    // Tokens from a log-uniform ideal duration at the request.
    const double span = std::log(options.max_duration_s / options.min_duration_s);
    const double ideal_s = options.min_duration_s * std::exp(rng.uniform() * span);
    const double flops_per_s = gpus * options.peak_flops * options.ideal_mfu;
    const double flops_per_token = 6.0 * static_cast<double>(job.model.active_parameter_count());
    job.tokens = std::max(1.0, std::round(ideal_s * flops_per_s / flops_per_token));
    const double actual_ideal_s = job.tokens * flops_per_token / flops_per_s;

    const double slack =
        options.min_slack + rng.uniform() * (options.max_slack - options.min_slack);
    job.arrival_s = on_hour_grid(clock_s);
    job.deadline_s = on_hour_grid(clock_s + slack * actual_ideal_s);
    // Only absurd options (durations far below a second late in a long
    // trace) can make the deadline round onto the arrival.
    LLMPLAN_RETURN_IF_ERROR(validate_job(job, "generate: " + job.name));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace llmplan::planner::schedule

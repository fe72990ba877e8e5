// Replays a fuzz target's seed corpus without libFuzzer, in the ordinary
// build, so that `ctest` catches a seed that breaks a target's properties
// (tests/CMakeLists.txt: fuzz_seeds.TARGET). Each target's .cc is compiled
// here with LLVMFuzzerTestOneInput renamed to llmplan_replay_TARGET.
//
//   llmplan_seed_replay TARGET CORPUS_DIR
//
// Runs every file of CORPUS_DIR (sorted by name) through TARGET once; a
// violated property aborts, as under the fuzzer. Exit 0 when all ran, 1 for
// an unknown target, a missing or empty corpus or an unreadable file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#define LLMPLAN_REPLAY_TARGETS(X)                                                        \
  X(fuzz_constants) X(fuzz_hf_config) X(fuzz_interruptions) X(fuzz_jobs_csv)             \
  X(fuzz_jobs_json) X(fuzz_law) X(fuzz_loss_csv) X(fuzz_measured_csv) X(fuzz_nccl_tests) \
  X(fuzz_preset_file) X(fuzz_profile) X(fuzz_runs_file) X(fuzz_shapes)                  \
  X(fuzz_sim_config) X(fuzz_vtrain_config)

#define LLMPLAN_DECLARE(name) \
  extern "C" int llmplan_replay_##name(const uint8_t* data, size_t size);
LLMPLAN_REPLAY_TARGETS(LLMPLAN_DECLARE)
#undef LLMPLAN_DECLARE

namespace {

using TargetFn = int (*)(const uint8_t*, size_t);

struct Target {
  std::string_view name;
  TargetFn run;
};

#define LLMPLAN_ENTRY(name) Target{#name, &llmplan_replay_##name},
constexpr Target kTargets[] = {LLMPLAN_REPLAY_TARGETS(LLMPLAN_ENTRY)};
#undef LLMPLAN_ENTRY

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TARGET CORPUS_DIR\n", argv[0]);
    return 1;
  }
  const std::string_view name = argv[1];
  const auto* target = std::find_if(std::begin(kTargets), std::end(kTargets),
                                    [&](const Target& t) { return t.name == name; });
  if (target == std::end(kTargets)) {
    std::fprintf(stderr, "%s: unknown fuzz target\n", argv[1]);
    return 1;
  }
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(argv[2], ec)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  if (ec) {
    std::fprintf(stderr, "%s: cannot list the corpus: %s\n", argv[2], ec.message().c_str());
    return 1;
  }
  if (files.empty()) {
    std::fprintf(stderr, "%s: no seed files (a target's corpus must not be empty)\n", argv[2]);
    return 1;
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "%s: cannot read\n", file.c_str());
      return 1;
    }
    std::fprintf(stderr, "%s: %s\n", argv[1], file.filename().c_str());
    target->run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%s: %zu seeds replayed, every property held\n", argv[1], files.size());
  return 0;
}

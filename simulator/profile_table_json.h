// Reading and writing profile JSON files (the output of llmplan-profile,
// format in profiler/README.md) and loading them as a ProfileTable.
//
// Reading is strict: unknown keys, wrong types, missing required fields and
// impossible values are errors whose message starts with the file name and
// the JSON path, e.g. "h100.json: kernels[3].time_s: must be > 0". Files
// are read with read_input_file (base/input_file.h: at most 16 MiB);
// a profile holds at most kMaxProfileKernels kernels and
// kMaxProfileCollectives collectives (profile_table.h).
// Thread safety: every function reads only its arguments.
#ifndef LLMPLAN_SIMULATOR_PROFILE_TABLE_JSON_H_
#define LLMPLAN_SIMULATOR_PROFILE_TABLE_JSON_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/cost_model.h"
#include "simulator/profile_table.h"
#include "base/status.h"

namespace llmplan::simulator {

// The "format" and "format_version" a profile file must carry.
inline constexpr std::string_view kProfileFormat = "llmplan-profile";
inline constexpr int kProfileFormatVersion = 1;

// Parses and validates a profile document. ParseError for malformed JSON
// (with line:column), InvalidArgument naming the JSON path otherwise.
Result<Profile> parse_profile(std::string_view text, std::string_view source_name);

// Reads a profile file; NotFound/IoError name the path.
Result<Profile> read_profile_file(const std::string& path);

// Writes `profile` as a profile document (two-space indentation, stable key
// order). parse_profile(profile_to_json(p)) == p for every valid p.
std::string profile_to_json(const Profile& profile);

// Reads a shapes file for llmplan-profile --shapes: {"shapes": [{...}, ...]}
// with each entry as a profile's "shapes" entries (hidden, heads, seq,
// micro_batch, tp required; kv_heads, ffn, vocab, activation optional) and an
// optional "note". Errors name the file and path; an empty list is an error.
Result<std::vector<ProfileShape>> read_profile_shapes_file(const std::string& path);
Result<std::vector<ProfileShape>> parse_profile_shapes(std::string_view text,
                                                       std::string_view source_name);

// Loads a profile file as a cost model. Kernels, collectives and overheads
// the profile lacks are answered by `fallback` (see profile_table.h). The
// result converts to std::shared_ptr<const CostModel>; keep the typed
// pointer to read fallback_counts(). Errors as read_profile_file, plus
// InvalidArgument when `fallback` is null.
Result<std::shared_ptr<const ProfileTable>> load_profile_table(
    const std::string& path, std::shared_ptr<const CostModel> fallback);

// The same, from a document in memory (tests); `source_name` names it.
Result<std::shared_ptr<const ProfileTable>> parse_profile_table(
    std::string_view text, std::string_view source_name, std::shared_ptr<const CostModel> fallback);

}  // namespace llmplan::simulator

#endif  // LLMPLAN_SIMULATOR_PROFILE_TABLE_JSON_H_

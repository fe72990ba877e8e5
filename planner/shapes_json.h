// --shapes FILE: a user-given family of model shapes for the planner.
#ifndef LLMPLAN_PLANNER_SHAPES_JSON_H_
#define LLMPLAN_PLANNER_SHAPES_JSON_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/model.h"
#include "simulator/status.h"

namespace llmplan::planner {

// The most shapes a shapes file may hold (the planner simulates plans for
// every one).
inline constexpr size_t kMaxShapes = 1000;

// Reads a JSON array of model objects (simulator/model_json.h fields; each
// starts from a GPT with seq `seq_length` and vocab `vocab_size`), 1 to
// kMaxShapes of them, each valid (simulator::validate). Errors, one line:
// ParseError for malformed JSON (`source_name`:line:col), InvalidArgument
// naming the entry ("shapes.json[2].layers: ...") otherwise. Thread-safe.
Result<std::vector<simulator::Model>> parse_shapes_text(std::string_view text,
                                                        const std::string& source_name,
                                                        int seq_length, int vocab_size);

// Reads the file at `path` (simulator/input_file.h: at most 16 MiB) and
// parses it as above; NotFound/IoError/InvalidArgument name the path.
Result<std::vector<simulator::Model>> read_shapes_file(const std::string& path, int seq_length,
                                                       int vocab_size);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SHAPES_JSON_H_

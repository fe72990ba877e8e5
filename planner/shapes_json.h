// --shapes FILE: a user-given family of model shapes for the planner.
#ifndef LLMPLAN_PLANNER_SHAPES_JSON_H_
#define LLMPLAN_PLANNER_SHAPES_JSON_H_

#include <string>
#include <vector>

#include "simulator/model.h"
#include "simulator/status.h"

namespace llmplan::planner {

// Reads a JSON array of model objects (simulator/model_json.h fields; each
// starts from a GPT with seq `seq_length` and vocab `vocab_size`). Errors
// name the file and the entry.
Result<std::vector<simulator::Model>> read_shapes_file(const std::string& path, int seq_length,
                                                       int vocab_size);

}  // namespace llmplan::planner

#endif  // LLMPLAN_PLANNER_SHAPES_JSON_H_

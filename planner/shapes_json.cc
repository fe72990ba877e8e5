#include "planner/shapes_json.h"

#include "simulator/input_file.h"
#include "simulator/model_json.h"
#include "simulator/strict_json.h"

namespace llmplan::planner {

Result<std::vector<simulator::Model>> parse_shapes_text(std::string_view text,
                                                        const std::string& source_name,
                                                        int seq_length, int vocab_size) {
  LLMPLAN_ASSIGN_OR_RETURN(boost::json::value v, json::parse(text, source_name));
  if (!v.is_array() || v.as_array().empty()) {
    return Status::invalid_argument("--shapes " + source_name +
                                    ": expected a non-empty JSON array of models");
  }
  if (v.as_array().size() > kMaxShapes) {
    return Status::invalid_argument("--shapes " + source_name + ": " +
                                    std::to_string(v.as_array().size()) + " shapes, more than " +
                                    std::to_string(kMaxShapes));
  }
  std::vector<simulator::Model> out;
  int i = 0;
  for (const boost::json::value& e : v.as_array()) {
    simulator::Model m;
    m.name = "shape" + std::to_string(i);
    m.seq_length = seq_length;
    m.vocab_size = vocab_size;
    const std::string where = source_name + "[" + std::to_string(i) + "]";
    LLMPLAN_RETURN_IF_ERROR(simulator::apply_model_json(e, where, &m));
    LLMPLAN_RETURN_IF_ERROR(simulator::validate(m).with_prefix(where));
    out.push_back(m);
    ++i;
  }
  return out;
}

Result<std::vector<simulator::Model>> read_shapes_file(const std::string& path, int seq_length,
                                                       int vocab_size) {
  LLMPLAN_ASSIGN_OR_RETURN(std::string text, read_input_file(path));
  return parse_shapes_text(text, path, seq_length, vocab_size);
}

}  // namespace llmplan::planner

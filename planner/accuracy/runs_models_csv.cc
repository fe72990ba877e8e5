// The models table of runs files (runs_file.h, read_models_csv_text).
#include <utility>

#include "base/csv.h"
#include "planner/accuracy/runs_cells.h"
#include "planner/accuracy/runs_file.h"

namespace llmplan::planner {

using namespace runs_cells;  // NOLINT(google-build-using-namespace): the cell readers

namespace {

// The optional columns of the models table (kNoColumn where absent).
struct OptionalColumns {
  size_t top_k = kNoColumn, expert_ffn = kNoColumn, shared = kNoColumn, pattern = kNoColumn;
  size_t window = kNoColumn, full_every = kNoColumn, notes = kNoColumn, preset = kNoColumn;
};

// The mixture-of-experts cells of a row: their columns are required when
// the model has experts (column `experts_col` > 0) and must hold 0 when not.
Status read_moe_cells(const csv::CsvReader& reader, size_t experts_col, const OptionalColumns& oc,
                      ModelRow* row) {
  ModelRow& m = *row;
  const size_t top_k = oc.top_k, expert_ffn = oc.expert_ffn, shared = oc.shared;
  const size_t pattern = oc.pattern;
  const bool moe = m.moe_experts > 0;
  if (moe) {
    for (const auto& [c, name] : {std::pair{top_k, "moe_top_k"},
                                  std::pair{expert_ffn, "moe_expert_ffn"},
                                  std::pair{shared, "moe_shared_experts"},
                                  std::pair{pattern, "moe_layer_pattern"}}) {
      if (c == kNoColumn) {
        return Status::parse_error(reader.where(experts_col) + ": model \"" + m.name +
                                   "\" has " + std::to_string(m.moe_experts) +
                                   " experts but the table has no column \"" + name + "\"");
      }
    }
  }
  if (top_k != kNoColumn) {
    LLMPLAN_ASSIGN_OR_RETURN(m.moe_top_k, positive(reader, top_k, /*zero_ok=*/true));
  }
  if (expert_ffn != kNoColumn) {
    LLMPLAN_ASSIGN_OR_RETURN(m.moe_expert_ffn, positive(reader, expert_ffn, /*zero_ok=*/true));
  }
  if (shared != kNoColumn) {
    LLMPLAN_ASSIGN_OR_RETURN(m.moe_shared_experts, positive(reader, shared, /*zero_ok=*/true));
  }
  if (pattern != kNoColumn) m.moe_layer_pattern = reader.cell(pattern);
  if (moe && (m.moe_top_k < 1 || m.moe_top_k > m.moe_experts)) {
    return Status::parse_error(reader.where(top_k) + ": must be from 1 to moe_experts (" +
                               std::to_string(m.moe_experts) + "), got " + reader.cell(top_k));
  }
  if (!moe) {
    for (const auto& [c, v] : {std::pair{top_k, m.moe_top_k},
                               std::pair{expert_ffn, m.moe_expert_ffn},
                               std::pair{shared, m.moe_shared_experts}}) {
      if (v != 0) {
        return Status::parse_error(reader.where(c) + ": must be 0 for a model without experts "
                                   "(moe_experts 0), got " + reader.cell(c));
      }
    }
  }
  return Status();
}

// The attention window (its columns, else the shape notes), the notes'
// missing features and SwiGLU clamp.
Status read_shape_cells(const csv::CsvReader& reader, const OptionalColumns& oc, ModelRow* row) {
  ModelRow& m = *row;
  const size_t window = oc.window, full_every = oc.full_every, notes = oc.notes;
  if (window != kNoColumn || full_every != kNoColumn) {
    if (window != kNoColumn) {
      LLMPLAN_ASSIGN_OR_RETURN(m.sliding_window, positive(reader, window, /*zero_ok=*/true));
    }
    if (full_every != kNoColumn) {
      LLMPLAN_ASSIGN_OR_RETURN(m.full_attention_every,
                               positive(reader, full_every, /*zero_ok=*/true));
    }
  } else if (notes != kNoColumn) {
    window_from_notes(reader.cell(notes), &m.sliding_window, &m.full_attention_every);
  }
  if (notes != kNoColumn) m.missing_features = missing_from_notes(reader.cell(notes));
  if (notes != kNoColumn && m.activation == "swiglu") {
    m.activation_clamp = number_after(lower(reader.cell(notes)), "clamp");
  }
  return Status();
}

}  // namespace

Result<std::vector<ModelRow>> read_models_csv_text(std::string_view text,
                                                   const std::string& source_name) {
  csv::CsvReader reader(text, source_name, kMaxRunsFileRows);
  LLMPLAN_RETURN_IF_ERROR(reader.read_header());
  enum { kName, kLayers, kHidden, kHeads, kKv, kHeadDim, kFfn, kVocab, kAct, kTied, kPos, kBias,
         kExperts };
  LLMPLAN_ASSIGN_OR_RETURN(
      const std::vector<size_t> col,
      find_columns(reader,
                   {"model", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab",
                    "activation", "tied_embeddings", "positions", "linear_bias", "moe_experts"},
                   source_name));
  OptionalColumns oc;
  oc.top_k = optional_column(reader, "moe_top_k");
  oc.expert_ffn = optional_column(reader, "moe_expert_ffn");
  oc.shared = optional_column(reader, "moe_shared_experts");
  oc.pattern = optional_column(reader, "moe_layer_pattern");
  oc.window = optional_column(reader, "sliding_window");
  oc.full_every = optional_column(reader, "full_attention_every");
  oc.notes = optional_column(reader, "shape_notes");
  oc.preset = optional_column(reader, "llmplan_preset");
  return read_rows<ModelRow>(reader, source_name,
                             [&](const std::vector<ModelRow>& out, ModelRow* row) -> Status {
    ModelRow& m = *row;
    m.name = reader.cell(col[kName]);
    if (m.name.empty()) return Status::parse_error(reader.where(col[kName]) + ": empty model name");
    for (const ModelRow& o : out) {
      if (o.name == m.name) {
        return Status::parse_error(reader.where(col[kName]) + ": model \"" + m.name +
                                   "\" already defined on line " + std::to_string(o.line));
      }
    }
    for (const auto& [field, c] : {std::pair{&m.layers, kLayers}, std::pair{&m.hidden, kHidden},
                                   std::pair{&m.heads, kHeads}, std::pair{&m.kv_heads, kKv},
                                   std::pair{&m.head_dim, kHeadDim}, std::pair{&m.ffn, kFfn},
                                   std::pair{&m.vocab, kVocab}}) {
      LLMPLAN_ASSIGN_OR_RETURN(*field, positive(reader, col[c]));
    }
    LLMPLAN_ASSIGN_OR_RETURN(m.moe_experts, positive(reader, col[kExperts], /*zero_ok=*/true));
    m.activation = lower(reader.cell(col[kAct]));
    m.positions = lower(reader.cell(col[kPos]));
    LLMPLAN_ASSIGN_OR_RETURN(m.tied_embeddings, boolean(reader, col[kTied]));
    LLMPLAN_ASSIGN_OR_RETURN(m.linear_bias, boolean(reader, col[kBias]));
    LLMPLAN_RETURN_IF_ERROR(read_moe_cells(reader, col[kExperts], oc, &m));
    LLMPLAN_RETURN_IF_ERROR(read_shape_cells(reader, oc, &m));
    if (oc.preset != kNoColumn) m.preset = reader.cell(oc.preset);
    return Status();
  });
}

}  // namespace llmplan::planner

#include "simulator/layers/layer_kind.h"

#include <atomic>
#include <string_view>

#include "simulator/layers/layer_part.h"

namespace llmplan::simulator::layers {

namespace {

// The registry: the kinds of the list below, then those registered while
// the program starts (LayerKindRegistration).
std::vector<LayerKindSpec>& registry() {
  static std::vector<LayerKindSpec> kinds = {
      // One line per layer kind added through the registry: its spec, e.g.
      // my_kind_spec(), from its header included above.
  };
  return kinds;
}

// Set at the registry's first read; registrations after it fail.
std::atomic<bool> frozen{false};

// The registry, frozen from now on (stored once: the simulations' threads
// then only read the flag's cache line).
const std::vector<LayerKindSpec>& read_registry() {
  if (!frozen.load(std::memory_order_relaxed)) frozen.store(true, std::memory_order_relaxed);
  return registry();
}

bool is_builtin_symbol(char c) { return std::string_view("M*-E").find(c) != std::string_view::npos; }

}  // namespace

void register_layer_kind(const LayerKindSpec& spec) {
  LLMPLAN_CHECK(!frozen.load(std::memory_order_relaxed));
  bool taken = is_builtin_symbol(spec.symbol);
  for (const LayerKindSpec& k : registry()) taken = taken || k.symbol == spec.symbol;
  LLMPLAN_CHECK(!taken && spec.validate && spec.parameters && spec.activation_bytes &&
                spec.flops_per_token && spec.make_part);
  registry().push_back(spec);
}

const LayerKindSpec* find_layer_kind(char symbol) {
  for (const LayerKindSpec& k : read_registry()) {
    if (k.symbol == symbol) return &k;
  }
  return nullptr;
}

const std::vector<LayerKindSpec>& registered_layer_kinds() { return read_registry(); }

bool is_layer_symbol(char c) { return is_builtin_symbol(c) || find_layer_kind(c) != nullptr; }

Status bad_field(const char* field, const std::string& why) {
  return Status::invalid_argument(std::string("model.") + field + ": " + why);
}

Status field_in_range(const char* field, int v, int lo, int hi) {
  if (v < lo) {
    return bad_field(field, std::string(lo == 0 ? "must not be negative" : "must be positive") +
                                ", got " + std::to_string(v));
  }
  if (v > hi) {
    return bad_field(field, "must be at most " + std::to_string(hi) + ", got " + std::to_string(v));
  }
  return Status();
}

int64_t norm_parameters(const Model& m) { return m.linear_bias ? 2LL * m.hidden_size : m.hidden_size; }

double rank_tokens(const Model& model, const Plan& plan) {
  return static_cast<double>(plan.micro_batch_size) * model.seq_length / plan.context_parallel;
}

}  // namespace llmplan::simulator::layers

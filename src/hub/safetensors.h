// What a safetensors checkpoint stores, read from headers only (never the weights): the 8-byte
// little-endian header length, then a JSON header {"name": {"dtype", "shape", "data_offsets"}}.
// https://github.com/huggingface/safetensors#format
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace vramplan::hub {

// huggingface_hub refuses headers above 25 MB; vramplan allows more but not without bound.
inline constexpr int64_t kMaxSafetensorsHeader = 100 << 20;

// Elements stored per module of the checkpoint: "embedding", "lm head", "vision tower +
// projector", "layer N" (decoder layer N, whatever prefix: model.layers.N, backbone.layers.N,
// transformer.h.N, language_model...layers.N) and "other" (final norm and the rest).
using ModuleCounts = std::map<std::string, int64_t>;

// The module a tensor name belongs to, as ModuleCounts keys it.
std::string module_of(std::string_view tensor_name);

struct TensorStats {
  std::map<std::string, int64_t> dtype_elements;  // "BF16" -> elements stored in that dtype
  ModuleCounts modules;
  int64_t tensors = 0;
  int64_t elements = 0;
  int64_t bytes = 0;  // tensor data, as data_offsets say
};

// The header length in the first 8 bytes; nullopt when there are fewer or it is beyond
// kMaxSafetensorsHeader.
std::optional<int64_t> safetensors_header_length(std::string_view first_bytes);

// Sums the tensors of one header. Returns the reason when the header is not a valid one.
std::variant<TensorStats, std::string> parse_safetensors_header(std::string_view header_json);

// Adds b's tensors to a's.
void add_stats(TensorStats& a, const TensorStats& b);

// A model.safetensors.index.json: the shard files (in order of first use) and the stored size.
struct SafetensorsIndex {
  std::vector<std::string> shards;
  std::optional<int64_t> total_size;  // metadata.total_size
};
std::variant<SafetensorsIndex, std::string> parse_safetensors_index(std::string_view json_text);

// What the checkpoint on the Hub holds, beside vramplan's own parameter count.
struct CheckpointSummary {
  std::string repo_id;
  std::string commit;
  std::string source;  // "model.safetensors.index.json + 4 shard headers", ...
  int64_t files = 0;
  int64_t total_bytes = 0;
  bool dtypes_known = false;  // false: only the index's total size was available
  TensorStats stats;
};

// {"source", "repo", "commit", "files", "total_bytes", "dtypes": {"BF16": n, ...}, "params"};
// dtypes and params are null when only the index was read.
nlohmann::json checkpoint_to_json(const CheckpointSummary& summary);
CheckpointSummary checkpoint_from_json(const nlohmann::json& json);  // REQUIRES: a valid summary

// One line for the estimate's notes: stored size and dtypes beside the computed count (no
// comparison when computed_params <= 0: the config could not be counted).
// With `computed_modules` (the same keys, from vramplan's count), a checkpoint more than 0.01%
// away from the count names the modules that differ; layers beyond the counted ones are
// reported as multi-token-prediction layers.
std::string checkpoint_note(const CheckpointSummary& summary, int64_t computed_params,
                            const ModuleCounts* computed_modules = nullptr);

}  // namespace vramplan::hub

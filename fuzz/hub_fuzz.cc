// What the Hub answers, parsed without a network (hub/): safetensors files (the 8-byte header
// length, then the JSON header), model.safetensors.index.json, and the model ids a user types.
// The first byte picks the reader, the rest is its input. Invariants: the tensor counts, elements
// and bytes of an accepted header are non-negative and the checkpoint summary's JSON (what
// /api/hub answers) parses and passes check_bytes; an index's total size is non-negative and its
// shards are safe file names; a rejection gives a reason.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_checks.h"
#include "fuzz_targets.h"
#include "hub/cache.h"
#include "hub/model_id.h"
#include "hub/safetensors.h"

namespace vramplan::fuzz {
namespace {

void check_stats(const hub::TensorStats& stats) {
  if (stats.tensors < 0 || stats.elements < 0 || stats.bytes < 0)
    fail("negative tensor stats", std::to_string(stats.bytes));
  int64_t sum = 0;
  for (const auto& [dtype, elements] : stats.dtype_elements) {
    if (elements < 0) fail("negative elements of a dtype", dtype);
    if (__builtin_add_overflow(sum, elements, &sum)) fail("dtype elements overflow", dtype);
  }
  if (sum != stats.elements) fail("dtype elements do not sum to the elements", "");
  hub::CheckpointSummary summary;
  summary.repo_id = "fuzz/model";
  summary.commit = std::string(40, 'a');
  summary.source = "model.safetensors header";
  summary.files = 1;
  summary.total_bytes = stats.bytes;
  summary.dtypes_known = true;
  summary.stats = stats;
  const nlohmann::json json = hub::checkpoint_to_json(summary);
  check_bytes(json);
  (void)nlohmann::json::parse(json.dump());
  (void)hub::checkpoint_note(summary, stats.elements);
}

void header(std::string_view text) {
  const auto parsed = hub::parse_safetensors_header(text);
  if (const auto* reason = std::get_if<std::string>(&parsed)) {
    if (reason->empty()) fail("a refused header without a reason", text);
    return;
  }
  check_stats(std::get<hub::TensorStats>(parsed));
}

void file(std::string_view bytes) {
  const std::optional<int64_t> length = hub::safetensors_header_length(bytes);
  if (!length) return;
  if (*length < 0 || *length > hub::kMaxSafetensorsHeader) fail("header length", "");
  if (static_cast<uint64_t>(*length) > bytes.size() - 8) return;  // a truncated file
  header(bytes.substr(8, static_cast<size_t>(*length)));
}

void index(std::string_view text) {
  const auto parsed = hub::parse_safetensors_index(text);
  if (const auto* reason = std::get_if<std::string>(&parsed)) {
    if (reason->empty()) fail("a refused index without a reason", text);
    return;
  }
  const auto& accepted = std::get<hub::SafetensorsIndex>(parsed);
  if (accepted.total_size && *accepted.total_size < 0) fail("negative total_size", text);
  for (const std::string& shard : accepted.shards)
    if (!hub::is_safe_repo_file(shard)) fail("an index accepted an unsafe shard name", shard);
}

void model_id(std::string_view text) {
  Result<hub::ModelRef> ref = hub::parse_model_ref(text);
  if (!ref) check_error(ref.error());
}

}  // namespace

int fuzz_hub(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      file(rest);
      break;
    case 1:
      header(rest);
      break;
    case 2:
      index(rest);
      break;
    default:
      model_id(rest);
      break;
  }
  return 0;
}

}  // namespace vramplan::fuzz

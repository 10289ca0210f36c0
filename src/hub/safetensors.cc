#include "hub/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "hub/cache.h"

namespace vramplan::hub {
namespace {

using nlohmann::json;
constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

bool checked_add(int64_t& sum, int64_t add) {
  if (add < 0 || sum > kMaxInt - add) return false;
  sum += add;
  return true;
}

// Elements of a tensor of that shape; nullopt when the shape is not a list of sizes or overflows.
std::optional<int64_t> element_count(const json& shape) {
  if (!shape.is_array()) return std::nullopt;
  int64_t count = 1;
  for (const json& dim : shape) {
    if (!dim.is_number_unsigned() && !(dim.is_number_integer() && dim.get<int64_t>() >= 0))
      return std::nullopt;
    const int64_t d = dim.get<int64_t>();
    if (d != 0 && count > kMaxInt / d) return std::nullopt;
    count *= d;
  }
  return count;
}

std::optional<int64_t> data_bytes(const json& offsets) {
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_integer() ||
      !offsets[1].is_number_integer())
    return std::nullopt;
  const int64_t begin = offsets[0].get<int64_t>();
  const int64_t end = offsets[1].get<int64_t>();
  if (begin < 0 || end < begin) return std::nullopt;
  return end - begin;
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

std::string decimal_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e12) return fmt::format("{:.2f} TB", b / 1e12);
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.2f} kB", b / 1e3);
  return fmt::format("{} B", bytes);
}

}  // namespace

std::string module_of(std::string_view name) {
  for (std::string_view v : {"vision", "visual", "multi_modal_projector", "mm_input_projection",
                             "mm_soft_emb_norm", "image_newline"})
    if (name.find(v) != name.npos) return "vision tower + projector";
  if (name.find("lm_head") != name.npos) return "lm head";
  for (std::string_view e : {"embed_tokens", "wte.", "wpe.", "word_embeddings", "tok_embeddings",
                             "embeddings.weight", "embedding.weight"})
    if (name.find(e) != name.npos) return "embedding";
  for (std::string_view prefix : {"layers.", "h.", "blocks."}) {
    for (size_t at = name.find(prefix); at != name.npos; at = name.find(prefix, at + 1)) {
      if (at > 0 && name[at - 1] != '.') continue;
      size_t end = at + prefix.size();
      size_t digits = end;
      while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') ++digits;
      if (digits > end && digits - end <= 6 && digits < name.size() && name[digits] == '.')
        return "layer " + std::string(name.substr(end, digits - end));
    }
  }
  return "other";
}

std::optional<int64_t> safetensors_header_length(std::string_view first_bytes) {
  if (first_bytes.size() < 8) return std::nullopt;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(first_bytes[i]);
  if (n == 0 || n > static_cast<uint64_t>(kMaxSafetensorsHeader)) return std::nullopt;
  return static_cast<int64_t>(n);
}

std::variant<TensorStats, std::string> parse_safetensors_header(std::string_view header_json) {
  const json header = json::parse(header_json, nullptr, /*allow_exceptions=*/false);
  if (!header.is_object()) return std::string("the safetensors header is not a JSON object");
  TensorStats stats;
  for (const auto& [name, tensor] : header.items()) {
    if (name == "__metadata__") continue;
    if (!tensor.is_object() || !tensor.contains("dtype") || !tensor["dtype"].is_string())
      return fmt::format("tensor {} has no dtype", name);
    const std::optional<int64_t> elements = element_count(tensor.value("shape", json()));
    const std::optional<int64_t> bytes = data_bytes(tensor.value("data_offsets", json()));
    if (!elements || !bytes) return fmt::format("tensor {} has an invalid shape or offsets", name);
    int64_t& per_dtype = stats.dtype_elements[tensor["dtype"].get<std::string>()];
    int64_t& per_module = stats.modules[module_of(name)];
    if (!checked_add(per_dtype, *elements) || !checked_add(per_module, *elements) ||
        !checked_add(stats.elements, *elements) || !checked_add(stats.bytes, *bytes))
      return std::string("the tensor sizes overflow 64 bits");
    ++stats.tensors;
  }
  return stats;
}

void add_stats(TensorStats& a, const TensorStats& b) {
  for (const auto& [dtype, n] : b.dtype_elements) a.dtype_elements[dtype] += n;
  for (const auto& [module, n] : b.modules) a.modules[module] += n;
  a.tensors += b.tensors;
  a.elements += b.elements;
  a.bytes += b.bytes;
}

std::variant<SafetensorsIndex, std::string> parse_safetensors_index(std::string_view json_text) {
  const json index = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
    return std::string("model.safetensors.index.json has no weight_map object");
  SafetensorsIndex out;
  std::set<std::string> seen;
  for (const auto& [tensor, file] : index["weight_map"].items()) {
    if (!file.is_string() || !is_safe_repo_file(file.get<std::string>()))
      return fmt::format("weight_map names an unusable shard for {}", tensor);
    if (seen.insert(file.get<std::string>()).second) out.shards.push_back(file.get<std::string>());
  }
  if (out.shards.empty()) return std::string("model.safetensors.index.json lists no shards");
  const json total = index.value("metadata", json::object()).value("total_size", json());
  if (total.is_number_integer() && total.get<int64_t>() >= 0) out.total_size = total.get<int64_t>();
  // Some exporters write the size as a float or a string.
  if (total.is_number_float() && total.get<double>() >= 0 && total.get<double>() < 9e18)
    out.total_size = static_cast<int64_t>(total.get<double>());
  return out;
}

json checkpoint_to_json(const CheckpointSummary& s) {
  json dtypes = json(nullptr);
  if (s.dtypes_known) {
    dtypes = json::object();
    for (const auto& [dtype, n] : s.stats.dtype_elements) dtypes[dtype] = n;
  }
  return {{"source", s.source},
          {"repo", s.repo_id},
          {"commit", s.commit},
          {"files", s.files},
          {"total_bytes", s.total_bytes},
          {"dtypes", dtypes},
          {"params", s.dtypes_known ? json(s.stats.elements) : json(nullptr)},
          {"modules", s.dtypes_known ? json(s.stats.modules) : json(nullptr)}};
}

CheckpointSummary checkpoint_from_json(const json& j) {
  CheckpointSummary s;
  s.source = j.value("source", "");
  s.repo_id = j.value("repo", "");
  s.commit = j.value("commit", "");
  s.files = j.value("files", int64_t{0});
  s.total_bytes = j.value("total_bytes", int64_t{0});
  s.dtypes_known = j.contains("dtypes") && j["dtypes"].is_object();
  if (s.dtypes_known) {
    for (const auto& [dtype, n] : j["dtypes"].items())
      s.stats.dtype_elements[dtype] = n.get<int64_t>();
    s.stats.elements = j.value("params", int64_t{0});
    if (j.contains("modules") && j["modules"].is_object())
      for (const auto& [module, n] : j["modules"].items())
        if (n.is_number_integer()) s.stats.modules[module] = n.get<int64_t>();
  }
  s.stats.bytes = s.total_bytes;
  return s;
}

namespace {

// "layer 61" -> 61, else -1.
int64_t layer_index(const std::string& module) {
  if (!module.starts_with("layer ")) return -1;
  return std::stoll(module.substr(6));
}

// The modules whose stored and counted sizes are more than 0.01% apart.
std::string module_differences(const ModuleCounts& stored, const ModuleCounts& counted) {
  int64_t counted_layers = 0;
  for (const auto& [module, n] : counted) counted_layers += layer_index(module) >= 0;
  std::vector<std::string> parts;
  int64_t extra_layers = 0, extra_values = 0;
  std::set<std::string> names;
  for (const auto& [module, n] : stored) names.insert(module);
  for (const auto& [module, n] : counted) names.insert(module);
  for (const std::string& module : names) {
    const int64_t a = stored.contains(module) ? stored.at(module) : 0;
    const int64_t b = counted.contains(module) ? counted.at(module) : 0;
    if (layer_index(module) >= counted_layers && b == 0) {
      ++extra_layers;
      extra_values += a;
      continue;
    }
    if (std::abs(static_cast<double>(a - b)) <= 1e-4 * static_cast<double>(std::max(a, b)))
      continue;
    parts.push_back(
        fmt::format("{} stores {} vs {} counted", module, with_commas(a), with_commas(b)));
  }
  if (extra_layers > 0)
    parts.push_back(
        fmt::format("{} layer(s) beyond the {} counted store {} (multi-token "
                    "prediction)",
                    extra_layers, counted_layers, with_commas(extra_values)));
  std::string text;
  for (size_t i = 0; i < parts.size() && i < 6; ++i) text += (i ? "; " : "") + parts[i];
  if (parts.size() > 6) text += fmt::format("; {} more", parts.size() - 6);
  return text;
}

}  // namespace

std::string checkpoint_note(const CheckpointSummary& s, int64_t computed_params,
                            const ModuleCounts* computed_modules) {
  std::string note = fmt::format("checkpoint of {} on the Hub ({}): {} stored", s.repo_id, s.source,
                                 decimal_bytes(s.total_bytes));
  if (!s.dtypes_known) return note + "; dtypes not available";
  std::string dtypes;
  for (const auto& [dtype, n] : s.stats.dtype_elements)
    dtypes += fmt::format("{}{} {}", dtypes.empty() ? "" : ", ", dtype, with_commas(n));
  note += fmt::format(" as {}; {} values in all", dtypes, with_commas(s.stats.elements));
  if (computed_params <= 0) return note;
  if (s.stats.elements == computed_params)
    return note + fmt::format(", the same as vramplan's parameter count");
  const double diff = 100.0 * static_cast<double>(s.stats.elements - computed_params) /
                      static_cast<double>(std::max<int64_t>(computed_params, 1));
  if (computed_modules != nullptr && !s.stats.modules.empty() && std::abs(diff) > 0.01) {
    const std::string where = module_differences(s.stats.modules, *computed_modules);
    if (!where.empty())
      note += fmt::format(" vs {} parameters counted by vramplan ({:+.2f}%): {}",
                          with_commas(computed_params), diff, where);
    if (!where.empty()) return note;
  }
  return note + fmt::format(
                    " vs {} parameters counted by vramplan ({:+.2f}%: quantization scales, "
                    "multi-token-prediction layers or buffers are stored too; packed quantized "
                    "weights hold several parameters per value)",
                    with_commas(computed_params), diff);
}

}  // namespace vramplan::hub

#include "interop/torchtitan/torchtitan_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "interop/import_builder.h"
#include "interop/structured_text.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

// Older spellings and the names torchtitan gives them now (config_manager.py of 2024 against
// config/job_config.py of 2025): a whole key, or a prefix ending in "." or "_".
struct Rename {
  const char* old_name;
  const char* name;
};
constexpr Rename kRenames[] = {
    {"training.batch_size", "training.local_batch_size"},
    {"training.data_parallel_", "parallelism.data_parallel_"},
    {"training.tensor_parallel_degree", "parallelism.tensor_parallel_degree"},
    {"training.compile", "compile.enable"},
    {"training.warmup_steps", "lr_scheduler.warmup_steps"},
    {"experimental.pipeline_parallel_", "parallelism.pipeline_parallel_"},
    {"experimental.context_parallel_", "parallelism.context_parallel_"},
    {"experimental.enable_async_tensor_parallel", "parallelism.enable_async_tensor_parallel"},
    {"float8.enable_fsdp_float8_all_gather",
     "quantize.linear.float8.enable_fsdp_float8_all_gather"},
    {"float8.precompute_float8_dynamic_scale_for_fsdp",
     "quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp"},
    {"float8.recipe_name", "quantize.linear.float8.recipe_name"},
    {"float8.filter_fqns", "quantize.linear.float8.filter_fqns"},
    {"float8.emulate", "quantize.linear.float8.emulate"},
    {"mx.", "quantize.linear.mx."},
    {"memory_estimation.enabled", "memory_estimation.enable"},
    {"checkpoint.enable_checkpoint", "checkpoint.enable"},
};

std::string current_name(const std::string& key) {
  for (const Rename& r : kRenames) {
    const std::string old_name = r.old_name;
    const bool prefix = old_name.back() == '.' || old_name.back() == '_';
    if (key == old_name) return r.name;
    if (prefix && key.rfind(old_name, 0) == 0) return r.name + key.substr(old_name.size());
  }
  return key;
}

// Sections and keys that change nothing vramplan counts: the job's bookkeeping, logging,
// checkpoints, learning-rate schedule, data, validation, communication timeouts, and switches
// that keep the same tensors.
constexpr const char* kNoEffectPrefixes[] = {
    "job.",
    "profiling.",
    "metrics.",
    "lr_scheduler.",
    "checkpoint.",
    "validation.",
    "comm.",
    "fault_tolerance.",
    "debug.",
    "memory_estimation.",
    "experimental.custom_",
    "training.dataset",
    "training.max_norm",
    "training.steps",
    "training.gc_",
    "training.seed",
    "training.deterministic",
    "training.dataloader.",
    "optimizer.lr",
    "optimizer.eps",
    "optimizer.weight_decay",
    "optimizer.beta",
    "model.hf_assets_path",
    "model.tokenizer_path",
    "model.print_after_conversion",
    "activation_checkpoint.preserve_rng_state",
    "activation_checkpoint.determinism_check",
    "activation_checkpoint.debug",
    "activation_checkpoint.early_stop",
    "activation_checkpoint.visualize_memory_budget_pareto",
    "parallelism.context_parallel_rotate_method",
    "parallelism.context_parallel_load_balancer",
    "parallelism.expert_parallel_comm_backend",
    "parallelism.pipeline_parallel_expert_parallel_overlap",
    "compile.backend",
    "quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp",
    "quantize.linear.float8.filter_fqns",
    "quantize.linear.float8.emulate",
    "quantize.linear.float8.recipe_name",
    "quantize.linear.mx.",
};

}  // namespace

Result<TitanKeys> TitanKeys::from_document(const json& doc) {
  TitanKeys keys;
  std::optional<Error> error;
  for_each_leaf(doc, [&](const std::string& path, const json& value) {
    if (error) return;
    const std::string name = current_name(path);
    TitanValue v{path, value, value_text(value)};
    auto it = keys.values_.find(name);
    if (it != keys.values_.end()) {
      if (it->second.value != value) {
        const bool this_is_older = path != name;
        const TitanValue& older = this_is_older ? v : it->second;
        const TitanValue& newer = this_is_older ? it->second : v;
        error = Error{older.written, older.text, "the value of " + newer.written,
                      fmt::format("{} = {} sets the same setting", newer.written, newer.text)};
      }
      if (path == name) std::swap(it->second, v);  // the current spelling is named
      keys.repeated_.emplace_back(std::move(v), it->second.written);
      return;
    }
    keys.values_.emplace(name, std::move(v));
  });
  if (error) return *error;
  return keys;
}

const TitanValue* TitanKeys::take(const std::string& key) {
  auto it = values_.find(key);
  if (it == values_.end()) return nullptr;
  taken_.insert(key);
  return &it->second;
}

const TitanValue* TitanKeys::peek(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

Result<int64_t> TitanKeys::integer(const TitanValue& v) const {
  return integer_value(v.written, v.value);
}

Result<bool> TitanKeys::boolean(const TitanValue& v) const {
  return bool_value(v.written, v.value);
}

Result<std::string> TitanKeys::text(const TitanValue& v) const {
  if (v.value.is_string()) return v.value.get<std::string>();
  if (v.value.is_number() || v.value.is_boolean()) return v.text;
  return Error{v.written, v.text, "a string", ""};
}

std::map<std::string, TitanValue> TitanKeys::untaken() const {
  std::map<std::string, TitanValue> out;
  for (const auto& [key, value] : values_)
    if (!taken_.count(key)) out.emplace(key, value);
  return out;
}

std::string titan_no_effect_reason(const std::string& key) {
  const bool none = std::any_of(std::begin(kNoEffectPrefixes), std::end(kNoEffectPrefixes),
                                [&](const char* p) { return key.rfind(p, 0) == 0; });
  return none ? kNoMemoryEffect : "";
}

}  // namespace vramplan::interop

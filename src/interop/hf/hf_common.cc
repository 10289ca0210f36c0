#include "interop/hf/hf_common.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "base/text.h"
#include "interop/structured_text.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"
#include "vramplan/training/finetune.h"

namespace vramplan::interop::hf {
namespace {

using nlohmann::json;

bool looks_like_directory(const std::string& name) {
  return name.rfind('/', 0) == 0 || name.rfind("./", 0) == 0 || name.rfind("../", 0) == 0 ||
         name.rfind('~', 0) == 0;
}

// transformers OptimizerNames (training_args.py), by what their states cost.
struct OptimRow {
  const char* name;
  OptimizerChoice choice;
};
// torch's AdamW runs its foreach implementation on CUDA unless fused=True: the step allocates a
// state-sized temporary (training/frameworks.cc, hf-trainer).
const OptimRow kOptims[] = {
    {"adamw_torch", {"adamw", true, {}, "torch AdamW (foreach)", ""}},
    {"adamw_hf", {"adamw", false, {}, "transformers' AdamW", ""}},
    {"adamw_torch_xla", {"adamw", true, {}, "torch AdamW", ""}},
    {"adamw_torch_fused", {"adamw", false, {}, "torch AdamW (fused)", ""}},
    {"adamw_apex_fused", {"adamw", false, {}, "apex FusedAdam", ""}},
    {"adamw_torch_npu_fused", {"adamw", false, {}, "torch AdamW (fused)", ""}},
    {"stable_adamw", {"adamw", false, {}, "StableAdamW (m and v)", ""}},
    {"paged_adamw_32bit", {"adamw", false, {}, "bitsandbytes paged 32-bit AdamW", ""}},
    {"adamw_bnb_8bit", {"adam8bit", {}, {}, "bitsandbytes 8-bit AdamW", ""}},
    {"adamw_8bit", {"adam8bit", {}, {}, "bitsandbytes 8-bit AdamW", ""}},
    {"paged_adamw_8bit", {"adam8bit", {}, {}, "bitsandbytes paged 8-bit AdamW", ""}},
    {"adamw_torch_8bit", {"adam8bit", {}, {}, "torchao 8-bit AdamW", ""}},
    {"adamw_torch_4bit",
     {"adamw", false, "fp4", "torchao 4-bit AdamW: m and v in 4 bits", "its block scales"}},
    {"adamw_anyprecision",
     {"adamw", false, {}, "AnyPrecisionAdamW", "state dtypes set in optim_args"}},
    {"adafactor", {"adafactor", {}, {}, "Adafactor (factored second moment)", ""}},
    {"lion_32bit", {"lion", {}, {}, "bitsandbytes Lion", ""}},
    {"paged_lion_32bit", {"lion", {}, {}, "bitsandbytes paged Lion", ""}},
    {"lion_8bit", {"lion", {}, "fp8", "bitsandbytes 8-bit Lion", "its block-wise absmax"}},
    {"paged_lion_8bit",
     {"lion", {}, "fp8", "bitsandbytes paged 8-bit Lion", "its block-wise absmax"}},
    {"sgd", {"sgd", {}, {}, "torch SGD (momentum 0 unless optim_args set it)", ""}},
    {"adagrad", {"sgd-momentum", {}, {}, "Adagrad: one state per parameter, as momentum", ""}},
    {"rmsprop", {"sgd-momentum", {}, {}, "RMSprop: one state per parameter, as momentum", ""}},
    {"rmsprop_bnb", {"sgd-momentum", {}, {}, "bitsandbytes RMSprop: one state", ""}},
    {"rmsprop_bnb_32bit", {"sgd-momentum", {}, {}, "bitsandbytes RMSprop: one state", ""}},
    {"rmsprop_bnb_8bit",
     {"sgd-momentum", {}, "fp8", "bitsandbytes 8-bit RMSprop", "its block-wise absmax"}},
    {"ademamix", {"adamw", {}, {}, "AdEMAMix", "its third state (a slow momentum)"}},
    {"ademamix_8bit", {"adam8bit", {}, {}, "8-bit AdEMAMix", "its third state"}},
    {"paged_ademamix_32bit", {"adamw", {}, {}, "paged AdEMAMix", "its third state"}},
    {"paged_ademamix_8bit", {"adam8bit", {}, {}, "paged 8-bit AdEMAMix", "its third state"}},
    {"schedule_free_adamw",
     {"adamw", {}, {}, "schedule-free AdamW", "its extra parameter-sized sequence"}},
    {"schedule_free_radam",
     {"adamw", {}, {}, "schedule-free RAdam", "its extra parameter-sized sequence"}},
    {"schedule_free_sgd",
     {"sgd-momentum", {}, {}, "schedule-free SGD", "its extra parameter-sized sequence"}},
    {"grokadamw", {"adamw", {}, {}, "GrokAdamW", "its gradient EMA"}},
};

constexpr const char* kOptimNames =
    "adamw_torch, adamw_torch_fused, adamw_hf, adamw_apex_fused, adamw_torch_xla, stable_adamw, "
    "paged_adamw_32bit, adamw_bnb_8bit, adamw_8bit, paged_adamw_8bit, adamw_torch_8bit, "
    "adamw_torch_4bit, adamw_anyprecision, adafactor, lion_32bit, lion_8bit, paged_lion_32bit, "
    "paged_lion_8bit, sgd, adagrad, rmsprop, rmsprop_bnb, rmsprop_bnb_8bit, rmsprop_bnb_32bit, "
    "ademamix, ademamix_8bit, paged_ademamix_32bit, paged_ademamix_8bit, schedule_free_adamw, "
    "schedule_free_radam, schedule_free_sgd, grokadamw";

}  // namespace

void set_model(ImportBuilder& out, std::string_view key, const std::string& name) {
  if (const Preset* preset = find_preset(name)) {
    out.set(key, name, "model", preset->name);
    return;
  }
  if (looks_like_directory(name) && !name.ends_with(".json")) {
    const std::string config = name + (name.ends_with('/') ? "" : "/") + "config.json";
    out.set(key, name, "model", config);
    return;
  }
  out.set(key, name, "model", name);
}

int64_t preset_hidden_size(const json& model) {
  if (!model.is_string()) return 0;
  const Preset* preset = find_preset(model.get<std::string>());
  if (preset == nullptr) return 0;
  Result<ParsedModel> parsed = parse_hf_config(preset->config, preset->name);
  return parsed ? parsed->model.hidden : 0;
}

std::vector<std::string> name_list(const json& value) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const json& v : value) out.push_back(value_text(v));
    return out;
  }
  std::string word;
  for (char c : value_text(value)) {
    if (c == ',' || c == ' ' || c == '[' || c == ']' || c == '\'' || c == '"') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

LoraTargets lora_targets_of(const std::vector<std::string>& modules) {
  // torchtune's names (models/llama3/_component_builders.py): output_proj, and the MLP's
  // w1 (gate), w2 (down), w3 (up).
  static const std::pair<const char*, const char*> kAliases[] = {
      {"output_proj", "o"}, {"w1", "gate"}, {"w2", "down"}, {"w3", "up"}};
  LoraTargets out;
  std::string text;
  for (const std::string& m : modules) {
    const std::string name = to_lower(m);
    if (name == "all-linear" || name == "all_linear") return {"all-linear", {}};
    std::string ours = name;
    for (const auto& [alias, target] : kAliases)
      if (name == alias) ours = target;
    if (!parse_lora_targets(ours)) {
      out.unknown.push_back(m);
      continue;
    }
    text += (text.empty() ? "" : ",") + ours;
  }
  if (!text.empty()) out.text = lora_targets_text(*parse_lora_targets(text));
  return out;
}

std::vector<std::string> peft_module_names(uint32_t targets) {
  if ((targets & kLoraAllLinear) == kLoraAllLinear) return {"all-linear"};
  std::vector<std::string> out;
  const std::string text = lora_targets_text(targets);
  for (const std::string& t : name_list(json(text)))
    out.push_back(t == "kv_a" ? "kv_a_proj_with_mqa" : t + "_proj");
  return out;
}

std::optional<OptimizerChoice> hf_optimizer(std::string_view name) {
  const std::string lower = to_lower(name);
  for (const OptimRow& row : kOptims)
    if (lower == row.name) return row.choice;
  return std::nullopt;
}

const char* hf_optimizer_names() { return kOptimNames; }

void set_optimizer(ImportBuilder& out, std::string_view key, std::string_view value,
                   const OptimizerChoice& c) {
  const std::string k(key);
  out.put("optimizer", c.optimizer, k);
  std::string what = "optimizer = " + c.optimizer + " (" + c.note;
  if (c.foreach_temp) {
    out.put("optimizer_foreach_temporaries", *c.foreach_temp, k);
    what += *c.foreach_temp ? "; a state-sized temporary at the step" : "; no step temporary";
  }
  if (c.state_dtype) {
    out.put("optimizer_dtype", *c.state_dtype, k);
    what += "; optimizer_dtype = " + *c.state_dtype;
  }
  out.understood(key, value, what + ")");
  if (!c.unmodelled.empty())
    out.warn(fmt::format("{} = {}: {} is not counted", key, value, c.unmodelled));
}

PrecisionPlan precision_plan(Precision precision, Weights weights) {
  const DType d = precision_dtype(precision);
  if (precision == Precision::kFp32 || weights == Weights::kPure) return {d, d, d, d, false, false};
  if (weights == Weights::kMaster)  // DeepSpeed (training/frameworks.cc): fp32 gradient partitions
    return {d, d, d, DType::kFp32, true, true};
  return {DType::kFp32, DType::kFp32, d, DType::kFp32, false, false};  // autocast over fp32
}

const char* precision_name(Precision precision) {
  return precision == Precision::kBf16 ? "bf16" : precision == Precision::kFp16 ? "fp16" : "fp32";
}

DType precision_dtype(Precision precision) {
  return precision == Precision::kBf16   ? DType::kBf16
         : precision == Precision::kFp16 ? DType::kFp16
                                         : DType::kFp32;
}

void set_precision(ImportBuilder& out, std::string_view key, std::string_view value,
                   Precision precision, Weights weights) {
  const PrecisionPlan p = precision_plan(precision, weights);
  const std::string k(key);
  out.put("param_dtype", std::string(dtype_name(p.param)), k);
  out.put("grad_dtype", std::string(dtype_name(p.grad)), k);
  out.put("activation_dtype", std::string(dtype_name(p.activation)), k);
  out.put("optimizer_dtype", std::string(dtype_name(p.optimizer)), k);
  out.put("master_weights", p.master_weights, k);
  out.put("fp32_grad_accum", p.fp32_grad_accum, k);
  const char* how = weights == Weights::kMaster     ? "weights in it, fp32 master copy"
                    : weights == Weights::kAutocast ? "fp32 weights, autocast"
                                                    : "weights, gradients and states in it";
  out.understood(key, value,
                 fmt::format("{} ({}): param_dtype = {}, grad_dtype = {}, activation_dtype = {}, "
                             "optimizer_dtype = {}, master_weights = {}, fp32_grad_accum = {}",
                             precision_name(precision), how, dtype_name(p.param),
                             dtype_name(p.grad), dtype_name(p.activation), dtype_name(p.optimizer),
                             p.master_weights, p.fp32_grad_accum));
}

std::optional<Precision> precision_of_dtype(std::string_view dtype) {
  std::string d = to_lower(dtype);
  if (d.rfind("torch.", 0) == 0) d = d.substr(6);
  if (d == "bf16" || d == "bfloat16") return Precision::kBf16;
  if (d == "fp16" || d == "float16" || d == "half") return Precision::kFp16;
  if (d == "fp32" || d == "float32" || d == "float") return Precision::kFp32;
  return std::nullopt;
}

std::optional<Error> set_agreeing(ImportBuilder& out, std::string_view key, std::string_view value,
                                  const std::string& setting, const json& json_value) {
  if (out.has(setting) && out.get(setting) != json_value)
    return Error{std::string(key), std::string(value),
                 fmt::format("{} (as {} says)", value_text(out.get(setting)), out.key_of(setting)),
                 fmt::format("it contradicts {}", out.key_of(setting))};
  out.set(key, value, setting, json_value);
  return std::nullopt;
}

bool bool_or(const json& value, bool fallback) {
  Result<bool> b = bool_value("", value);
  return b ? *b : fallback;
}

double number_or(const json& value, double fallback) {
  Result<double> n = number_value("", value);
  return n ? *n : fallback;
}

Result<int64_t> count_value(std::string_view key, const json& value) {
  Result<double> n = number_value(key, value);
  if (!n || *n < 0 || *n != std::floor(*n) || *n > 9e15)
    return Error{std::string(key), value_text(value), "a non-negative whole number (5e8 is fine)",
                 ""};
  return static_cast<int64_t>(*n);
}

}  // namespace vramplan::interop::hf

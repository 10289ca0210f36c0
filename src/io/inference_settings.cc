// Building an InferenceScenario from user settings: the same key → value map as training (CLI
// flags, scenario files, API requests), the model read by the shared resolve_model.
#include "vramplan/io/inference_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "base/text.h"
#include "io/setting_reader.h"
#include "vramplan/perf/hardware.h"
#include "vramplan/serving/inference.h"

namespace vramplan {
namespace {

using nlohmann::json;
using K = OptionKind;

bool has(const json& settings, const char* key) {
  return settings.contains(key) && !settings[key].is_null();
}

template <size_t N>
std::optional<Error> choice(const json& settings, const char* key,
                            const std::array<const char*, N>& names, size_t& out) {
  std::string text;
  if (auto e = read_text_setting(settings, key, text)) return e;
  if (!has(settings, key)) return std::nullopt;
  const std::string wanted = to_lower(text);
  std::string accepted;
  for (size_t i = 0; i < N; ++i) {
    if (wanted == names[i]) {
      out = i;
      return std::nullopt;
    }
    accepted += (i ? ", " : "") + std::string(names[i]);
  }
  return Error{key, text, accepted, ""};
}

std::optional<Error> format_setting(const json& settings, const char* key,
                                    std::optional<WeightFormat>& out) {
  std::string text;
  if (auto e = read_text_setting(settings, key, text)) return e;
  if (!has(settings, key)) return std::nullopt;
  out = parse_weight_format(text);
  if (!out) return Error{key, text, weight_format_choices(), "unknown weight format"};
  return std::nullopt;
}

// The model dtype: --dtype (vLLM / SGLang), else config.json's torch_dtype as vLLM's dtype=auto
// serves it (vllm/config/model.py _get_and_verify_dtype: fp32 checkpoints in 16 bits).
std::optional<Error> read_base_dtype(const json& settings, const ParsedModel& model, DType& base) {
  static constexpr std::array<const char*, 4> kNames = {"auto", "fp32", "bf16", "fp16"};
  static constexpr std::array<DType, 4> kDtypes = {DType::kBf16, DType::kFp32, DType::kBf16,
                                                   DType::kFp16};
  size_t index = 0;
  if (auto e = choice(settings, "dtype", kNames, index)) return e;
  base = index == 0 ? serving_dtype(model.torch_dtype) : kDtypes[index];
  return std::nullopt;
}

// The quantization_config a checkpoint is served with. --quantization on a checkpoint without one
// quantises at load time: fp8 with one scale per tensor (vLLM quantization/fp8.py
// Fp8LinearMethod.process_weights_after_loading, SGLang quantization/fp8.py), bitsandbytes to 4
// bits with BitsAndBytesConfig's defaults (fp4, no double quantisation; vLLM
// quantization/bitsandbytes.py). A quantised checkpoint keeps its own format.
Result<std::string> served_quantization(const json& settings, const ParsedModel& model,
                                        std::vector<std::string>& warnings) {
  std::string method;
  if (auto e = read_text_setting(settings, "quantization", method)) return *e;
  method = to_lower(method);
  if (method.empty() || method == "none") return model.quantization_config;
  if (!model.quantization_config.empty()) {
    const json qc = json::parse(model.quantization_config, nullptr, false);
    const std::string own = qc.is_object() ? to_lower(qc.value("quant_method", "")) : "";
    if (!own.empty() && method.find(own) == std::string::npos &&
        own.find(method) == std::string::npos)
      warnings.push_back(fmt::format(
          "quantization {}: the checkpoint is quantised with {} (config.json), which is what "
          "the engine loads",
          method, own));
    return model.quantization_config;
  }
  if (method == "fp8") return std::string(R"({"quant_method": "fp8"})");
  if (method == "bitsandbytes")
    return std::string(
        R"({"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "fp4",)"
        R"( "bnb_4bit_use_double_quant": false})");
  return Error{"quantization", method,
               "fp8 or bitsandbytes on a checkpoint without a quantization_config",
               "the other methods need a checkpoint quantised with them (config.json has no "
               "quantization_config)"};
}

// Formats from config.json (or --quantization), then --weight-dtype, then the per-module flags.
std::optional<Error> read_weights(const json& settings, const ParsedModel& model,
                                  ResolvedInference& out) {
  DType base = DType::kBf16;
  if (auto e = read_base_dtype(settings, model, base)) return e;
  Result<std::string> served = served_quantization(settings, model, out.warnings);
  if (!served) return served.error();
  Result<QuantizationConfig> qc = read_quantization_config(*served, base);
  if (!qc) return qc.error();
  ModuleFormats& f = out.scenario.weights;
  f = qc->formats;
  out.quantization = qc->method;
  out.warnings.insert(out.warnings.end(), qc->warnings.begin(), qc->warnings.end());
  std::optional<WeightFormat> all;
  if (auto e = format_setting(settings, "weight_dtype", all)) return e;
  if (all && is_float_format(*all)) {
    f = unquantized_formats(float_dtype(*all));
  } else if (all) {
    for (ModuleClass c : {ModuleClass::kAttention, ModuleClass::kMlp, ModuleClass::kExperts})
      f[c] = WeightQuant{*all};
  }
  const std::pair<const char*, ModuleClass> per_class[] = {
      {"attention_dtype", ModuleClass::kAttention},
      {"mlp_dtype", ModuleClass::kMlp},
      {"experts_dtype", ModuleClass::kExperts},
      {"embedding_dtype", ModuleClass::kEmbedding},
      {"lm_head_dtype", ModuleClass::kLmHead}};
  for (const auto& [key, module] : per_class) {
    std::optional<WeightFormat> one;
    if (auto e = format_setting(settings, key, one)) return e;
    if (one) f[module] = WeightQuant{*one, f[module].group_size, f[module].double_quant};
  }
  int64_t group = 0;
  bool double_quant = true;
  if (auto e = read_integer_setting(settings, "quant_group_size", group)) return e;
  if (auto e = read_bool_setting(settings, "nf4_double_quant", double_quant)) return e;
  if (has(settings, "quant_group_size") && (group < 1 || group > (int64_t{1} << 20)))
    return Error{"quant_group_size", std::to_string(group), "an integer from 1 to 1048576", ""};
  for (WeightQuant& q : f.by_class) {
    if (has(settings, "quant_group_size")) q.group_size = group;
    if (has(settings, "nf4_double_quant")) q.double_quant = double_quant;
  }
  return std::nullopt;
}

std::optional<Error> read_kv_dtype(const json& settings, InferenceScenario& s) {
  static constexpr std::array<const char*, 7> kNames = {"auto", "bf16", "fp16", "fp32",
                                                        "fp8",  "int8", "int4"};
  size_t index = 0;
  if (auto e = choice(settings, "kv_dtype", kNames, index)) return e;
  if (index == 0) {
    s.kv_dtype = s.weights.base == DType::kFp16   ? KvDtype::kFp16
                 : s.weights.base == DType::kFp32 ? KvDtype::kFp32
                                                  : KvDtype::kBf16;
  } else {
    s.kv_dtype = static_cast<KvDtype>(index - 1);
  }
  return std::nullopt;
}

std::optional<Error> read_optional_fraction(const json& settings, const char* key,
                                            std::optional<double>& out) {
  if (!has(settings, key)) return std::nullopt;
  double value = 0;
  if (auto e = read_number_setting(settings, key, value)) return e;
  out = value;
  return std::nullopt;
}

std::optional<Error> read_engine(const json& settings, InferenceScenario& s) {
  if (auto e = read_optional_fraction(settings, "gpu_memory_utilization", s.gpu_memory_utilization))
    return e;
  if (auto e = read_optional_fraction(settings, "mem_fraction_static", s.mem_fraction_static))
    return e;
  // SGLang's own setting names its engine unless the user named one.
  if (s.mem_fraction_static && !has(settings, "engine")) s.engine = ServingEngine::kSglang;
  size_t engine = static_cast<size_t>(s.engine);
  if (auto e = choice(settings, "engine", kServingEngineNames, engine)) return e;
  s.engine = static_cast<ServingEngine>(engine);
  s.block_size = s.engine == ServingEngine::kSglang ? 1 : 16;
  const std::pair<const char*, int64_t*> ints[] = {
      {"tp", &s.tp},
      {"pp", &s.pp},
      {"ep", &s.ep},
      {"dp", &s.dp},
      {"context", &s.context},
      {"batch", &s.batch},
      {"block_size", &s.block_size},
      {"max_num_batched_tokens", &s.max_num_batched_tokens},
      {"max_num_seqs", &s.max_num_seqs}};
  for (const auto& [key, target] : ints)
    if (auto e = read_integer_setting(settings, key, *target)) return e;
  if (has(settings, "context") && s.context <= 0)
    return Error{"context", std::to_string(s.context), "a positive number of tokens", ""};
  if (auto e = read_number_setting(settings, "sampler_bytes_per_logit", s.sampler_bytes_per_logit))
    return e;
  if (auto e = read_bool_setting(settings, "cuda_graphs", s.cuda_graphs)) return e;
  return read_bool_setting(settings, "cuda_graph_in_budget", s.cuda_graph_in_budget);
}

std::optional<Error> read_gib(const json& settings, const char* key, int64_t& bytes) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  double gib = static_cast<double>(bytes) / kGiB;
  if (auto e = read_number_setting(settings, key, gib)) return e;
  if (gib < 0 || gib > 64) return Error{key, fmt::format("{}", gib), "0 to 64 (GiB)", ""};
  bytes = static_cast<int64_t>(std::llround(gib * kGiB));
  return std::nullopt;
}

std::optional<Error> read_overheads(const json& settings, InferenceOverheads& o) {
  if (auto e = read_gib(settings, "cuda_context_gib", o.cuda_context_bytes)) return e;
  if (auto e = read_gib(settings, "nccl_gib_per_group", o.nccl_bytes_per_group)) return e;
  if (auto e = read_gib(settings, "non_torch_gib", o.non_torch_bytes)) return e;
  return read_gib(settings, "cuda_graph_gib", o.cuda_graph_bytes);
}

// A size in `unit`s (GiB, or SGLang's GB) as bytes; absent keeps 0.
std::optional<Error> read_size(const json& settings, const char* key, double unit,
                               const char* unit_name, int64_t& bytes) {
  if (!has(settings, key)) return std::nullopt;
  double value = 0;
  if (auto e = read_number_setting(settings, key, value)) return e;
  if (!std::isfinite(value) || value < 0 || value > 1048576)
    return Error{key, fmt::format("{}", value), fmt::format("0 to 1,048,576 ({})", unit_name), ""};
  bytes = static_cast<int64_t>(std::llround(value * unit));
  return std::nullopt;
}

// Serving offload (docs/offload.md): what the engines keep in host memory, and the node's RAM.
std::optional<Error> read_offload(const json& settings, ResolvedInference& out) {
  ServingOffload& o = out.scenario.offload;
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  if (auto e = read_size(settings, "cpu_offload_gib", kGiB, "GiB", o.cpu_offload_bytes)) return e;
  if (auto e = read_size(settings, "swap_space_gib", kGiB, "GiB", o.swap_space_bytes)) return e;
  if (auto e = read_size(settings, "kv_offload_gib", kGiB, "GiB", o.kv_offload_bytes)) return e;
  if (auto e = read_size(settings, "hicache_size_gb", 1e9, "GB", o.hicache_bytes)) return e;
  if (auto e = read_bool_setting(settings, "enable_hierarchical_cache", o.hierarchical_cache))
    return e;
  if (auto e = read_number_setting(settings, "hicache_ratio", o.hicache_ratio)) return e;
  for (const char* key : {"hicache_ratio", "hicache_size_gb"})
    if (has(settings, key) && !o.hierarchical_cache)
      return Error{key, settings[key].dump(), "with enable_hierarchical_cache true",
                   "SGLang reads it only with --enable-hierarchical-cache"};
  if (has(settings, "host_memory_gib")) {
    double gib = 0;
    if (auto e = read_number_setting(settings, "host_memory_gib", gib)) return e;
    if (!(gib > 0 && gib <= 1e7))
      return Error{"host_memory_gib", fmt::format("{}", gib),
                   "a capacity above 0 and at most 10,000,000 GiB", ""};
    out.host_memory_gib = gib;
  }
  return std::nullopt;
}

// The GPU whose total the fractions apply to, and vLLM's defaults for it (engine/arg_utils.py
// _set_default_args: GPUs with at least 70 GiB other than A100 get 8192 batched tokens and 1024
// sequences for `vllm serve`, others 2048 and 256; the sequences at most the batched tokens).
std::optional<Error> read_hardware(const json& settings, ResolvedInference& out) {
  InferenceScenario& s = out.scenario;
  if (auto e = read_text_setting(settings, "gpu", out.gpu)) return e;
  if (has(settings, "gpu_memory_gib")) {
    double gib = 0;
    if (auto e = read_number_setting(settings, "gpu_memory_gib", gib)) return e;
    if (gib <= 0 || gib > 1e6)
      return Error{"gpu_memory_gib", fmt::format("{}", gib),
                   "a capacity above 0 and at most 1,000,000 GiB", ""};
    out.gpu_memory_gib = gib;
  }
  const std::string chosen = out.gpu.empty() ? "h100-80gb" : out.gpu;
  const Gpu* gpu = builtin_gpus().find(chosen);
  if (gpu == nullptr) return Error{"gpu", chosen, builtin_gpus().ids(), "not in the GPU catalog"};
  s.gpu_total_bytes =
      out.gpu_memory_gib ? custom_gpu(*out.gpu_memory_gib).usable_bytes : gpu->usable_bytes;
  const bool large = s.gpu_total_bytes >= (int64_t{70} << 30) &&
                     (out.gpu_memory_gib || to_lower(chosen).find("a100") == std::string::npos);
  if (!has(settings, "max_num_batched_tokens")) s.max_num_batched_tokens = large ? 8192 : 2048;
  if (!has(settings, "max_num_seqs"))
    s.max_num_seqs = std::min<int64_t>(large ? 1024 : 256, s.max_num_batched_tokens);
  return std::nullopt;
}

}  // namespace

namespace {

Result<ResolvedInference> resolve_settings(const json& settings, const FileReader& read_file,
                                           const ModelFetcher& fetch_model) {
  Result<ParsedModel> model = resolve_model(settings, read_file, fetch_model);
  if (!model) return model.error();
  ResolvedInference out;
  out.scenario.model = model->model;
  out.warnings = model->warnings;
  if (auto e = read_weights(settings, *model, out)) return *e;
  if (auto e = read_kv_dtype(settings, out.scenario)) return *e;
  if (auto e = read_engine(settings, out.scenario)) return *e;
  if (auto e = read_overheads(settings, out.scenario.overheads)) return *e;
  if (auto e = read_hardware(settings, out)) return *e;
  if (auto e = read_offload(settings, out)) return *e;
  if (auto e = read_images(settings, out.scenario.images)) return *e;
  return out;
}

}  // namespace

Result<ResolvedInference> resolve_inference(const json& settings, const FileReader& read_file,
                                            const ModelFetcher& fetch_model) {
  if (!settings.is_object())
    return Error{"scenario", settings.dump().substr(0, 60), "a JSON object of settings", ""};
  if (auto e = unknown_setting(settings, inference_options(), "inference")) return *e;
  Result<SettingsWithImport> applied = apply_from(settings, ImportFor::kInfer);
  if (!applied) return applied.error();
  SettingsWithImport request = std::move(applied).value();
  Result<ResolvedInference> resolved = resolve_settings(request.settings, read_file, fetch_model);
  if (!request.imported) return resolved;
  if (!resolved) return name_as_imported(resolved.error(), *request.imported, settings);
  ResolvedInference out = std::move(resolved).value();
  out.warnings.insert(out.warnings.begin(), request.imported->warnings.begin(),
                      request.imported->warnings.end());
  out.imported = std::move(request.imported);
  return out;
}

}  // namespace vramplan

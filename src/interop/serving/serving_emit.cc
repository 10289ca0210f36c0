// The serving scenario as vLLM's or SGLang's launch command, in the shape of their documentation
// (`vllm serve MODEL --tensor-parallel-size 2 ...`, `python3 -m sglang.launch_server --model-path
// MODEL --tp-size 2 ...`). vramplan's own settings that no engine flag carries (the GPU, the batch
// of sequences asked about, the overhead allowances) go on a `# vramplan:` comment line, which
// --from reads back.
#include "interop/serving/serving_emit.h"

#include <fmt/format.h>

#include <vector>

#include "interop/emitters.h"
#include "interop/serving/serving_values.h"
#include "vramplan/interop/import.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

// Settings that reshape the model: an engine serves a checkpoint as it is.
constexpr const char* kModelShapeKeys[] = {"model_config",    "hidden_size",
                                           "num_layers",      "num_heads",
                                           "num_kv_heads",    "head_dim",
                                           "ffn_size",        "vocab_size",
                                           "tied_embeddings", "num_experts",
                                           "top_k",           "expert_ffn_size",
                                           "shared_experts",  "shared_expert_ffn_size"};

// Per-module formats: an engine quantises a checkpoint as a whole, or loads its own format.
constexpr const char* kModuleFormatKeys[] = {"attention_dtype", "mlp_dtype",     "experts_dtype",
                                             "embedding_dtype", "lm_head_dtype", "quant_group_size",
                                             "nf4_double_quant"};

// vramplan's settings no engine flag carries: written on the `# vramplan:` line.
constexpr const char* kBesideKeys[] = {
    "gpu",           "gpu_memory_gib", "cuda_context_gib",        "nccl_gib_per_group",
    "non_torch_gib", "cuda_graph_gib", "sampler_bytes_per_logit", "host_memory_gib"};

bool has(const json& s, const char* key) { return s.contains(key) && !s[key].is_null(); }

std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A word as a POSIX shell reads it back: quoted when it holds anything but plain characters.
std::string quoted(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_./:=@%+,-") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Flags {
  std::vector<std::pair<std::string, std::string>> list;  // flag, value ("" for a switch)
  void add(std::string flag, std::string value = "") {
    list.emplace_back(std::move(flag), std::move(value));
  }
  void add(std::string flag, int64_t value) { add(std::move(flag), std::to_string(value)); }
};

// The settings in effect: the user's, over what their "from" text held.
json effective(const json& settings) {
  Result<SettingsWithImport> merged = apply_from(settings, ImportFor::kInfer);
  return merged ? merged->settings : settings;
}

// The checkpoint the engine loads: a preset's Hub id, a Hub id, or a local directory.
Result<std::string> checkpoint(const std::string& format, const InferenceScenario& s,
                               const json& settings) {
  for (const char* key : kModelShapeKeys)
    if (has(settings, key))
      return cannot_emit(format,
                         fmt::format("an engine serves a checkpoint as it is, not "
                                     "reshaped by {}",
                                     key),
                         "a model by preset, Hub id or checkpoint directory, unchanged");
  const std::string model = has(settings, "model") && settings["model"].is_string()
                                ? settings["model"].get<std::string>()
                                : s.model.name;
  if (model.empty() || model == "custom")
    return cannot_emit(format, "the engine needs a checkpoint, and this model has none",
                       "a model by preset, Hub id or checkpoint directory");
  if (const Preset* preset = find_preset(model); preset != nullptr && !preset->hub_id.empty())
    return preset->hub_id;
  if (model.ends_with("/config.json")) return model.substr(0, model.size() - 12);
  if (model.ends_with(".json"))
    return cannot_emit(format, "the engine loads a checkpoint directory, not " + model,
                       "a model by preset, Hub id, or a checkpoint's config.json");
  return model;
}

// The checkpoint's own quantization_config, when the model is a preset that has one.
bool preset_quantized(const std::string& model) {
  const Preset* preset = find_preset(model);
  if (preset == nullptr) return false;
  Result<ParsedModel> parsed = parse_hf_config(preset->config, preset->name);
  return parsed && !parsed->quantization_config.empty();
}

// --dtype and --quantization from vramplan's weight settings.
std::optional<Error> weight_flags(const std::string& format, const json& settings,
                                  const std::string& model, Flags& f) {
  for (const char* key : kModuleFormatKeys)
    if (has(settings, key))
      return cannot_emit(format, fmt::format("the engine sets no format per module ({})", key),
                         "weight_dtype fp8 or a float dtype, or a checkpoint quantised so");
  std::string dtype = has(settings, "dtype") ? text_of(settings["dtype"]) : "auto";
  std::string quantization = has(settings, "quantization") ? text_of(settings["quantization"]) : "";
  if (has(settings, "weight_dtype")) {
    const std::string w = text_of(settings["weight_dtype"]);
    const std::optional<WeightFormat> parsed = parse_weight_format(w);
    if (parsed && is_float_format(*parsed) && !preset_quantized(model)) {
      dtype = std::string(dtype_name(float_dtype(*parsed)));
    } else if (parsed == WeightFormat::kFp8 && !preset_quantized(model)) {
      quantization = "fp8";
    } else {
      return cannot_emit(
          format,
          fmt::format("the engine quantises a checkpoint at load time to fp8 (per tensor) only, "
                      "and never dequantises one (weight_dtype {})",
                      w),
          "weight_dtype fp8 or a float dtype on an unquantised checkpoint, or a checkpoint "
          "quantised as " +
              w);
    }
  }
  if (dtype != "auto") f.add("--dtype", engine_dtype_name(dtype));
  if (!quantization.empty()) f.add("--quantization", quantization);
  return std::nullopt;
}

// --kv-cache-dtype, unless the KV cache follows the model dtype (auto).
std::optional<Error> kv_flag(const std::string& format, const InferenceScenario& s, Flags& f) {
  const KvDtype automatic = s.weights.base == DType::kFp16   ? KvDtype::kFp16
                            : s.weights.base == DType::kFp32 ? KvDtype::kFp32
                                                             : KvDtype::kBf16;
  if (s.kv_dtype == automatic) return std::nullopt;
  const bool vllm = s.engine == ServingEngine::kVllm;
  switch (s.kv_dtype) {
    case KvDtype::kFp8:
      f.add("--kv-cache-dtype", vllm ? "fp8" : "fp8_e4m3");
      return std::nullopt;
    case KvDtype::kBf16:
      f.add("--kv-cache-dtype", vllm ? "bfloat16" : "bf16");
      return std::nullopt;
    case KvDtype::kFp16:
      if (vllm) {
        f.add("--kv-cache-dtype", "float16");
        return std::nullopt;
      }
      break;
    default:
      break;
  }
  return cannot_emit(
      format,
      fmt::format("{} has no {} KV cache", vllm ? "vLLM" : "SGLang", kv_dtype_name(s.kv_dtype)),
      vllm ? "kv_dtype auto, bf16, fp16 or fp8" : "kv_dtype auto, bf16 or fp8");
}

// The `# vramplan:` line: what the estimate used that no engine flag says.
std::string beside_line(const InferenceScenario& s, const json& settings) {
  std::string line;
  for (const char* key : kBesideKeys)
    if (has(settings, key)) {
      std::string flag = std::string("--") + key;
      for (char& c : flag) c = c == '_' ? '-' : c;
      line += " " + flag + " " + quoted(text_of(settings[key]));
    }
  if (s.batch != 1) line += " --batch " + std::to_string(s.batch);
  return line.empty() ? "" : "# vramplan:" + line + "\n";
}

// The offload settings as the engine's flags (docs/offload.md, "Serving"); the core has refused
// those of the other engine.
void offload_flags(const InferenceScenario& s, const json& settings, Flags& f) {
  const std::pair<const char*, const char*> flags[] = {
      {"cpu_offload_gib", "--cpu-offload-gb"},
      {"swap_space_gib", "--swap-space"},
      {"kv_offload_gib", "--kv-offloading-size"},
      {"enable_hierarchical_cache", "--enable-hierarchical-cache"},
      {"hicache_ratio", "--hicache-ratio"},
      {"hicache_size_gb", "--hicache-size"}};
  for (const auto& [key, flag] : flags) {
    if (!has(settings, key) || (settings[key].is_number() && settings[key].get<double>() == 0))
      continue;
    const std::string value = text_of(settings[key]);
    if (std::string_view(key) == "enable_hierarchical_cache") {
      if (s.offload.hierarchical_cache) f.add(flag);
      continue;
    }
    f.add(flag, value);
    if (std::string_view(key) == "kv_offload_gib") f.add("--kv-offloading-backend", "native");
  }
}

std::string header(const std::string& format, const InferenceScenario& s, const std::string& what) {
  return fmt::format(
      "# {} on {} GPU{}: {}\n# with this run's layout, context, KV cache and memory settings, "
      "written by\n# vramplan (--emit {}); `vramplan infer --from` reads it back.\n",
      s.model.name.empty() ? "A model" : s.model.name, s.world_size(),
      s.world_size() == 1 ? "" : "s", what, format);
}

std::string command(const std::string& prefix, const Flags& f) {
  std::string out = prefix;
  for (const auto& [flag, value] : f.list)
    out += " \\\n    " + flag + (value.empty() ? "" : " " + quoted(value));
  return out + "\n";
}

std::optional<Error> engine_matches(const std::string& format, const InferenceScenario& s) {
  const ServingEngine wanted = format == "vllm" ? ServingEngine::kVllm : ServingEngine::kSglang;
  if (s.engine == wanted) return std::nullopt;
  return cannot_emit(
      format, fmt::format("the scenario follows {}'s memory conventions", engine_name(s.engine)),
      fmt::format("--emit {} (or engine {})", engine_name(s.engine), format));
}

}  // namespace

Result<std::string> emit_vllm(const InferenceScenario& s, const json& given) {
  const std::string format = "vllm";
  if (auto e = engine_matches(format, s)) return *e;
  const json settings = effective(given);
  Result<std::string> model = checkpoint(format, s, settings);
  if (!model) return model.error();
  if (s.ep > 1 && s.ep != s.tp * s.dp)
    return cannot_emit(format,
                       fmt::format("vLLM splits the experts over tp·dp = {} "
                                   "(--enable-expert-parallel) or over tp, not over ep {}",
                                   s.tp * s.dp, s.ep),
                       fmt::format("ep 1 or ep {}", s.tp * s.dp));
  Flags f;
  if (s.tp > 1) f.add("--tensor-parallel-size", s.tp);
  if (s.pp > 1) f.add("--pipeline-parallel-size", s.pp);
  if (s.dp > 1) f.add("--data-parallel-size", s.dp);
  if (s.ep > 1) f.add("--enable-expert-parallel");
  if (s.context > 0) f.add("--max-model-len", s.context);
  if (auto e = weight_flags(format, settings, *model, f)) return *e;
  if (auto e = kv_flag(format, s, f)) return *e;
  if (s.block_size != 16) f.add("--block-size", s.block_size);
  if (s.gpu_memory_utilization)
    f.add("--gpu-memory-utilization", fmt::format("{}", *s.gpu_memory_utilization));
  f.add("--max-num-batched-tokens", s.max_num_batched_tokens);
  f.add("--max-num-seqs", s.max_num_seqs);
  if (!s.cuda_graphs) f.add("--enforce-eager");
  offload_flags(s, settings, f);
  const std::string env =
      s.cuda_graphs && s.cuda_graph_in_budget ? "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 " : "";
  return header(format, s, "vLLM's OpenAI-compatible server") + beside_line(s, settings) +
         command(env + "vllm serve " + quoted(*model), f);
}

Result<std::string> emit_sglang(const InferenceScenario& s, const json& given) {
  const std::string format = "sglang";
  if (auto e = engine_matches(format, s)) return *e;
  const json settings = effective(given);
  Result<std::string> model = checkpoint(format, s, settings);
  if (!model) return model.error();
  if (s.ep > 1 && s.ep != s.tp)
    return cannot_emit(format,
                       fmt::format("SGLang splits the experts over the tp GPUs (--ep-size {}), "
                                   "not over ep {}",
                                   s.tp, s.ep),
                       fmt::format("ep 1 or ep {}", s.tp));
  if (s.cuda_graph_in_budget)
    return cannot_emit(format, "SGLang keeps CUDA graphs outside its static pool",
                       "cuda_graph_in_budget false");
  Flags f;
  f.add("--model-path", *model);
  if (s.tp > 1) f.add("--tp-size", s.tp);
  if (s.pp > 1) f.add("--pp-size", s.pp);
  if (s.dp > 1) f.add("--dp-size", s.dp);
  if (s.ep > 1) f.add("--ep-size", s.ep);
  if (s.context > 0) f.add("--context-length", s.context);
  if (auto e = weight_flags(format, settings, *model, f)) return *e;
  if (auto e = kv_flag(format, s, f)) return *e;
  if (s.block_size != 1) f.add("--page-size", s.block_size);
  if (s.mem_fraction_static)
    f.add("--mem-fraction-static", fmt::format("{}", *s.mem_fraction_static));
  f.add("--chunked-prefill-size", s.max_num_batched_tokens);
  f.add("--max-running-requests", s.max_num_seqs);
  if (!s.cuda_graphs) f.add("--disable-cuda-graph");
  offload_flags(s, settings, f);
  return header(format, s, "SGLang's server") + beside_line(s, settings) +
         command("python3 -m sglang.launch_server", f);
}

}  // namespace vramplan::interop

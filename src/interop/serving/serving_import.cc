// vLLM's and SGLang's launch commands as vramplan's serving settings. Each flag of the command is
// listed as understood (with the setting it made) or ignored (with why); flags that change memory
// in a way vramplan does not model also give a warning. The engine's own defaults that depend on
// several flags, and what the engine refuses, are in serving_engines.cc.
#include "interop/serving/serving_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "interop/serving/engine_flags.h"
#include "interop/serving/kv_connector.h"
#include "interop/serving/serving_importer.h"
#include "interop/serving/serving_values.h"
#include "interop/shell_words.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

const char* engine_label(ServingEngine e) { return e == ServingEngine::kVllm ? "vLLM" : "SGLang"; }

std::span<const FlagSpec> flags_of(ServingEngine e) {
  return e == ServingEngine::kVllm ? vllm_flags() : sglang_flags();
}

// A local checkpoint directory is read through its config.json, as the engines read it; a Hub id
// or a preset name stays as written (the preset, else the Hub client).
std::string model_setting(std::string value) {
  const bool path = value.rfind('/', 0) == 0 || value.rfind("./", 0) == 0 ||
                    value.rfind("../", 0) == 0 || value.rfind('~', 0) == 0;
  if (!path || value.ends_with(".json")) return value;
  while (value.size() > 1 && value.back() == '/') value.pop_back();
  return value + "/config.json";
}

std::optional<ModelConfig> preset_model(const std::string& name) {
  const Preset* preset = find_preset(name);
  if (preset == nullptr) return std::nullopt;
  Result<ParsedModel> parsed = parse_hf_config(preset->config, preset->name);
  if (!parsed) return std::nullopt;
  return parsed->model;
}

// Tokens and keys are not echoed back (a pasted `docker run -e HF_TOKEN=...`, --api-key): a name
// with a word TOKEN, KEY, SECRET or PASSWORD (not --tokenizer, --max-num-batched-tokens).
bool is_secret(const std::string& name) {
  std::string word;
  for (size_t i = 0; i <= name.size(); ++i) {
    const char c = i < name.size() ? name[i] : '-';
    if (c == '-' || c == '_') {
      if (word == "TOKEN" || word == "KEY" || word == "SECRET" || word == "PASSWORD") return true;
      word.clear();
    } else {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  return false;
}
constexpr const char* kHidden = "(not shown)";

// The value as listed: as written, "true" for a bare switch ("false" for its --no- form), as the
// Megatron importer lists its flags.
std::string shown(const ServingArg& a) {
  return is_secret(a.name) && !a.value.empty() ? kHidden : a.value;
}

bool truthy(const std::string& v) {
  return v == "true" || v == "True" || v == "TRUE" || v == "1" || v == "yes";
}

class Importer {
 public:
  Importer(ServingState& st, ImportBuilder& out) : st_(st), out_(out) {}

  std::optional<Error> run(const SplitArgs& split) {
    for (const ServingArg& a : split.args)
      if (a.spec && a.spec->action == Action::kDpAttention)
        st_.dp_attention.set(truthy(a.value), a.written);
      else if (a.spec && a.spec->action == Action::kHierarchicalCache)
        hicache_ = truthy(a.value);
    std::map<std::string, size_t> last;
    for (const ServingArg& a : split.args) last[a.name + "." + a.subkey] = a.index;
    if (auto e = read_positionals(split.positionals)) return e;
    for (const ServingArg& a : split.args) {
      if (last[a.name + "." + a.subkey] != a.index) {
        out_.ignore(a.written, shown(a), "given again later: the engine's parser keeps the last");
        continue;
      }
      if (auto e = read(a)) return e;
    }
    return std::nullopt;
  }

 private:
  std::optional<Error> read_positionals(const std::vector<std::string>& words) {
    for (size_t i = 0; i < words.size(); ++i) {
      // `vllm serve MODEL`: the model is the one positional argument
      // (vllm/entrypoints/cli/serve.py); the vllm/vllm-openai image runs `vllm serve` with the
      // arguments after the image.
      const bool serve =
          st_.engine_key == "vllm serve" || st_.engine_key.rfind("docker run", 0) == 0;
      if (i == 0 && st_.engine == ServingEngine::kVllm && serve) {
        set_model("vllm serve MODEL", words[i]);
        continue;
      }
      out_.ignore(words[i], "", fmt::format("not an argument of {}", st_.engine_key));
    }
    return std::nullopt;
  }

  void set_model(const std::string& key, const std::string& value) {
    st_.model = model_setting(value);
    st_.preset = preset_model(st_.model);
    out_.set(key, value, "model", st_.model);
  }

  std::optional<Error> read(const ServingArg& a) {
    if (a.spec == nullptr) {
      out_.ignore(
          a.written, shown(a),
          fmt::format("not a {} argument vramplan knows: not read", engine_label(st_.engine)));
      out_.warn(
          fmt::format("{} is not a {} argument vramplan knows: if it changes memory, the "
                      "estimate does not see it",
                      a.written, engine_label(st_.engine)));
      return std::nullopt;
    }
    switch (a.spec->effect) {
      case Effect::kNoEffect:
        out_.ignore(a.written, shown(a),
                    *a.spec->note ? std::string(kNoMemoryEffect) + ": " + a.spec->note
                                  : std::string(kNoMemoryEffect));
        return std::nullopt;
      case Effect::kNotModelled:
        out_.unsupported(a.written, shown(a), a.spec->note);
        return std::nullopt;
      case Effect::kRead:
        break;
    }
    return act(a);
  }

  std::optional<Error> integer(const ServingArg& a, const char* setting, Read<int64_t>& into,
                               bool human = false) {
    Result<int64_t> n =
        human ? human_readable_int(a.written, a.value) : plain_int(a.written, a.value);
    if (!n) return n.error();
    into.set(*n, a.written);
    out_.set(a.written, a.value, setting, *n);
    return std::nullopt;
  }

  std::optional<Error> number(const ServingArg& a, const char* setting, Read<double>& into) {
    Result<double> d = plain_number(a.written, a.value);
    if (!d) return d.error();
    into.set(*d, a.written);
    out_.set(a.written, a.value, setting, *d);
    return std::nullopt;
  }

  // A switch as the setting it turns on or off (`invert`: --enforce-eager turns graphs off).
  void boolean(const ServingArg& a, const char* setting, bool invert) {
    const bool on = truthy(a.value);
    out_.set(a.written, shown(a), setting, invert ? !on : on);
  }

  std::optional<Error> act(const ServingArg& a) {
    switch (a.spec->action) {
      case Action::kModel:
        return model_flag(a);
      case Action::kTp:
        return integer(a, "tp", st_.tp);
      case Action::kPp:
        return integer(a, "pp", st_.pp);
      case Action::kDp:
        return dp_flag(a);
      case Action::kEp:
        return integer(a, "ep", st_.ep);
      case Action::kExpertParallel:
        st_.expert_parallel.set(truthy(a.value), a.written);
        return std::nullopt;
      case Action::kEnableEpMoe:
        st_.ep_moe.set(truthy(a.value), a.written);
        return std::nullopt;
      case Action::kDpAttention:
        return std::nullopt;  // read before the others (it changes what --dp-size means)
      case Action::kGpuUtilization:
        return number(a, "gpu_memory_utilization", st_.utilization);
      case Action::kMemFraction:
        return number(a, "mem_fraction_static", st_.mem_fraction);
      case Action::kContext:
        return context_flag(a);
      case Action::kBatchedTokens:
        return integer(a, "max_num_batched_tokens", st_.batched_tokens, true);
      case Action::kChunkedPrefillSize:
        return chunk_flag(a);
      case Action::kMaxSeqs:
        return integer(a, "max_num_seqs", st_.max_seqs);
      case Action::kEnforceEager:
      case Action::kDisableCudaGraph:
        boolean(a, "cuda_graphs", true);
        return std::nullopt;
      case Action::kKvDtype:
        return kv_flag(a);
      case Action::kDtype:
        return dtype_flag(a);
      case Action::kQuantization:
        return quantization_flag(a);
      case Action::kBlockSize: {
        Read<int64_t> unused;
        return integer(a, "block_size", unused);
      }
      case Action::kChunkedPrefill:
        st_.chunked_prefill.set(truthy(a.value), a.written);
        out_.understood(a.written, shown(a),
                        truthy(a.value) ? "chunked prefill on (vLLM V1's default)"
                                        : "chunked prefill off: a prompt is prefilled whole");
        return std::nullopt;
      case Action::kCompilationConfig:
        return compilation_flag(a);
      case Action::kOffloadGb:
        return offload_flag(a);
      case Action::kSwapSpace:
        return gib_flag(a, "swap_space_gib");
      case Action::kKvOffloadSize:
        st_.kv_offloading_key = a.written;
        return gib_flag(a, "kv_offload_gib");
      case Action::kKvTransferConfig:
        return read_kv_transfer_config(a, st_, out_);
      case Action::kKvOffloadBackend:
        return kv_backend_flag(a);
      case Action::kHierarchicalCache:
        boolean(a, "enable_hierarchical_cache", false);
        return std::nullopt;
      case Action::kHicacheRatio:
      case Action::kHicacheSize:
        return hicache_flag(a);
      case Action::kNone:
        break;
    }
    out_.ignore(a.written, shown(a), "not read");
    return std::nullopt;
  }

  std::optional<Error> model_flag(const ServingArg& a) {
    if (!st_.model.empty() && st_.model != model_setting(a.value))
      return Error{a.written, a.value,
                   fmt::format("the model given after `vllm serve` ({}), or no --model", st_.model),
                   "the command names two models"};
    set_model(a.written, a.value);
    return std::nullopt;
  }

  // SGLang's --dp-size under --enable-dp-attention splits the tp GPUs, not replicas of them.
  std::optional<Error> dp_flag(const ServingArg& a) {
    if (st_.engine == ServingEngine::kSglang && st_.dp_attention.value.value_or(false)) {
      Result<int64_t> n = plain_int(a.written, a.value);
      if (!n) return n.error();
      st_.dp.set(*n, a.written);
      out_.understood(a.written, a.value,
                      "attention replicas inside the tp GPUs (with --enable-dp-attention)");
      return std::nullopt;
    }
    return integer(a, "dp", st_.dp);
  }

  std::optional<Error> context_flag(const ServingArg& a) {
    if (a.value == "-1" || a.value == "auto") {  // vLLM: the longest context that fits
      out_.unsupported(a.written, shown(a),
                       "the engine picks the longest context that fits (vramplan takes the "
                       "model's max_position_embeddings; give --context)");
      return std::nullopt;
    }
    return integer(a, "context", st_.context, true);
  }

  // SGLang --chunked-prefill-size: -1 turns chunking off (server_args.py).
  std::optional<Error> chunk_flag(const ServingArg& a) {
    if (a.value == "-1") {
      out_.unsupported(a.written, shown(a),
                       "no chunked prefill: a whole prompt is one prefill (vramplan profiles "
                       "--max-num-batched-tokens tokens)");
      return std::nullopt;
    }
    return integer(a, "max_num_batched_tokens", st_.batched_tokens, true);
  }

  std::optional<Error> kv_flag(const ServingArg& a) {
    Result<KvDtypeRead> kv = kv_cache_dtype(st_.engine, a.written, a.value);
    if (!kv) return kv.error();
    out_.set(a.written, a.value, "kv_dtype", kv->setting);
    if (!kv->caveat.empty())
      out_.warn(fmt::format("{} {}: read as kv_dtype {}; {}", a.written, a.value, kv->setting,
                            kv->caveat));
    return std::nullopt;
  }

  std::optional<Error> dtype_flag(const ServingArg& a) {
    Result<std::string> d = model_dtype(a.written, a.value);
    if (!d) return d.error();
    out_.set(a.written, a.value, "dtype", *d);
    return std::nullopt;
  }

  std::optional<Error> quantization_flag(const ServingArg& a) {
    std::string method = a.value;
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (method == "none" || method.empty()) {
      out_.ignore(a.written, shown(a), "no quantization: the checkpoint's format");
      return std::nullopt;
    }
    out_.set(a.written, a.value, "quantization", method);
    return std::nullopt;
  }

  // --cpu-offload-gb: GiB per GPU in both engines (vLLM config/offload.py cpu_offload_gb,
  // SGLang server_args.py cpu_offload_gb × 1024**3).
  std::optional<Error> offload_flag(const ServingArg& a) {
    Result<double> gb = plain_number(a.written, a.value);
    if (!gb) return gb.error();
    if (*gb == 0) {
      out_.ignore(a.written, shown(a), std::string(kNoMemoryEffect) + ": nothing offloaded");
      return std::nullopt;
    }
    return gib_flag(a, "cpu_offload_gib");
  }

  // A size in GiB (--swap-space, --kv-offloading-size) as its setting; negative sizes are the
  // settings' error.
  std::optional<Error> gib_flag(const ServingArg& a, const char* setting) {
    Result<double> gib = plain_number(a.written, a.value);
    if (!gib) return gib.error();
    out_.set(a.written, a.value, setting, *gib);
    return std::nullopt;
  }

  // vLLM config/kv_offloading.py: native (OffloadingConnector) or lmcache; both keep the size in
  // pinned host memory, split over tp·pp.
  std::optional<Error> kv_backend_flag(const ServingArg& a) {
    if (a.value != "native" && a.value != "lmcache")
      return Error{a.written, a.value, "native or lmcache",
                   "vLLM's KV offloading backends (config/kv_offloading.py)"};
    out_.understood(a.written, a.value,
                    "where --kv-offloading-size's blocks live: pinned host memory either way");
    return std::nullopt;
  }

  // SGLang reads --hicache-ratio and --hicache-size only with --enable-hierarchical-cache;
  // --hicache-size 0 (its default) means the ratio.
  std::optional<Error> hicache_flag(const ServingArg& a) {
    if (!hicache_) {
      out_.ignore(a.written, shown(a),
                  std::string(kNoMemoryEffect) + ": without --enable-hierarchical-cache");
      return std::nullopt;
    }
    Result<double> v = plain_number(a.written, a.value);
    if (!v) return v.error();
    const bool size = a.spec->action == Action::kHicacheSize;
    if (size && *v == 0) {
      out_.understood(a.written, a.value, "0: the host pool follows --hicache-ratio");
      return std::nullopt;
    }
    out_.set(a.written, a.value, size ? "hicache_size_gb" : "hicache_ratio", *v);
    return std::nullopt;
  }

  std::optional<Error> compilation_flag(const ServingArg& a);
  void compilation_key(const std::string& key, const json& value);

  ServingState& st_;
  ImportBuilder& out_;
  bool hicache_ = false;  // --enable-hierarchical-cache given
};

// vLLM --compilation-config / -O: a JSON object, an optimisation level (-O3), or one key
// (--compilation-config.cudagraph_mode NONE). CUDA graphs follow cudagraph_mode
// (vllm/config/compilation.py CUDAGraphMode: NONE captures none).
std::optional<Error> Importer::compilation_flag(const ServingArg& a) {
  if (!a.subkey.empty()) {
    json value = json::parse(a.value, nullptr, false);
    compilation_key(a.written, value.is_discarded() ? json(a.value) : value);
    return std::nullopt;
  }
  if (Result<int64_t> level = plain_int(a.written, a.value)) {
    compilation_key(a.written + " (level)", *level);
    return std::nullopt;
  }
  const json config = json::parse(a.value, nullptr, false);
  if (config.is_discarded() || !config.is_object())
    return Error{a.written, a.value,
                 "an optimisation level (0-3) or a JSON object such as "
                 "'{\"cudagraph_mode\": \"NONE\"}'",
                 ""};
  for (auto it = config.begin(); it != config.end(); ++it)
    compilation_key(a.written + "." + it.key(), it.value());
  return std::nullopt;
}

void Importer::compilation_key(const std::string& key, const json& value) {
  const std::string text = value_text(value);
  const std::string name = key.substr(key.find('.') == std::string::npos ? 0 : key.rfind('.') + 1);
  if (name == "cudagraph_mode") {
    const bool none = text == "NONE" || text == "none" || text == "0";
    out_.set(key, text, "cuda_graphs", !none);
  } else if (name == "cudagraph_capture_sizes" || name == "max_capture_size" ||
             name == "max_cudagraph_capture_size") {
    out_.unsupported(key, text,
                     "the CUDA graph pool's size follows the captured batch sizes (vramplan "
                     "counts a fixed --cuda-graph-gib)");
  } else if ((name == "level" || name == "mode" || key.ends_with("(level)")) && text == "0") {
    out_.unsupported(key, text,
                     "without compilation, recent vLLM captures no piecewise CUDA graphs "
                     "(vramplan keeps its CUDA graph row: --enforce-eager drops it)");
  } else {
    out_.ignore(key, text, std::string(kNoMemoryEffect) + ": a compilation setting");
  }
}

// Variables the engines read from the environment (vllm/envs.py; SGLang's environ.py); those a
// `docker run -e` passes are listed whatever they are.
void read_environment(const ServingCommand& cmd, ServingState& st, ImportBuilder& out) {
  for (const auto& [name, value] : cmd.environment) {
    const bool passed = std::find(cmd.environment_keys.begin(), cmd.environment_keys.end(), name) !=
                        cmd.environment_keys.end();
    if (name == "VLLM_USE_V1" && st.engine == ServingEngine::kVllm) {
      st.generation = value == "0" ? VllmGeneration::kV0 : VllmGeneration::kV1;
      st.generation_key = name;
      st.generation_value = value;
    } else if (name == "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS") {
      out.set(name, value, "cuda_graph_in_budget", truthy(value));
    } else if (name == "CUDA_VISIBLE_DEVICES") {
      out.ignore(name, value,
                 std::string(kNoMemoryEffect) +
                     ": which GPUs; the layout comes from the "
                     "parallel sizes");
    } else if (name.rfind("LMCACHE_", 0) == 0 && st.engine == ServingEngine::kVllm) {
      continue;  // kv_connector.cc finish_kv_connector, which knows the connector
    } else if (name.rfind("VLLM_", 0) == 0 || name.rfind("SGLANG_", 0) == 0 ||
               name.rfind("PYTORCH_", 0) == 0 || name.rfind("NCCL_", 0) == 0) {
      out.ignore(name, value, "not read: an environment variable vramplan does not model");
    } else if (passed) {
      out.ignore(name, is_secret(name) && !value.empty() ? kHidden : value, kNoMemoryEffect);
    }
  }
}

void read_log(ServingState& st, ImportBuilder& out) {
  const EngineLog& log = st.log;
  if (log.gpu_total_gib)
    out.set("log: " + log.gpu_total_from->line, log.gpu_total_from->value, "gpu_memory_gib",
            *log.gpu_total_gib);
  if (log.other_lines > 0)
    out.ignore("log", fmt::format("{} line{}", log.other_lines, log.other_lines == 1 ? "" : "s"),
               "log lines: only the engine version and the GPU total are read from a log "
               "(measured figures never are)");
}

// `# vramplan: --gpu a100-80gb --batch 8`: the settings --emit wrote beside the command, which
// no engine flag carries.
std::optional<Error> read_vramplan_line(std::string_view text, ImportBuilder& out) {
  static constexpr std::pair<const char*, bool> kKeys[] = {// key, integer
                                                           {"gpu", false},
                                                           {"gpu_memory_gib", false},
                                                           {"batch", true},
                                                           {"cuda_context_gib", false},
                                                           {"nccl_gib_per_group", false},
                                                           {"non_torch_gib", false},
                                                           {"cuda_graph_gib", false},
                                                           {"host_memory_gib", false},
                                                           {"sampler_bytes_per_logit", false}};
  constexpr std::string_view kMark = "# vramplan:";
  for (size_t pos = text.find(kMark); pos != std::string_view::npos;
       pos = text.find(kMark, pos + 1)) {
    const size_t end = text.find('\n', pos);
    const ShellScript words =
        parse_shell(text.substr(pos + kMark.size(), end - pos - kMark.size()));
    const std::vector<std::string> w =
        words.commands.empty() ? std::vector<std::string>{} : words.commands[0].words;
    for (size_t i = 0; i + 1 < w.size(); i += 2) {
      std::string key = w[i].substr(w[i].find_first_not_of('-'));
      for (char& c : key) c = c == '-' ? '_' : c;
      const std::string written = "# vramplan: " + w[i];
      const auto* known = std::find_if(std::begin(kKeys), std::end(kKeys),
                                       [&](const auto& k) { return key == k.first; });
      if (known == std::end(kKeys)) {
        out.ignore(written, w[i + 1], "not a setting the # vramplan: line carries");
        continue;
      }
      if (key == "gpu") {
        out.set(written, w[i + 1], key, w[i + 1]);
      } else if (known->second) {
        Result<int64_t> n = plain_int(written, w[i + 1]);
        if (!n) return n.error();
        out.set(written, w[i + 1], key, *n);
      } else {
        Result<double> d = plain_number(written, w[i + 1]);
        if (!d) return d.error();
        out.set(written, w[i + 1], key, *d);
      }
    }
  }
  return std::nullopt;
}

Result<Imported> import_serving(std::string_view text, ServingEngine engine) {
  const PastedText pasted = split_pasted(text);
  std::optional<ServingCommand> cmd = find_serving_command(pasted.script);
  const char* name = engine_name(engine);
  if (!cmd || cmd->engine != engine)
    return Error{"from", std::string(text.substr(0, 60)),
                 engine == ServingEngine::kVllm
                     ? "a vLLM launch: vllm serve MODEL ..., python -m "
                       "vllm.entrypoints.openai.api_server --model MODEL ..."
                     : "an SGLang launch: python -m sglang.launch_server --model-path MODEL ...",
                 fmt::format("no {} command found", engine_label(engine))};
  ImportBuilder out(name);
  ServingState st;
  st.engine = engine;
  st.engine_key = cmd->program;
  out.set(cmd->program, "", "engine", name);
  st.log = read_engine_log(pasted.log);
  if (auto e = read_vramplan_line(text, out)) return *e;
  read_environment(*cmd, st, out);
  for (const std::string& key : cmd->environment_keys)
    if (!cmd->environment.count(key))
      out.ignore(key, "", std::string(kNoMemoryEffect) + ": passed from the host");
  Result<SplitArgs> split = split_serving_args(cmd->words, flags_of(engine));
  if (!split) return split.error();
  if (auto e = Importer(st, out).run(*split)) return *e;
  read_log(st, out);
  if (auto e = engine == ServingEngine::kVllm ? finish_vllm(*cmd, st, out) : finish_sglang(st, out))
    return *e;
  for (const std::string& u : cmd->unexpanded)
    out.warn("the command's " + u + " was not expanded: vramplan runs nothing");
  return out.finish();
}

bool looks_like(std::string_view text, ServingEngine engine) {
  const PastedText pasted = split_pasted(text);
  const std::optional<ServingCommand> cmd = find_serving_command(pasted.script);
  return cmd && cmd->engine == engine;
}

}  // namespace

bool looks_like_vllm_command(std::string_view text) {
  return looks_like(text, ServingEngine::kVllm);
}
Result<Imported> import_vllm_command(std::string_view text) {
  return import_serving(text, ServingEngine::kVllm);
}
bool looks_like_sglang_command(std::string_view text) {
  return looks_like(text, ServingEngine::kSglang);
}
Result<Imported> import_sglang_command(std::string_view text) {
  return import_serving(text, ServingEngine::kSglang);
}

}  // namespace vramplan::interop

// What each engine concludes from several flags together: vLLM's engine version (V0 or V1) and its
// defaults, expert parallelism over tp·dp, the fraction it uses when none is given, and the
// combinations it refuses; SGLang's data-parallel attention and its missing fraction.
#include <fmt/format.h>

#include <algorithm>

#include "interop/serving/kv_connector.h"
#include "interop/serving/serving_importer.h"

namespace vramplan::interop {
namespace {

// vLLM's --gpu-memory-utilization default (vllm/config/cache.py CacheConfig): 0.9 through 2025;
// the newest releases moved to 0.92.
constexpr double kVllmUtilization = 0.9;

// V0's defaults (vllm/engine/arg_utils.py EngineArgs before v0.8; vllm/config.py SchedulerConfig):
// 256 sequences, and without chunked prefill a step of max(max_model_len, 2048) tokens. V0 turned
// chunked prefill on by itself above 32K of context.
constexpr int64_t kV0MaxSeqs = 256;
constexpr int64_t kV0MinBatchedTokens = 2048;
constexpr int64_t kV0LongContext = 32768;

// The tokens per sequence, when the command or the preset says.
std::optional<int64_t> known_context(const ServingState& st) {
  if (st.context.value) return st.context.value;
  if (st.preset && st.preset->max_position_embeddings > 0)
    return st.preset->max_position_embeddings;
  return std::nullopt;
}

// The engine that ran: the log's own line, VLLM_USE_V1, or the version the log gives (V1 by
// default from v0.8; V0 was removed in v0.11).
void read_generation(ServingState& st) {
  const EngineLog& log = st.log;
  if (log.generation_from) {
    st.generation = log.generation;
    st.generation_key = "log: " + log.generation_from->line;
    st.generation_value = log.generation_from->value;
  } else if (st.generation == VllmGeneration::kUnknown && log.version_from) {
    const int minor = vllm_minor_version(log.version);
    st.generation = minor >= 0 && minor < 8 ? VllmGeneration::kV0 : VllmGeneration::kV1;
    st.generation_key = "log: " + log.version_from->line;
    st.generation_value = log.version;
  }
}

void apply_v0_defaults(ServingState& st, ImportBuilder& out) {
  out.understood(st.generation_key, st.generation_value,
                 "vLLM V0: its defaults apply (max_num_seqs 256; without chunked prefill a step "
                 "of max(max_model_len, 2048) tokens)");
  out.warn(
      "vLLM V0 profiled memory in vllm/worker/worker.py, not as V1's v1/worker/gpu_worker.py "
      "that vramplan follows: V0 (before vLLM PR 11809) also counted PyTorch's cached blocks "
      "as non-torch memory, which left less for the KV cache");
  if (!st.max_seqs.value) out.put("max_num_seqs", kV0MaxSeqs, st.generation_key);
  if (st.batched_tokens.value) return;
  const std::optional<int64_t> context = known_context(st);
  const std::optional<bool> chunked = st.chunked_prefill.value ? st.chunked_prefill.value
                                      : context ? std::optional<bool>(*context > kV0LongContext)
                                                : std::nullopt;
  if (chunked && !*chunked && context) {
    out.put("max_num_batched_tokens", std::max(*context, kV0MinBatchedTokens), st.generation_key);
    return;
  }
  out.warn(
      "vLLM V0's default step (--max-num-batched-tokens) depends on the context and on chunked "
      "prefill, which the command leaves to the model: give --max-num-batched-tokens (vramplan "
      "takes V1's default)");
}

void report_generation(ServingState& st, ImportBuilder& out) {
  read_generation(st);
  const EngineLog& log = st.log;
  if (log.version_from && st.generation_key != "log: " + log.version_from->line)
    out.understood("log: " + log.version_from->line, log.version_from->value,
                   "vLLM " + log.version);
  if (st.generation == VllmGeneration::kV0) {
    apply_v0_defaults(st, out);
  } else if (st.generation == VllmGeneration::kV1) {
    out.understood(st.generation_key, st.generation_value,
                   "vLLM V1: the memory profile vramplan follows (v1/worker/gpu_worker.py "
                   "determine_available_memory)");
  }
}

// V1 without chunked prefill steps a whole max_model_len (arg_utils.py _set_default_args).
void apply_unchunked(ServingState& st, ImportBuilder& out) {
  if (st.generation == VllmGeneration::kV0 || !st.chunked_prefill.value ||
      *st.chunked_prefill.value || st.batched_tokens.value)
    return;
  if (const std::optional<int64_t> context = known_context(st)) {
    out.put("max_num_batched_tokens", *context, st.chunked_prefill.key);
    return;
  }
  out.warn(fmt::format(
      "{} off: vLLM then steps a whole max_model_len, which the command leaves to the model: "
      "give --max-num-batched-tokens",
      st.chunked_prefill.key));
}

// --enable-expert-parallel: the experts are split over every GPU of a stage, tp·dp
// (vllm/config/parallel.py: expert parallel size = dp × tp).
void apply_expert_parallel(const ServingState& st, ImportBuilder& out) {
  if (!st.expert_parallel.value) return;
  const std::string& key = st.expert_parallel.key;
  if (!*st.expert_parallel.value) {
    out.understood(key, "false", "experts split over tp (vLLM's default)");
    return;
  }
  if (st.preset && !st.preset->is_moe()) {
    out.ignore(key, "true", fmt::format("no effect on memory: {} has no experts", st.preset->name));
    return;
  }
  const int64_t ep = st.tp.value.value_or(1) * st.dp.value.value_or(1);
  out.put("ep", ep, key);
  out.understood(key, "true", fmt::format("ep = tp·dp = {}", ep));
}

std::optional<Error> apply_utilization(const ServingState& st, ImportBuilder& out) {
  const EngineLog& log = st.log;
  if (st.utilization.value && log.utilization &&
      std::abs(*st.utilization.value - *log.utilization) > 0.005)
    return Error{"log: " + log.utilization_from->line, log.utilization_from->value,
                 fmt::format("the command's {} {}", st.utilization.key, *st.utilization.value),
                 "the log is not from this command"};
  if (st.utilization.value) return std::nullopt;
  if (log.utilization) {
    out.set("log: " + log.utilization_from->line, log.utilization_from->value,
            "gpu_memory_utilization", *log.utilization);
    return std::nullopt;
  }
  out.put("gpu_memory_utilization", kVllmUtilization, "--gpu-memory-utilization");
  out.understood("--gpu-memory-utilization", "(not given)",
                 "gpu_memory_utilization = 0.9 (vLLM's default through 2025; its newest releases "
                 "use 0.92: give it to be sure)");
  return std::nullopt;
}

// What vLLM refuses (vllm/config/scheduler.py SchedulerConfig.verify_max_model_len).
std::optional<Error> check_vllm(const ServingState& st) {
  const Read<int64_t>& batched = st.batched_tokens;
  if (!batched.value) return std::nullopt;
  if (st.max_seqs.value && *batched.value < *st.max_seqs.value)
    return Error{batched.key, std::to_string(*batched.value),
                 fmt::format("at least {} {}", st.max_seqs.key, *st.max_seqs.value),
                 "vLLM refuses a step smaller than its sequences"};
  if (st.chunked_prefill.value && !*st.chunked_prefill.value && st.context.value &&
      *batched.value < *st.context.value)
    return Error{
        batched.key, std::to_string(*batched.value),
        fmt::format("at least {} {} without chunked prefill", st.context.key, *st.context.value),
        "vLLM refuses a step shorter than the context when prompts are not chunked"};
  return std::nullopt;
}

}  // namespace

std::optional<Error> finish_vllm(const ServingCommand& cmd, ServingState& st, ImportBuilder& out) {
  if (st.model.empty())
    return Error{cmd.program, "", "a model: vllm serve MODEL, or --model MODEL",
                 "the command names no model"};
  if (auto e = check_vllm(st)) return e;
  if (auto e = finish_kv_connector(cmd, st, out)) return e;
  report_generation(st, out);
  apply_unchunked(st, out);
  apply_expert_parallel(st, out);
  return apply_utilization(st, out);
}

std::optional<Error> finish_sglang(ServingState& st, ImportBuilder& out) {
  if (st.model.empty())
    return Error{st.engine_key, "", "a model: --model-path MODEL", "the command names no model"};
  if (st.dp_attention.value) {
    if (*st.dp_attention.value)
      out.unsupported(st.dp_attention.key, "true",
                      "attention runs data-parallel inside the tp GPUs, each GPU holding all KV "
                      "heads of its own requests (vramplan splits attention over tp)");
    else
      out.understood(st.dp_attention.key, "false", "attention split over tp");
  }
  if (st.ep_moe.value) {
    if (*st.ep_moe.value) {
      const int64_t ep = st.tp.value.value_or(1);
      out.put("ep", ep, st.ep_moe.key);
      out.understood(st.ep_moe.key, "true", fmt::format("ep = tp = {}", ep));
    } else {
      out.understood(st.ep_moe.key, "false", "experts split over tp");
    }
  }
  if (!st.mem_fraction.value)
    out.warn(
        "SGLang chooses --mem-fraction-static from the GPU's memory and tp when the command "
        "does not give it (server_args.py): give it to see the KV pool");
  return std::nullopt;
}

}  // namespace vramplan::interop

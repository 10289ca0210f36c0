#include "serving/inference_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>

#include "serving/serving_images.h"
#include "serving/serving_offload.h"
#include "vramplan/model/hf_config.h"

namespace vramplan {
namespace {

using std::to_string;

Error not_divisor(const char* field, int64_t value, int64_t of, const std::string& what) {
  return Error{field, to_string(value), "a divisor of " + to_string(of),
               what + " " + to_string(of) + " is not divisible by " + to_string(value)};
}

std::optional<Error> check_range(const char* field, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return std::nullopt;
  return Error{field, to_string(value), "an integer from " + to_string(lo) + " to " + to_string(hi),
               ""};
}

std::optional<Error> check_fraction(const char* field, const std::optional<double>& f) {
  if (!f) return std::nullopt;
  if (std::isfinite(*f) && *f > 0 && *f <= 1) return std::nullopt;
  return Error{field, fmt::format("{}", *f), "a fraction above 0 and at most 1 (e.g. 0.9)", ""};
}

std::optional<Error> check_layout(const InferenceScenario& s) {
  const ModelConfig& m = s.model;
  constexpr int64_t kMaxDegree = int64_t{1} << 20;
  for (const auto& [name, value] :
       {std::pair{"tp", s.tp}, std::pair{"pp", s.pp}, std::pair{"ep", s.ep}, std::pair{"dp", s.dp}})
    if (auto e = check_range(name, value, 1, kMaxDegree)) return e;
  if (static_cast<Wide>(s.tp) * s.pp * s.dp > (int64_t{1} << 24))
    return Error{"dp", to_string(s.dp), "tp·pp·dp of at most 16,777,216 GPUs", ""};
  if (m.num_heads % s.tp != 0) return not_divisor("tp", s.tp, m.num_heads, "attention heads");
  if (m.attention == AttentionKind::kStandard && m.num_kv_heads % s.tp != 0 &&
      s.tp % m.num_kv_heads != 0)
    return Error{"tp", to_string(s.tp),
                 "a divisor or a multiple of the " + to_string(m.num_kv_heads) + " KV heads",
                 "KV heads are split over tp, or replicated when tp exceeds them"};
  if (s.pp > m.num_layers)
    return Error{"pp", to_string(s.pp), "at most the " + to_string(m.num_layers) + " layers",
                 "every pipeline rank needs a layer"};
  if (!m.is_moe()) {
    if (s.ep > 1)
      return Error{"ep", to_string(s.ep), "1 for a dense model", m.name + " has no experts"};
    return std::nullopt;
  }
  if (m.moe.num_experts % s.ep != 0)
    return not_divisor("ep", s.ep, m.moe.num_experts, "routed experts");
  if ((s.tp * s.dp) % s.ep != 0)
    return Error{"ep", to_string(s.ep), "a divisor of tp·dp = " + to_string(s.tp * s.dp),
                 "experts are spread over the tp·dp GPUs of a pipeline stage"};
  return std::nullopt;
}

std::optional<Error> check_sizes(const InferenceScenario& s, int64_t context) {
  if (context == 0)
    return Error{"context", "0", "a positive number of tokens",
                 "the model states no max_position_embeddings to default to"};
  if (auto e = check_range("context", context, 1, int64_t{1} << 26)) return e;
  if (auto e = check_range("batch", s.batch, 1, int64_t{1} << 20)) return e;
  if (auto e = check_range("block_size", s.block_size, 1, 1024)) return e;
  if (auto e = check_range("max_num_batched_tokens", s.max_num_batched_tokens, 1, int64_t{1} << 24))
    return e;
  if (auto e = check_range("max_num_seqs", s.max_num_seqs, 1, int64_t{1} << 20)) return e;
  if (!std::isfinite(s.sampler_bytes_per_logit) || s.sampler_bytes_per_logit < 0 ||
      s.sampler_bytes_per_logit > 1024)
    return Error{"sampler_bytes_per_logit", fmt::format("{}", s.sampler_bytes_per_logit),
                 "0 to 1024", ""};
  for (const WeightQuant& q : s.weights.by_class)
    if (q.format == WeightFormat::kInt4)
      if (auto e = check_range("quant_group_size", q.group_size, 1, int64_t{1} << 20)) return e;
  const InferenceOverheads& o = s.overheads;
  const std::pair<const char*, int64_t> sizes[] = {{"cuda_context_gib", o.cuda_context_bytes},
                                                   {"nccl_gib_per_group", o.nccl_bytes_per_group},
                                                   {"non_torch_gib", o.non_torch_bytes},
                                                   {"cuda_graph_gib", o.cuda_graph_bytes}};
  for (const auto& [name, bytes] : sizes)
    if (bytes < 0 || bytes > (int64_t{64} << 30))
      return Error{name, fmt::format("{:.3f}", static_cast<double>(bytes) / (1 << 30)),
                   "0 to 64 (GiB)", ""};
  return std::nullopt;
}

std::optional<Error> check_capacity(const InferenceScenario& s) {
  if (auto e = check_fraction("gpu_memory_utilization", s.gpu_memory_utilization)) return e;
  if (auto e = check_fraction("mem_fraction_static", s.mem_fraction_static)) return e;
  if (s.gpu_memory_utilization && s.engine == ServingEngine::kSglang)
    return Error{"gpu_memory_utilization", fmt::format("{}", *s.gpu_memory_utilization),
                 "mem_fraction_static with engine sglang",
                 "gpu_memory_utilization is vLLM's setting"};
  if (s.mem_fraction_static && s.engine == ServingEngine::kVllm)
    return Error{"mem_fraction_static", fmt::format("{}", *s.mem_fraction_static),
                 "gpu_memory_utilization with engine vllm (or engine sglang)",
                 "mem_fraction_static is SGLang's setting"};
  if ((s.gpu_memory_utilization || s.mem_fraction_static) && s.gpu_total_bytes <= 0)
    return Error{"gpu", "", "a GPU (or gpu_memory_gib) whose total the fraction applies to", ""};
  return std::nullopt;
}

}  // namespace

int64_t resolved_context(const InferenceScenario& s) {
  return s.context > 0 ? s.context : s.model.max_position_embeddings;
}

std::optional<Error> validate_inference(const InferenceScenario& s) {
  if (auto e = validate_model(s.model)) return e;
  if (auto e = check_layout(s)) return e;
  if (auto e = check_sizes(s, resolved_context(s))) return e;
  if (auto e = check_capacity(s)) return e;
  if (auto e = check_serving_images(s, resolved_context(s))) return e;
  return check_serving_offload(s);
}

}  // namespace vramplan

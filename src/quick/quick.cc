// The quick calculator's rows (quick.h, docs/quick.md).
#include "vramplan/quick/quick.h"

#include <fmt/format.h>

#include <cmath>

#include "base/term.h"
#include "training/model_states.h"

namespace vramplan {
namespace {

constexpr int64_t kMaxParams = int64_t{100'000'000'000'000};  // 100 T
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHidden = 65536;
constexpr int64_t kMaxBatch = 1'000'000;
constexpr int64_t kMaxTokens = 100'000'000;
constexpr double kMaxMultiplier = 1000;
constexpr int64_t kMaxOverheadBytes = int64_t{1} << 40;  // 1 TiB

constexpr const char* kSourceWeights =
    "model/quantization.cc bits_per_weight: packed values plus their group scales (AWQ/GPTQ "
    "int4: fp16 scale and 4-bit zero per 128); per-channel scales left out";
constexpr const char* kSourceMaster =
    "Micikevicius et al. 2018, Mixed Precision Training (arXiv 1710.03740) §3.1: an fp32 master "
    "copy of every weight the optimizer updates";
constexpr const char* kSourceGradients =
    "one gradient per trained weight (torch param.grad, Megatron main_grad in fp32)";
constexpr const char* kSourceOptimizer =
    "training/model_states.cc optimizer_state_bytes: torch.optim.AdamW exp_avg and exp_avg_sq, "
    "bitsandbytes 8-bit blocks, SGD momentum_buffer, Adafactor row/col factors, Lion, Muon";
constexpr const char* kSourceActivations =
    "Korthikanti et al. 2022 (arXiv 2205.05198) §4: saved tensors in units of s·b·h per layer; "
    "the default multiplier is training/activations.cc layer_activations of the matching "
    "architecture (docs/quick.md)";
constexpr const char* kSourceKv =
    "K and V of every layer for every cached token (transformers DynamicCache, vLLM paged KV): "
    "2·h values per token and layer with as many KV heads as heads";
constexpr const char* kSourceOverhead =
    "CUDA context and kernels (600 MiB on H100, lazy loading) plus the caching allocator's pool "
    "above the live tensors, as training/estimate_beyond_tensors.cc and "
    "torch.cuda.memory_reserved()";

std::optional<Error> check_range(const char* field, int64_t value, int64_t low, int64_t high) {
  if (value >= low && value <= high) return std::nullopt;
  return Error{field, std::to_string(value),
               fmt::format("an integer from {} to {}", group_digits(low), group_digits(high)), ""};
}

std::optional<Error> check_inputs(const QuickInputs& in) {
  if (auto e = check_range("params", in.params, 1, kMaxParams)) return e;
  if (auto e = check_range("layers", in.layers, 1, kMaxLayers)) return e;
  if (auto e = check_range("hidden", in.hidden, 1, kMaxHidden)) return e;
  if (auto e = check_range("batch", in.batch, 1, kMaxBatch)) return e;
  if (auto e = check_range("seq_len", in.seq_len, 1, kMaxTokens)) return e;
  if (auto e = check_range("cache_tokens", in.cache_tokens, 0, kMaxTokens)) return e;
  if (auto e = check_range("overhead_gib", in.overhead_bytes, 0, kMaxOverheadBytes))
    return Error{"overhead_gib", fmt::format("{:g}", in.overhead_bytes / double(1 << 30)),
                 "a number of GiB from 0 to 1024", ""};
  if (in.activation_multiplier &&
      !(*in.activation_multiplier > 0 && *in.activation_multiplier <= kMaxMultiplier))
    return Error{"activation_multiplier", fmt::format("{:g}", *in.activation_multiplier),
                 fmt::format("a number above 0, up to {:g}", kMaxMultiplier),
                 "tensors of h values per token and layer"};
  if (!(in.checkpoint_factor > 0 && in.checkpoint_factor <= 1))
    return Error{"checkpoint_factor", fmt::format("{:g}", in.checkpoint_factor),
                 "a number above 0, up to 1",
                 "the share of the activations kept (1: no checkpointing)"};
  if (!(in.allocator_overhead >= 0 && in.allocator_overhead <= 1))
    return Error{"allocator_overhead", fmt::format("{:g}", in.allocator_overhead),
                 "a fraction from 0 to 1", ""};
  return std::nullopt;
}

Row row(const char* component, Wide bytes, std::string formula, const char* source,
        CountsToward toward = CountsToward::kAllocated) {
  Row r;
  r.component = component;
  r.bytes = static_cast<int64_t>(bytes);
  r.bytes_low = r.bytes_high = r.bytes;
  r.counts_toward = toward;
  r.formula = std::move(formula);
  r.source = source;
  return r;
}

std::string dtype_bytes(DType t) { return fmt::format("{:g}", bits_of(t) / 8.0); }

}  // namespace

Result<QuickEstimate> quick_estimate(const QuickInputs& in) {
  if (auto e = check_inputs(in)) return *e;
  QuickEstimate out;
  if (in.activation_multiplier) {
    out.activation_multiplier = *in.activation_multiplier;
    out.multiplier_source = "given";
  } else {
    Result<double> derived = derived_activation_multiplier(in);
    if (!derived)
      return Error{derived.error().field, derived.error().value, derived.error().accepted,
                   derived.error().reason +
                       "; or give activation_multiplier, which then needs no matching "
                       "architecture"};
    out.activation_multiplier = *derived;
    out.multiplier_source = fmt::format(
        "derived: what one decoder layer of the matching architecture (Llama-2 shape, {} "
        "layers × {}) keeps for the backward without recompute (training/activations.cc), "
        "÷ (b·s·h·bytes)",
        in.layers, in.hidden);
  }
  const bool training = in.mode == QuickMode::kTraining;
  const std::string p = group_digits(in.params);
  const Wide P = in.params;

  // Weights in their format.
  const double wbits = bits_per_weight(in.weights);
  const Wide weights = static_cast<Wide>(std::ceil(static_cast<double>(in.params) * wbits / 8.0));
  out.rows.push_back(row(
      "weights", weights,
      fmt::format("P·bits/8 = {}·{:.4g}/8 ({})", p, wbits, weight_format_name(in.weights.format)),
      kSourceWeights));

  // Master weights: fp32 copy in training when the weights are below fp32.
  const bool master = training && in.master_weights && wbits < 32;
  out.rows.push_back(row("master weights", master ? 4 * P : 0,
                         master      ? fmt::format("4·P = 4·{}", p)
                         : !training ? std::string("inference keeps no master copy")
                         : !in.master_weights
                             ? std::string("master_weights off")
                             : std::string("the weights are fp32 already: no copy"),
                         kSourceMaster));

  // Gradients.
  out.rows.push_back(row("gradients", training ? P * bits_of(in.grad_dtype) / 8 : 0,
                         training
                             ? fmt::format("P·bytes = {}·{} ({})", p, dtype_bytes(in.grad_dtype),
                                           dtype_name(in.grad_dtype))
                             : std::string("inference keeps no gradients"),
                         kSourceGradients));

  // Optimizer states, by vramplan's own optimizer accounting with every parameter a matrix.
  Term states;
  if (training) {
    Training tr;
    tr.optimizer = in.optimizer;
    tr.optimizer_state_dtype = in.optimizer_dtype;
    states = optimizer_state_bytes(tr, P, 0, 0, in.hidden, true);
    states.formula +=
        fmt::format(" ({}, {})", optimizer_name(in.optimizer), dtype_name(in.optimizer_dtype));
  } else {
    states.formula = "inference keeps no optimizer states";
  }
  out.rows.push_back(row("optimizer states", states.bytes, states.formula, kSourceOptimizer));

  // Activations: b·s·h·L·m·bytes·mode·checkpoint.
  const double mode_factor = training ? 1.0 : 1.0 / static_cast<double>(in.layers);
  const double act = static_cast<double>(in.batch) * static_cast<double>(in.seq_len) *
                     static_cast<double>(in.hidden) * static_cast<double>(in.layers) *
                     out.activation_multiplier * (bits_of(in.activation_dtype) / 8.0) *
                     mode_factor * in.checkpoint_factor;
  const int64_t tokens = in.cache_tokens > 0 ? in.cache_tokens : in.seq_len;
  const Wide kv =
      in.kv_cache ? Wide{in.batch} * tokens * in.hidden * in.layers * 2 * bits_of(in.kv_dtype) / 8
                  : 0;
  if (!(act < static_cast<double>(kMaxBytes)) || kv > kMaxBytes)
    return Error{"batch", std::to_string(in.batch),
                 "sizes whose activations and KV cache stay below 4 EiB",
                 "the rows overflow: check batch, seq_len, hidden and layers"};
  const std::string mode_text =
      training ? std::string("mode 1: training keeps every layer's tensors for the backward")
               : fmt::format("mode 1/{}: inference keeps one layer's tensors at a time", in.layers);
  out.rows.push_back(
      row("activations", static_cast<Wide>(std::llround(act)),
          fmt::format("b·s·h·L·m·bytes·mode·checkpoint = {}·{}·{}·{}·{:.4g}·{}·{}·{:g} ({})",
                      in.batch, group_digits(in.seq_len), group_digits(in.hidden), in.layers,
                      out.activation_multiplier, dtype_bytes(in.activation_dtype),
                      training ? std::string("1") : fmt::format("(1/{})", in.layers),
                      in.checkpoint_factor, mode_text),
          kSourceActivations));

  // KV cache.
  out.rows.push_back(row("KV cache", kv,
                         in.kv_cache
                             ? fmt::format("b·tokens·h·L·2·bytes = {}·{}·{}·{}·2·{} ({})", in.batch,
                                           group_digits(tokens), group_digits(in.hidden), in.layers,
                                           dtype_bytes(in.kv_dtype), dtype_name(in.kv_dtype))
                             : std::string("kv_cache off"),
                         kSourceKv));

  // Overhead: context plus the allocator's pool over the tensors.
  Wide tensors = 0;
  for (const Row& r : out.rows) tensors += r.bytes;
  if (tensors > kMaxBytes)
    return Error{"params", p, "sizes whose total stays below 4 EiB",
                 "the rows overflow: check params, batch, seq_len, hidden and layers"};
  const Wide pool =
      static_cast<Wide>(std::llround(static_cast<double>(tensors) * in.allocator_overhead));
  out.rows.push_back(
      row("overhead", in.overhead_bytes + pool,
          fmt::format("context + pool·tensors = {} + {:g}·{}", short_bytes(in.overhead_bytes),
                      in.allocator_overhead, short_bytes(tensors)),
          kSourceOverhead, CountsToward::kDevice));
  Wide total = 0;
  for (const Row& r : out.rows) total += r.bytes;
  if (total > kMaxBytes)
    return Error{"batch", std::to_string(in.batch), "sizes whose total stays below 4 EiB",
                 "the rows overflow: check batch, seq_len, hidden and layers"};
  out.total_bytes = static_cast<int64_t>(total);
  return out;
}

}  // namespace vramplan

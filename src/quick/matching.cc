// The matching architecture of the quick calculator (quick.h): Llama-2's shape at L layers of
// width h, the training scenario on it, and the activation multiplier vramplan's own per-layer
// accounting gives for it.
#include <fmt/format.h>

#include <algorithm>

#include "base/term.h"
#include "training/activations.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/quick/quick.h"

namespace vramplan {
namespace {

constexpr int64_t kHeadDim = 128;  // Llama-2's head dimension
constexpr int64_t kMaxHidden = 65536;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kVocab = 32000;  // Llama-2's tokenizer

}  // namespace

Result<nlohmann::json> matching_config(int64_t layers, int64_t hidden, int64_t seq_len) {
  if (layers < 1 || layers > kMaxLayers)
    return Error{"layers", std::to_string(layers),
                 fmt::format("an integer from 1 to {}", kMaxLayers), ""};
  if (hidden < kHeadDim || hidden > kMaxHidden || hidden % kHeadDim != 0)
    return Error{"hidden", std::to_string(hidden),
                 fmt::format("a multiple of {} up to {}", kHeadDim, kMaxHidden),
                 "the matching architecture has heads of 128 (Llama-2)"};
  // LlamaConfig / Meta's llama/model.py: hidden_dim = 2·4h/3, rounded up to multiple_of = 256.
  const int64_t ffn = ceil_div(8 * hidden, 3 * 256) * 256;
  const int64_t heads = hidden / kHeadDim;
  return nlohmann::json{{"model_type", "llama"},
                        {"architectures", {"LlamaForCausalLM"}},
                        {"hidden_size", hidden},
                        {"num_hidden_layers", layers},
                        {"num_attention_heads", heads},
                        {"num_key_value_heads", heads},
                        {"intermediate_size", ffn},
                        {"vocab_size", kVocab},
                        {"max_position_embeddings", std::max<int64_t>(4096, seq_len)},
                        {"hidden_act", "silu"},
                        {"rms_norm_eps", 1e-5},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}};
}

Result<Scenario> matching_training_scenario(const QuickInputs& in) {
  Result<nlohmann::json> config = matching_config(in.layers, in.hidden, in.seq_len);
  if (!config) return config.error();
  Result<ParsedModel> parsed = parse_hf_config(config->dump(), "matching architecture");
  if (!parsed) return parsed.error();
  if (auto e = validate_model(parsed->model)) return *e;
  Scenario s;
  s.model = parsed->model;
  s.model.name = fmt::format("Llama-2 shape, {} layers × {}", in.layers, in.hidden);
  s.training.seq_len = in.seq_len;
  s.training.micro_batch = in.batch;
  s.training.activation_dtype = in.activation_dtype;
  s.training.grad_dtype = in.grad_dtype;
  s.training.optimizer = in.optimizer;
  s.training.optimizer_state_dtype = in.optimizer_dtype;
  s.training.master_weights = in.master_weights;
  if (is_float_format(in.weights.format)) s.training.param_dtype = float_dtype(in.weights.format);
  if (in.weights.format == WeightFormat::kFp8) s.training.param_dtype = DType::kFp8;
  s.training.recompute = in.checkpoint_factor < 1.0 ? Recompute::kFull : Recompute::kNone;
  return s;
}

Result<double> derived_activation_multiplier(const QuickInputs& in) {
  QuickInputs probe = in;
  probe.checkpoint_factor = 1.0;  // what one layer keeps without recompute
  Result<Scenario> s = matching_training_scenario(probe);
  if (!s) return s.error();
  const Term layer = layer_activations(*s, false, false);
  // Bits, not bytes_of(1, ·): an fp4 value is half a byte.
  const double unit = static_cast<double>(in.batch) * static_cast<double>(in.seq_len) *
                      static_cast<double>(in.hidden) * bits_of(in.activation_dtype) / 8.0;
  if (!(unit > 0)) return Error{"batch", std::to_string(in.batch), "an integer of at least 1", ""};
  return static_cast<double>(layer.bytes) / unit;
}

}  // namespace vramplan

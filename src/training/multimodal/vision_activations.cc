#include "training/multimodal/vision_activations.h"

#include <fmt/format.h>

#include "vramplan/model/precision.h"

namespace vramplan {
namespace {

std::string size_text(const Images& images, const VisionShape& v) {
  const auto [w, h] = image_size_of(images, v);
  return fmt::format("{}×{} px{}", w, h, images.width > 0 ? "" : " (the default)");
}

bool tower_frozen(const Scenario& s) { return s.finetune.method != FinetuneMethod::kNone; }

// Bytes one encoder layer keeps per token in transformers' eager ViT layers: two norms, the
// q/k/v projections' input, q, k and v and the attention output (SDPA's flash/efficient kernels
// save them with a per-head fp32 log-sum-exp), the output projection's input (the attention
// output made contiguous), the MLP's input and its f-wide tensors: fc1's output and GELU's
// (plain), or gate, up, SiLU(gate) and their product (gated).
int64_t encoder_bytes_per_token(const VisionShape& v, DType act) {
  const int64_t b = bytes_of(1, act);
  const int64_t norm = v.rms_norm ? (4 + b) * v.hidden + 4  // fp32 upcast, normed value, rsqrt
                                  : b * v.hidden + 8;       // input, fp32 mean and rstd
  const int64_t mlp = (v.gated_mlp ? 4 : 2) * v.ffn * b;
  return 2 * norm + 7 * v.hidden * b + 4 * v.heads + mlp;
}

}  // namespace

std::optional<ImageTokens> scenario_image_tokens(const Scenario& s) {
  if (s.images.count <= 0 || !s.model.vision.known()) return std::nullopt;
  const auto [w, h] = image_size_of(s.images, s.model.vision);
  Result<ImageTokens> t = image_tokens(s.model.vision, w, h, /*pad_tiles=*/true, "image_size");
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::optional<Error> check_images(const Scenario& s) {
  return check_images(s.model, s.images, /*pad_tiles=*/true, s.training.seq_len, "sequence",
                      "sequence");
}

Term vision_encoder_activations(const Scenario& s, bool explain) {
  const std::optional<ImageTokens> t = scenario_image_tokens(s);
  if (!t || tower_frozen(s)) return {};
  const VisionShape& v = s.model.vision;
  const int64_t per_token = encoder_bytes_per_token(v, s.training.activation_dtype);
  const int64_t b = bytes_of(1, s.training.activation_dtype);
  const Wide tokens = Wide{s.training.micro_batch} * s.images.count * t->encoder_total();
  const bool recompute = s.training.recompute == Recompute::kFull;
  // Gradient checkpointing (transformers checkpoints the encoder's layers too): each layer's
  // input, and one layer's activations while its backward re-runs it.
  const Wide per_layer = recompute ? Wide{v.hidden} * b : per_token;
  Term term{tokens * (Wide{v.layers} * per_layer + (recompute ? per_token : 0)), ""};
  if (explain)
    term.formula = fmt::format(
        "b {} × {} images × {} encoder tokens ({} × {}) × {}; per token and layer {} B = "
        "2 {} + 7·h·B + 4·heads + {}·f·B with h {}, f {}, {} heads{}",
        s.training.micro_batch, s.images.count, t->encoder_total(), t->encoder_sequences,
        t->encoder_tokens,
        recompute ? fmt::format("({} layers × input h·B + one layer recomputed)", v.layers)
                  : fmt::format("{} layers", v.layers),
        per_token, v.rms_norm ? "RMSNorms ((4+B)·h + 4)" : "LayerNorms (h·B + 8)",
        v.gated_mlp ? 4 : 2, v.hidden, v.ffn, v.heads, recompute ? ", recomputed" : "");
  return term;
}

Term cross_attention_image_kv(const Scenario& s, int64_t cross_layers, bool explain) {
  const std::optional<ImageTokens> t = scenario_image_tokens(s);
  if (!t || t->cross_tokens == 0 || cross_layers == 0) return {};
  const ModelConfig& m = s.model;
  const int64_t b = bytes_of(1, s.training.activation_dtype);
  const Wide tokens = Wide{s.training.micro_batch} * s.images.count * t->cross_tokens;
  const int64_t kv_width = m.num_kv_heads * m.head_dim / s.parallel.tp;
  // Per layer: K after its k_norm and V (SDPA saves both) and the k_norm's fp32 upcast and
  // normed value; the vision states k_proj/v_proj read are one tensor shared by every layer.
  const Wide per_layer = Wide{kv_width} * (3 * b + 4);
  Term term{tokens * (Wide{cross_layers} * per_layer + Wide{m.hidden} * b), ""};
  if (explain)
    term.formula = fmt::format(
        "b {} × {} images × {} image tokens × ({} cross-attention layers × g·d/t {} × (3·B + 4) "
        "+ vision states h {} × B)",
        s.training.micro_batch, s.images.count, t->cross_tokens, cross_layers, kv_width, m.hidden);
  return term;
}

std::string images_note(const Scenario& s) {
  const std::optional<ImageTokens> t = scenario_image_tokens(s);
  if (!t) return "";
  const VisionShape& v = s.model.vision;
  std::string where = t->cross_tokens > 0
                          ? fmt::format(
                                "{} cross-attention tokens each (keys and values of every "
                                "cross-attention layer), {} token each in the sequence",
                                t->cross_tokens, t->lm_tokens)
                          : fmt::format("{} tokens each, {} of the {}-token sequence", t->lm_tokens,
                                        s.images.count * t->lm_tokens, s.training.seq_len);
  std::string note = fmt::format("{} images of {} per sequence: {} ({})", s.images.count,
                                 size_text(s.images, v), where, t->formula);
  if (tower_frozen(s))
    note += "; the vision tower is frozen under " + std::string(finetune_name(s.finetune.method)) +
            " (adapters on the language model), so it keeps no activations";
  return note;
}

}  // namespace vramplan

#include "serving/serving_images.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/vision/image_tokens.h"
#include "vramplan/model/precision.h"

namespace vramplan {
namespace {

// vLLM counts an image's own tiles (no padding to the most tiles).
std::optional<ImageTokens> tokens_of(const InferenceScenario& s) {
  if (s.images.count <= 0 || !s.model.vision.known()) return std::nullopt;
  const auto [w, h] = image_size_of(s.images, s.model.vision);
  Result<ImageTokens> t = image_tokens(s.model.vision, w, h, /*pad_tiles=*/false, "image_size");
  if (!t.ok()) return std::nullopt;
  return *t;
}

Wide model_bytes(const InferenceScenario& s) { return bits_of(s.weights.base) / 8; }

}  // namespace

std::optional<Error> check_serving_images(const InferenceScenario& s, int64_t context) {
  return check_images(s.model, s.images, /*pad_tiles=*/false, context, "context", "request");
}

Term cross_attention_kv_per_sequence(const InferenceScenario& s, const ServingRank& rank,
                                     bool explain) {
  const std::optional<ImageTokens> t = tokens_of(s);
  if (!t || t->cross_tokens == 0) return {};
  int64_t layers = 0;
  for (int64_t id : rank.layers)
    layers += s.model.mixer(static_cast<size_t>(id)) == LayerMixer::kCrossAttention;
  const Wide tokens = Wide{s.images.count} * t->cross_tokens;
  const Wide per_token = kv_bytes_per_layer_token(s);
  Term term{tokens * layers * per_token, ""};
  if (explain)
    term.formula = fmt::format(
        "{} images × {} image tokens × {} cross-attention layers × {} B (K and V per layer and "
        "token on this GPU)",
        s.images.count, t->cross_tokens, layers, static_cast<int64_t>(per_token));
  return term;
}

Term vision_profile(const InferenceScenario& s, const ServingRank& rank, Wide prefill_peak,
                    bool explain) {
  const std::optional<ImageTokens> t = tokens_of(s);
  if (!t || !rank.first) return {};
  const VisionShape& v = s.model.vision;
  const Wide b = model_bytes(s);
  // vLLM (v1/worker/gpu_model_runner.py profile_run, multimodal/budget.py): as many images as
  // the encoder budget max(max_num_batched_tokens, one image's tokens) holds, at most the
  // per-request limit × max_num_seqs, encoded in one batch.
  const int64_t per_image = std::max<int64_t>({t->lm_tokens, t->cross_tokens, 1});
  const int64_t budget = std::max(s.max_num_batched_tokens, per_image);
  const Wide items = std::min<Wide>(std::max<int64_t>(1, budget / per_image),
                                    Wide{s.images.count} * s.max_num_seqs);
  const Wide tokens = items * t->encoder_total();
  // The encoder runs layer by layer; its widest moment is the attention block (input, normed
  // input, q/k/v, output: 6h, the q/k/v and output split over tp) or the MLP (input, normed
  // input and fc1's output and activation: 2f plain, 3f gated with a fused gate|up, split).
  const Wide attention = 2 * Wide{v.hidden} + 4 * Wide{v.hidden} / s.tp;
  const Wide mlp = 2 * Wide{v.hidden} + (v.gated_mlp ? 3 : 2) * Wide{v.ffn} / s.tp;
  const Wide encoder = tokens * std::max(attention, mlp) * b;
  const Wide embeddings = items * per_image * v.text_hidden * b;
  const Wide beyond = std::max<Wide>(0, encoder - prefill_peak);
  Term term{embeddings + beyond, ""};
  if (explain)
    term.formula = fmt::format(
        "{} images profiled (encoder budget {} tokens / {} per image, at most {} per request × "
        "{} seqs): embeddings {} × {} tokens × h {} × {} B = {}{}",
        static_cast<int64_t>(items), budget, per_image, s.images.count, s.max_num_seqs,
        static_cast<int64_t>(items), per_image, v.text_hidden, static_cast<int64_t>(b),
        short_bytes(embeddings),
        beyond > 0 ? fmt::format(" + the encoder's one-layer working set {} beyond the prefill "
                                 "chunk's {}",
                                 short_bytes(encoder), short_bytes(prefill_peak))
                   : fmt::format("; the encoder's one-layer working set ({}) stays within the "
                                 "prefill chunk's",
                                 short_bytes(encoder)));
  return term;
}

std::string serving_images_note(const InferenceScenario& s) {
  const std::optional<ImageTokens> t = tokens_of(s);
  if (!t) return "";
  const auto [w, h] = image_size_of(s.images, s.model.vision);
  std::string note = fmt::format("{} images of {}×{} px{} per request: ", s.images.count, w, h,
                                 s.images.width > 0 ? "" : " (the default size)");
  if (t->cross_tokens > 0)
    note += fmt::format("{} cross-attention tokens each, cached per sequence", t->cross_tokens);
  else
    note += fmt::format("{} tokens each within the context", t->lm_tokens);
  note += " (" + t->formula +
          "); vLLM's profile run encodes the processor's largest image "
          "unless --mm-processor-kwargs bounds it: give that size as --image-size to see its "
          "reservation";
  return note;
}

}  // namespace vramplan

// What a request's images add to serving memory (--images, --image-size): their tokens count
// within --context, mllama's cross-attention layers cache keys and values of the image tokens
// per sequence, and the engine's profile run pushes images through the vision encoder.
#pragma once

#include <optional>

#include "base/term.h"
#include "serving/inference_weights.h"
#include "vramplan/base/error.h"
#include "vramplan/serving/inference.h"

namespace vramplan {

// images and image_size against the model and the context.
std::optional<Error> check_serving_images(const InferenceScenario& s, int64_t context);

// mllama: one sequence's cross-attention keys and values of its images on this rank (vLLM
// caches them beside the self-attention KV, per request).
Term cross_attention_kv_per_sequence(const InferenceScenario& s, const ServingRank& rank,
                                     bool explain);

// The first rank's vision work in the engine's profile run beyond the prefill chunk's peak
// `prefill_peak`: the image embeddings kept for the prefill, and the encoder's one-layer
// working set where it exceeds the prefill chunk's.
Term vision_profile(const InferenceScenario& s, const ServingRank& rank, Wide prefill_peak,
                    bool explain);

// One line for the notes: the images' tokens.
std::string serving_images_note(const InferenceScenario& s);

}  // namespace vramplan

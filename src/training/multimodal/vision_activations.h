// What a sequence's images add to training memory (--images): the vision encoder's saved
// activations, and for mllama the cross-attention layers' keys and values of the image tokens.
// The image tokens a language model reads in its sequence are part of seq_len (checked here),
// as in the frameworks' own configs (TRL's max_length, axolotl's sequence_len).
#pragma once

#include <optional>

#include "base/term.h"
#include "model/vision/image_tokens.h"
#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// The tokens of one of the scenario's images (its size or the tower's default); nullopt without
// images.
std::optional<ImageTokens> scenario_image_tokens(const Scenario& s);

// --images against the model and seq_len: a tower vramplan reads, a size its processor takes,
// image tokens that fit the sequence.
std::optional<Error> check_images(const Scenario& s);

// The vision encoder's saved activations for one microbatch (micro_batch × images), as
// transformers' eager ViT layers keep them; 0 when the tower is frozen (fine-tuning methods
// train the language model's adapters only) or there are no images.
Term vision_encoder_activations(const Scenario& s, bool explain);

// mllama: one microbatch's cross-attention keys and values of the image tokens in
// `cross_layers` layers, and the projected vision states they are computed from (once).
Term cross_attention_image_kv(const Scenario& s, int64_t cross_layers, bool explain);

// One line for the estimate's notes: the images' tokens and where they go.
std::string images_note(const Scenario& s);

}  // namespace vramplan

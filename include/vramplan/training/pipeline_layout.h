// Megatron-LM's explicit pipeline layouts (--pipeline-model-parallel-layout), read and written:
// "Et|(tt|)*30mL" lists the pp·vpp stages in chunk order, separated by '|'; E is the embedding,
// t a decoder layer, m a multi-token-prediction layer, L the loss; "(…)*n" and "x*n" repeat,
// commas are cosmetic (megatron/core/transformer/pipeline_parallel_layer_layout.py).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/base/error.h"

namespace vramplan {

struct PipelineLayout {
  std::vector<int64_t> chunk_layers;  // decoder layers per stage, in chunk order
  int64_t mtp_layers = 0;             // all in the last stage, beside the loss
};

// Errors name "pipeline_layout": an unknown character, a repeat that is not a number, the
// embedding not first or the loss not last, MTP layers anywhere but the last stage (vramplan
// places them with the LM head), a layout over a million layers.
Result<PipelineLayout> parse_pipeline_layout(std::string_view text);

// The layout string for chunk sizes (the embedding first, MTP layers and the loss last), runs of
// layers written as "t*n" and runs of equal stages as "(…|)*n".
std::string pipeline_layout_text(const std::vector<int64_t>& chunk_layers, int64_t mtp_layers);

}  // namespace vramplan

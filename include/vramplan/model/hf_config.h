// Reading Hugging Face config.json files into a ModelConfig.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/model/model.h"

namespace vramplan {

struct ParsedModel {
  ModelConfig model;
  std::vector<std::string> warnings;  // e.g. an unknown model_type read best-effort
  // How the checkpoint stores its weights (inference reads these; training ignores them).
  std::string quantization_config;  // config.quantization_config as JSON text; "" when absent
  std::string torch_dtype;  // config.torch_dtype (or dtype), e.g. "bfloat16"; "" when absent
};

// Parses the text of a config.json. `name` is recorded in ModelConfig::name and used in messages.
// Multimodal files (gemma3) are read through their text_config. Errors name the JSON field
// ("config.hidden_size"), its value and what is accepted; malformed or truncated JSON is an error.
Result<ParsedModel> parse_hf_config(std::string_view json_text, std::string_view name);

// Checks a config built field by field (custom architectures): positive sizes, top-k <= experts,
// vectors sized to num_layers, sizes small enough that byte counts fit in 64 bits.
std::optional<Error> validate_model(const ModelConfig& model);

}  // namespace vramplan

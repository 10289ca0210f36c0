// torchtune's model builders (torchtune/models/<family>/__init__.py) and the presets with the
// same architecture, both ways: `torchtune.models.llama3_1.lora_llama3_1_8b` is Llama-3.1-8B with
// LoRA; Llama-3.1-8B is written back as `llama3_1_8b`.
#pragma once

#include <string>
#include <string_view>

namespace vramplan::interop::torchtune {

struct TorchtuneModel {
  const char* builder;  // "llama3_1_8b" (the full model's builder)
  const char* family;   // "llama3_1" (the module under torchtune.models)
  const char* preset;   // "Llama-3.1-8B"
  bool has_qlora;       // torchtune has a qlora_ builder for it
};

// A `_component_` split into what it builds: the model and its LoRA / QLoRA variant.
struct Component {
  const TorchtuneModel* model = nullptr;  // nullptr: no preset has its architecture
  std::string builder;                    // as written, without its lora_ / qlora_ prefix
  bool lora = false, qlora = false;
};
Component parse_component(std::string_view component);

// The builder of a preset's architecture, or nullptr when torchtune has none vramplan knows.
const TorchtuneModel* model_for_preset(std::string_view preset);

}  // namespace vramplan::interop::torchtune

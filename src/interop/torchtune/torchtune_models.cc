#include "interop/torchtune/torchtune_models.h"

#include "base/text.h"

namespace vramplan::interop::torchtune {
namespace {

// The base builder comes first where base and instruct share one architecture.
const TorchtuneModel kModels[] = {
    {"llama3_1_8b", "llama3_1", "Llama-3.1-8B", true},
    {"llama3_1_70b", "llama3_1", "Llama-3.1-70B", true},
    {"llama3_1_405b", "llama3_1", "Llama-3.1-405B", true},
    {"llama3_2_1b", "llama3_2", "Llama-3.2-1B", true},
    {"llama3_2_3b", "llama3_2", "Llama-3.2-3B", true},
    {"llama2_7b", "llama2", "Llama-2-7b", true},
    {"mistral_7b", "mistral", "Mistral-7B-v0.1", true},
    {"qwen2_5_3b", "qwen2_5", "Qwen2.5-3B", false},
    {"qwen2_5_7b_base", "qwen2_5", "Qwen2.5-7B", false},
    {"qwen2_5_7b_instruct", "qwen2_5", "Qwen2.5-7B", false},
    {"qwen2_5_14b_base", "qwen2_5", "Qwen2.5-14B", false},
    {"qwen2_5_14b_instruct", "qwen2_5", "Qwen2.5-14B", false},
    {"qwen2_5_32b_base", "qwen2_5", "Qwen2.5-32B", false},
    {"qwen2_5_32b_instruct", "qwen2_5", "Qwen2.5-32B", false},
    {"qwen2_5_72b_base", "qwen2_5", "Qwen2.5-72B", false},
    {"qwen2_5_72b_instruct", "qwen2_5", "Qwen2.5-72B", false},
    {"qwen3_0_6b_base", "qwen3", "Qwen3-0.6B", false},
    {"qwen3_0_6b_instruct", "qwen3", "Qwen3-0.6B", false},
    {"qwen3_1_7b_base", "qwen3", "Qwen3-1.7B", false},
    {"qwen3_1_7b_instruct", "qwen3", "Qwen3-1.7B", false},
    {"qwen3_4b_base", "qwen3", "Qwen3-4B", false},
    {"qwen3_4b_instruct", "qwen3", "Qwen3-4B", false},
    {"qwen3_8b_base", "qwen3", "Qwen3-8B", false},
    {"qwen3_8b_instruct", "qwen3", "Qwen3-8B", false},
    {"qwen3_14b_base", "qwen3", "Qwen3-14B", false},
    {"qwen3_14b_instruct", "qwen3", "Qwen3-14B", false},
    {"qwen3_32b", "qwen3", "Qwen3-32B", false},
    {"gemma2_2b", "gemma2", "gemma-2-2b", true},
    {"gemma2_9b", "gemma2", "gemma-2-9b", true},
    {"gemma2_27b", "gemma2", "gemma-2-27b", true},
    {"phi3_mini", "phi3", "Phi-3-mini-4k-instruct", true},
};

}  // namespace

Component parse_component(std::string_view component) {
  Component c;
  std::string name(component);
  if (const size_t dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
  if (name.rfind("qlora_", 0) == 0) {
    c.qlora = true;
    name = name.substr(6);
  } else if (name.rfind("lora_", 0) == 0) {
    c.lora = true;
    name = name.substr(5);
  }
  c.builder = name;
  for (const TorchtuneModel& m : kModels)
    if (name == m.builder) c.model = &m;
  return c;
}

const TorchtuneModel* model_for_preset(std::string_view preset) {
  for (const TorchtuneModel& m : kModels)
    if (iequals(preset, m.preset)) return &m;
  return nullptr;
}

}  // namespace vramplan::interop::torchtune

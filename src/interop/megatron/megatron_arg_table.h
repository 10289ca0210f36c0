// Megatron-LM's argument names as vramplan reads them: those that shape the model (copied into a
// megatron_gpt model_config) and the prefixes of those with no effect on memory.
#pragma once

#include <span>
#include <string>

namespace vramplan::interop {

inline constexpr const char* kMegatronArgumentsSource =
    "Megatron-LM megatron/training/arguments.py";

// The JSON type a model argument takes in the model_config.
enum class MegatronArgType { kInt, kFlag, kText };
struct MegatronModelArg {
  const char* name;  // "--num-layers"
  MegatronArgType type;
};

// Arguments that shape the model, copied under Megatron's own names (model/megatron_config.h).
std::span<const MegatronModelArg> megatron_model_args();

// Learning rates and schedules, initialisation, data, checkpoints, logging, evaluation, fused
// kernels that keep the same tensors: nothing vramplan counts.
bool megatron_arg_has_no_memory_effect(const std::string& name);

// "--num-layers" → "num_layers": the model_config field an argument sets.
std::string megatron_arg_field(std::string name);

}  // namespace vramplan::interop

// DeepSpeed's batch keys (train_micro_batch_size_per_gpu, gradient_accumulation_steps,
// train_batch_size) against the TrainingArguments and the world size: DeepSpeed requires
// train_batch_size = micro × accumulation × data-parallel ranks, and derives the one missing.
#pragma once

#include <optional>

#include "interop/hf/deepspeed_config.h"

namespace vramplan::interop::hf {

std::optional<Error> read_deepspeed_batch(DocKeys& keys, const DeepspeedContext& ctx,
                                          ImportBuilder& out);

}  // namespace vramplan::interop::hf

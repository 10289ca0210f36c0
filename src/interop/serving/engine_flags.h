// vLLM's and SGLang's command-line flags: how many values each takes and what it does for memory
// (vllm_flags.cc, sglang_flags.cc). A flag neither table knows is listed as ignored with a
// warning, never dropped.
#pragma once

#include <span>

#include "interop/serving/serving_args.h"

namespace vramplan::interop {

// vllm/engine/arg_utils.py EngineArgs.add_cli_args and vllm/entrypoints/openai/cli_args.py.
std::span<const FlagSpec> vllm_flags();

// sglang/srt/server_args.py ServerArgs.add_cli_args.
std::span<const FlagSpec> sglang_flags();

}  // namespace vramplan::interop

// vLLM and SGLang launches as imports for `infer` (see serving_import.cc): a command line, a
// shell script, a `docker run`, or a terminal session with the engine's log below the command.
#pragma once

#include <string_view>

#include "vramplan/base/error.h"
#include "vramplan/interop/import.h"

namespace vramplan::interop {

bool looks_like_vllm_command(std::string_view text);
Result<Imported> import_vllm_command(std::string_view text);

bool looks_like_sglang_command(std::string_view text);
Result<Imported> import_sglang_command(std::string_view text);

}  // namespace vramplan::interop

// Megatron-LM's forms as imports (see megatron_import.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "vramplan/base/error.h"
#include "vramplan/interop/import.h"

namespace vramplan::interop {

bool looks_like_megatron_command(std::string_view text);
Result<Imported> import_megatron_command(std::string_view text);

bool looks_like_megatron_test_yaml(const nlohmann::json& doc);
Result<Imported> import_megatron_test_yaml(const nlohmann::json& doc);

}  // namespace vramplan::interop

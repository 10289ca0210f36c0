// YAML (yaml-cpp) and TOML (toml++) documents as JSON values, so that every importer reads one
// shape. YAML plain scalars take their YAML 1.2 core type (true/false, integers, floats, null);
// quoted ones stay strings. Errors name `field` with the parser's line and column.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "vramplan/base/error.h"

namespace vramplan::interop {

Result<nlohmann::json> parse_yaml(std::string_view text, const std::string& field);
Result<nlohmann::json> parse_toml(std::string_view text, const std::string& field);

// A JSON object's member at a dotted path ("parallelism.tensor_parallel_degree"), or nullptr.
const nlohmann::json* at_path(const nlohmann::json& root, std::string_view dotted);

// Every scalar of a document with its dotted path ("training.seq_len" -> 8192), keys in sorted
// order; an array counts as one value.
void for_each_leaf(const nlohmann::json& root,
                   const std::function<void(const std::string& path, const nlohmann::json&)>& f,
                   const std::string& prefix = "");

}  // namespace vramplan::interop

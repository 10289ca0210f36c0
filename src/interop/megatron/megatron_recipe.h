// Megatron-Bridge and NeMo recipes as imports: a ConfigContainer YAML (model, train, optimizer,
// ddp, dataset, mixed_precision, ...), NeMo's megatron_gpt_config.yaml (trainer, model), and
// Hydra-style `section.key=value` overrides after or instead of it. Their field names are
// Megatron-core's TransformerConfig and training arguments with underscores, so each is mapped to
// its Megatron-LM argument and read by the Megatron importer; every key is listed by its own
// dotted path.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "vramplan/base/error.h"
#include "vramplan/interop/import.h"

namespace vramplan::interop {

bool looks_like_megatron_recipe(const nlohmann::json& doc);
// A command or text whose words are `section.key=value` overrides of a recipe.
bool looks_like_recipe_overrides(std::string_view text);

// `doc`: the recipe (null for overrides alone); `overrides_text`: a command line or text holding
// `a.b=value` words (may be empty).
Result<Imported> import_megatron_recipe(const nlohmann::json& doc, std::string_view overrides_text);

}  // namespace vramplan::interop

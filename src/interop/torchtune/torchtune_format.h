// The torchtune import format as formats.cc lists it: a recipe config YAML (its header comment's
// `tune run` line says the recipe and the GPUs), or a `tune run` launch script with the config it
// writes in a here-document and key=value overrides.
#pragma once

#include "interop/formats.h"

namespace vramplan::interop::torchtune {

bool recognises_torchtune(const Document& doc);
Result<Imported> read_torchtune(const Document& doc);

}  // namespace vramplan::interop::torchtune

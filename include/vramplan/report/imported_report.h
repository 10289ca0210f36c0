// What was read from a user's framework config, for people: every key understood, with the
// setting it made, and every key ignored, with why (the JSON form is imported_to_json).
#pragma once

#include <string>

#include "vramplan/interop/import.h"

namespace vramplan {

std::string render_imported(const Imported& imported, int width = 100);
std::string render_imported_markdown(const Imported& imported);

}  // namespace vramplan

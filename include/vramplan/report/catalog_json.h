// What can be named, as JSON: the model presets and the GPU catalog. `vramplan models|gpus
// --format json` and the server's /api/models and /api/gpus print exactly these.
#pragma once

#include <nlohmann/json.hpp>

namespace vramplan {

// [{name, hub_id, model_type, total, active}] over presets(), sorted by name; total and active
// are exact parameter counts.
nlohmann::json presets_json();

// [{id, name, nominal_bytes, usable_bytes, source}] over builtin_gpus(), in catalog order.
nlohmann::json gpus_json();

}  // namespace vramplan

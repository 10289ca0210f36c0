// POST /api/quick and GET /api/quick/options: the quick calculator over HTTP (docs/web-api.md).
// The answer is quick_to_json(), exactly what `vramplan quick --format json` prints.
#pragma once

#include "server/api.h"

namespace vramplan::server {

Response handle_quick(const Request& request);
// {"options": [{key, flag, kind, group, default, help, choices}], "examples": [{name, title,
// settings, calculator_gib}]}: the web form and its example picker are built from it.
Response handle_quick_options(const Request& request);

}  // namespace vramplan::server

// Where a request may come from, and the headers every answer carries (docs/web-api.md, "Origin
// and headers"). The server keeps no session and sets no cookie, yet a web page on another site
// can still make a visitor's browser POST to it (a plain form or a "simple" fetch needs no CORS
// preflight): writes whose Origin is not the server's own are refused. Clients that send no
// Origin (curl, scripts, the Python package) are not browsers acting for a page, and pass.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vramplan/base/error.h"

namespace vramplan::server {

// The request's headers that decide; each "" when absent.
struct RequestOrigin {
  std::string method;          // "POST", ...
  std::string origin;          // Origin: "http://127.0.0.1:8080", "null", ...
  std::string host;            // Host: "127.0.0.1:8080"
  std::string sec_fetch_site;  // Sec-Fetch-Site: "same-origin", "cross-site", ...
};

// An Error naming "origin" when a state-changing request (any method but GET, HEAD, OPTIONS)
// comes from a page of another origin; nullopt when it may be served.
std::optional<Error> refuse_cross_origin(const RequestOrigin& request);

// Content-Security-Policy and its companions, sent with every answer: the app loads only its own
// scripts, styles and API, and no other site may frame it.
const std::vector<std::pair<std::string, std::string>>& security_headers();

}  // namespace vramplan::server

#include "server/origin_policy.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace vramplan::server {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_safe_method(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

// "host[:port]" in lower case without the scheme's default port: "127.0.0.1:80" -> "127.0.0.1".
std::string authority(std::string_view text, std::string_view default_port) {
  std::string out = lower(text);
  const std::string suffix = ":" + std::string(default_port);
  const size_t bracket = out.rfind(']');
  if (out.size() > suffix.size() && out.ends_with(suffix) &&
      (bracket == std::string::npos || bracket < out.size() - suffix.size()))
    out.resize(out.size() - suffix.size());
  return out;
}

// The authority of an http(s) origin; nullopt for anything else ("null" from sandboxed frames
// and file: pages, other schemes). The scheme itself is not compared: behind a proxy that ends
// TLS the app's pages are https while the server speaks http, and one host and port cannot be two
// servers.
std::optional<std::string> origin_authority(std::string_view origin) {
  const std::string text = lower(origin);
  std::string_view rest = text;
  std::string_view default_port;
  if (rest.substr(0, 7) == "http://") {
    rest.remove_prefix(7);
    default_port = "80";
  } else if (rest.substr(0, 8) == "https://") {
    rest.remove_prefix(8);
    default_port = "443";
  } else {
    return std::nullopt;
  }
  if (rest.empty() || rest.find('/') != std::string_view::npos) return std::nullopt;
  return authority(rest, default_port);
}

Error cross_origin(const std::string& value, const std::string& host) {
  return Error{"origin", value,
               "requests from this server's own pages (Origin http://" + host +
                   ") or from clients that send no Origin (curl, scripts, the Python package)",
               "a page of another site may not send requests to this server; it answers its own "
               "web app only"};
}

}  // namespace

std::optional<Error> refuse_cross_origin(const RequestOrigin& request) {
  if (is_safe_method(request.method)) return std::nullopt;
  if (!request.origin.empty()) {
    const std::optional<std::string> from = origin_authority(request.origin);
    // The Host header as the browser sent it (a proxy keeps it): no port when the default.
    if (from && !request.host.empty() &&
        (*from == authority(request.host, "80") || *from == authority(request.host, "443")))
      return std::nullopt;
    return cross_origin(request.origin, request.host);
  }
  // A browser that sent no Origin still says where the request came from.
  const std::string site = lower(request.sec_fetch_site);
  if (site == "cross-site" || site == "same-site")
    return cross_origin("Sec-Fetch-Site: " + request.sec_fetch_site, request.host);
  return std::nullopt;
}

const std::vector<std::pair<std::string, std::string>>& security_headers() {
  // The app is one script and one style sheet of its own (web/dist) and calls only /api on the
  // same origin; charts are inline SVG built through the DOM, exports are blob: downloads.
  static const std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Security-Policy",
       "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Cross-Origin-Opener-Policy", "same-origin"},
      {"Cross-Origin-Resource-Policy", "same-origin"},
      {"Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()"},
  };
  return headers;
}

}  // namespace vramplan::server

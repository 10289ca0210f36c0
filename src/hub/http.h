// One HTTP request at a time over libcurl, without following redirects: the Hub client follows
// them itself so that it decides, hop by hop, which host may see the token.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace vramplan::hub {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;                  // "Name: value"
  std::optional<std::pair<int64_t, int64_t>> range;  // first and last byte, inclusive
  int64_t max_body_bytes = 10 << 20;
  bool stop_at_max = false;  // true: keep the first max_body_bytes and stop (a server that
                             // ignores Range); false: a longer body is an error
  double connect_timeout_s = 10;
  double total_timeout_s = 30;
  std::string ca_bundle;  // "" = the system's CA certificates
};

struct HttpResponse {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  bool truncated = false;  // stop_at_max cut the body

  // The first header of that name (case-insensitive), if any.
  std::optional<std::string> header(std::string_view name) const;
};

enum class TransportFailure { kTimeout, kTls, kConnect, kTooLarge, kOther };

struct TransportError {
  TransportFailure kind = TransportFailure::kOther;
  std::string detail;  // libcurl's message
};

using HttpOutcome = std::variant<HttpResponse, TransportError>;

// Owns a libcurl handle; reusing one client keeps connections alive. Not thread-safe: use one
// client per thread.
class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpOutcome get(const HttpRequest& request);

 private:
  void* curl_;  // CURL*
};

// scheme://host:port of an absolute http(s) URL, lower-cased, with the default port filled in;
// "" when it is not one. Two URLs may share credentials only when their origins are equal.
std::string url_origin(const std::string& url);

// Resolves a Location header against the URL that answered (absolute or relative); "" when
// it cannot be resolved or is not http(s).
std::string resolve_location(const std::string& base, const std::string& location);

// "refs/pr/1" -> "refs%2Fpr%2F1": one path segment, as huggingface_hub quotes revisions.
std::string url_encode_segment(std::string_view text);

}  // namespace vramplan::hub

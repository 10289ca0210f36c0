#include "hub/http.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "base/text.h"

namespace vramplan::hub {
namespace {

// curl_global_init is not thread-safe; run it once before any handle exists.
void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  const HttpRequest* request = nullptr;
  HttpResponse response;
  bool too_large = false;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  const auto limit = static_cast<size_t>(t->request->max_body_bytes);
  const size_t room = limit - std::min(limit, t->response.body.size());
  if (n <= room) {
    t->response.body.append(data, n);
    return n;
  }
  t->response.body.append(data, room);
  if (t->request->stop_at_max)
    t->response.truncated = true;
  else
    t->too_large = true;
  return 0;  // stops the transfer
}

std::string trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const size_t last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    t->response.headers.clear();  // a new response (after 100 Continue): keep only its headers
    return line.size();
  }
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos)
    t->response.headers.emplace_back(to_lower(trim(line.substr(0, colon))),
                                     trim(line.substr(colon + 1)));
  return line.size();
}

TransportFailure classify(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return TransportFailure::kTimeout;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_USE_SSL_FAILED:
      return TransportFailure::kTls;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportFailure::kConnect;
    default:
      return TransportFailure::kOther;
  }
}

long to_ms(double seconds) { return static_cast<long>(std::ceil(seconds * 1000)); }

}  // namespace

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  const std::string wanted = to_lower(name);
  for (const auto& [key, value] : headers)
    if (key == wanted) return value;
  return std::nullopt;
}

HttpClient::HttpClient() {
  init_curl_once();
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

HttpOutcome HttpClient::get(const HttpRequest& request) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return TransportError{TransportFailure::kOther, "libcurl failed to start"};
  curl_easy_reset(curl);  // keeps the connection cache, so keep-alive still works
  Transfer transfer;
  transfer.request = &request;
  char error[CURL_ERROR_SIZE] = "";
  curl_slist* headers = nullptr;
  for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  const std::string range =
      request.range ? fmt::format("{}-{}", request.range->first, request.range->second) : "";

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "vramplan/0.1.0");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, to_ms(request.connect_timeout_s));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, to_ms(request.total_timeout_s));
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  if (!request.range) curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // gzip etc. for JSON
  if (request.range) curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  if (!request.ca_bundle.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, request.ca_bundle.c_str());

  const CURLcode code = curl_easy_perform(curl);
  // The handle outlives this call: let it point at nothing that is about to go.
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_slist_free_all(headers);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &transfer.response.status);
  if (transfer.too_large)
    return TransportError{
        TransportFailure::kTooLarge,
        fmt::format("the answer is larger than {} bytes", request.max_body_bytes)};
  if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && transfer.response.truncated))
    return std::move(transfer.response);
  return TransportError{classify(code), error[0] ? std::string(error) : curl_easy_strerror(code)};
}

std::string url_origin(const std::string& url) {
  CURLU* u = curl_url();
  std::string origin;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    char* scheme = nullptr;
    char* host = nullptr;
    char* port = nullptr;
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
      const std::string s = to_lower(scheme);
      if (s == "http" || s == "https") origin = s + "://" + to_lower(host) + ":" + port;
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
  }
  curl_url_cleanup(u);
  return origin;
}

std::string resolve_location(const std::string& base, const std::string& location) {
  if (location.empty()) return "";
  CURLU* u = curl_url();
  std::string resolved;
  char* out = nullptr;
  if (curl_url_set(u, CURLUPART_URL, base.c_str(), 0) == CURLUE_OK &&
      curl_url_set(u, CURLUPART_URL, location.c_str(), 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_URL, &out, 0) == CURLUE_OK) {
    resolved = out;
  }
  curl_free(out);
  curl_url_cleanup(u);
  return url_origin(resolved).empty() ? "" : resolved;
}

std::string url_encode_segment(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    const bool unreserved = std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
    out += unreserved ? std::string(1, static_cast<char>(c)) : fmt::format("%{:02X}", c);
  }
  return out;
}

}  // namespace vramplan::hub

#include "server/http_server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "server/api.h"
#include "server/origin_policy.h"

namespace vramplan::server {
namespace {

using Clock = std::chrono::steady_clock;

// When the request on this worker thread started (set before routing, read by the logger).
thread_local std::optional<Clock::time_point> request_start;

// The address and port of a socket's end, as httplib writes them in Request (remote_addr,
// remote_port, local_port).
std::pair<std::string, int> endpoint_of(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    return {host, ntohs(v4->sin_port)};
  }
  if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    return {host, ntohs(v6->sin6_port)};
  }
  return {"", -1};
}

// The socket of this request's connection: httplib 0.11 does not hand it to handlers, so it is
// found among the process's descriptors by its two ends (a connection's pair of addresses is
// unique while it is open, and it stays open while its handler runs). -1 when not found.
int connection_socket(const httplib::Request& req) {
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return -1;
  int found = -1;
  while (const dirent* entry = readdir(fds)) {
    const int fd = std::atoi(entry->d_name);
    if (fd <= 2 || fd == dirfd(fds)) continue;
    sockaddr_storage peer{}, local{};
    socklen_t peer_size = sizeof peer, local_size = sizeof local;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0) continue;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_size) != 0) continue;
    const auto [peer_host, peer_port] = endpoint_of(peer);
    if (peer_port == req.remote_port && peer_host == req.remote_addr &&
        endpoint_of(local).second == req.local_port) {
      found = fd;
      break;
    }
  }
  closedir(fds);
  return found;
}

// Whether the client closed the connection: its socket reads end-of-file or an error, without
// consuming anything (a pipelined next request stays for httplib). The socket is looked up on
// the first question only.
std::function<bool()> client_gone_probe(const httplib::Request& req) {
  struct State {
    std::once_flag found;
    int fd = -1;
  };
  auto state = std::make_shared<State>();
  return [state, remote_addr = req.remote_addr, remote_port = req.remote_port,
          local_port = req.local_port] {
    std::call_once(state->found, [&] {
      httplib::Request ends;
      ends.remote_addr = remote_addr;
      ends.remote_port = remote_port;
      ends.local_port = local_port;
      state->fd = connection_socket(ends);
    });
    if (state->fd < 0) return false;
    char byte = 0;
    const ssize_t n = recv(state->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return false;
    if (n == 0) return true;
    return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  };
}

Request to_api_request(const httplib::Request& req) {
  Request request;
  request.client_gone = client_gone_probe(req);
  request.method = req.method;
  request.path = req.path;
  for (const auto& [key, value] : req.params) request.query.emplace(key, value);
  request.body = req.body;
  request.content_type = req.get_header_value("Content-Type");
  return request;
}

void to_httplib_response(Response response, httplib::Response& res) {
  res.status = response.status;
  for (const auto& [name, value] : security_headers()) res.set_header(name, value);
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
  res.set_content(std::move(response.body), response.content_type);
}

// The API's answer, unless a page of another site sent a write (origin_policy.h): 403 then.
Response answer(const httplib::Request& req, Request request) {
  const RequestOrigin from{req.method, req.get_header_value("Origin"), req.get_header_value("Host"),
                           req.get_header_value("Sec-Fetch-Site")};
  if (std::optional<Error> refused = refuse_cross_origin(from))
    return error_response(*refused, 403);
  return handle_request(std::move(request));
}

Response too_large(const httplib::Request& req, std::size_t max_body) {
  const std::string length = req.get_header_value("Content-Length");
  return error_response(
      {"body", length.empty() ? "over " + std::to_string(max_body) + " bytes" : length + " bytes",
       fmt::format("at most {} bytes", max_body), "the request body is too large"},
      413);
}

enum class BodyRead { kComplete, kTooLarge, kBroken, kRefused };

bool content_length_above(const httplib::Request& req, std::size_t max_body) {
  const std::string length = req.get_header_value("Content-Length");
  unsigned long long value = 0;
  const auto [end, error] = std::from_chars(length.data(), length.data() + length.size(), value);
  return error == std::errc::result_out_of_range || (error == std::errc() && value > max_body);
}

// Appends the body to `out`, stopping once it exceeds max_body. (With a Content-Length above
// the limit httplib stops before the first byte.)
BodyRead read_body(const httplib::Request& req, const httplib::ContentReader& read,
                   std::size_t max_body, std::string& out) {
  bool too_large = false;
  const bool complete = read([&](const char* data, std::size_t length) {
    too_large = out.size() + length > max_body;
    if (!too_large) out.append(data, length);
    return !too_large;
  });
  if (complete) return BodyRead::kComplete;
  return too_large || content_length_above(req, max_body) ? BodyRead::kTooLarge : BodyRead::kBroken;
}

Response body_error(const httplib::Request& req, BodyRead body, std::size_t max_body) {
  const std::string accepted = "a JSON object (Content-Type: application/json)";
  switch (body) {
    case BodyRead::kTooLarge:
      return too_large(req, max_body);
    case BodyRead::kRefused:
      return error_response(
          {"body", req.get_header_value("Content-Type"), accepted, "form uploads are not read"});
    default:
      return error_response({"body", "", accepted, "the body could not be read to its end"});
  }
}

// JSON bodies for the errors httplib answers itself, before any handler runs.
Response httplib_error(const httplib::Request& req, int status, std::size_t max_body) {
  switch (status) {
    case 413:
      return too_large(req, max_body);
    case 400:
      // httplib refuses a POST that has neither Content-Length nor chunked encoding.
      if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding") &&
          (req.method == "POST" || req.method == "PUT" || req.method == "PATCH"))
        return error_response(
            {"body", "", "a JSON object (with a Content-Length header)", "the request has no body"},
            400);
      return error_response({"request", req.method + " " + req.path,
                             "a well-formed HTTP/1.1 request", "malformed request line or headers"},
                            400);
    default:
      return error_response(
          {"request", req.method + " " + req.path, "", fmt::format("HTTP status {}", status)},
          status);
  }
}

void log_request(const httplib::Request& req, const httplib::Response& res) {
  std::string micros = "-";
  if (request_start) {
    const auto elapsed = Clock::now() - *request_start;
    micros =
        fmt::format("{}", std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
    request_start.reset();
  }
  // One fputs of a whole line: lines from several threads never interleave mid-line.
  const std::string line =
      fmt::format("vramplan: {} {} {} {} us\n", req.method, req.path, res.status, micros);
  std::fputs(line.c_str(), stderr);
}

// SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second server
// share a port that is in use instead of failing with a clear error.
void socket_options(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

std::optional<Error> check_host(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found != nullptr) freeaddrinfo(found);
  if (rc == 0 && !host.empty()) return std::nullopt;
  return Error{"host", host, "an address of this machine, e.g. 127.0.0.1, ::1 or 0.0.0.0 (all)",
               rc == 0 ? "empty" : gai_strerror(rc)};
}

}  // namespace

std::string server_url(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}/", ipv6 ? "[" : "", host, ipv6 ? "]" : "", port);
}

HttpServer::HttpServer(ServerOptions options)
    : options_(std::move(options)), server_(std::make_unique<httplib::Server>()) {
  httplib::Server& s = *server_;
  const std::size_t threads = options_.threads > 0
                                  ? static_cast<std::size_t>(options_.threads)
                                  : std::max<std::size_t>(16, std::thread::hardware_concurrency());
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_socket_options(socket_options);
  s.set_tcp_nodelay(true);
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_read_timeout(options_.read_timeout_s, 0);
  s.set_write_timeout(options_.write_timeout_s, 0);
  s.set_keep_alive_max_count(1000);
  s.set_keep_alive_timeout(5);

  const std::size_t max_body = options_.max_body_bytes;
  // A declared Content-Length over the limit is answered as soon as the headers are in: httplib
  // 0.11 would first read (and drop) the declared body, so a client that sends only headers
  // waited for the read timeout before its 413. (Shutting the socket's reading side here would
  // also drop the answer; a client that sends the body anyway gets the 413 first, then the
  // connection ends at the read timeout.)
  s.set_pre_routing_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    request_start = Clock::now();
    if (!content_length_above(req, max_body)) return httplib::Server::HandlerResponse::Unhandled;
    Response response = too_large(req, max_body);
    response.headers.emplace_back("Connection", "close");
    to_httplib_response(std::move(response), res);
    return httplib::Server::HandlerResponse::Handled;
  });
  // With "Expect: 100-continue" (curl's way for large bodies) the same limit answers 413 instead
  // of inviting the body with 100 Continue.
  s.set_expect_100_continue_handler(
      [max_body](const httplib::Request& req, httplib::Response& res) {
        if (!content_length_above(req, max_body)) return 100;
        Response response = too_large(req, max_body);
        response.headers.emplace_back("Connection", "close");
        to_httplib_response(std::move(response), res);
        return 413;
      });
  // Every method and path goes to handle_request(), whose router answers 404 and 405 itself.
  const httplib::Server::Handler handler = [](const httplib::Request& req, httplib::Response& res) {
    to_httplib_response(answer(req, to_api_request(req)), res);
  };
  s.Get(".*", handler);
  s.Options(".*", handler);
  // Bodies are read here, chunk by chunk, so that the size limit holds for chunked uploads too
  // (httplib 0.11 enforces it only for a Content-Length).
  const httplib::Server::HandlerWithContentReader with_body =
      [max_body](const httplib::Request& req, httplib::Response& res,
                 const httplib::ContentReader& read) {
        Request request = to_api_request(req);
        // HTTP/1.1: without Content-Length or Transfer-Encoding a request has no body (reading
        // one would wait for the client to close).
        const bool has_body =
            req.has_header("Content-Length") || req.has_header("Transfer-Encoding");
        const BodyRead body = req.is_multipart_form_data() ? BodyRead::kRefused
                              : has_body ? read_body(req, read, max_body, request.body)
                                         : BodyRead::kComplete;
        Response response = body == BodyRead::kComplete ? answer(req, std::move(request))
                                                        : body_error(req, body, max_body);
        // A body not read to its end must not be parsed as the connection's next request.
        if (body != BodyRead::kComplete) response.headers.emplace_back("Connection", "close");
        to_httplib_response(std::move(response), res);
      };
  s.Post(".*", with_body);
  s.Put(".*", with_body);
  s.Patch(".*", with_body);
  s.Delete(".*", with_body);

  const httplib::Server::HandlerWithResponse on_error = [max_body](const httplib::Request& req,
                                                                   httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // ours already
    to_httplib_response(httplib_error(req, res.status, max_body), res);
    return httplib::Server::HandlerResponse::Handled;
  };
  s.set_error_handler(on_error);
  // handle_request() catches everything; this is the net under the net (e.g. bad_alloc while
  // copying a response), so no request can take the server down.
  s.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        std::string what = "unknown exception";
        try {
          if (error) std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        to_httplib_response(
            error_response({"request", req.method + " " + req.path, "", "internal error: " + what},
                           500),
            res);
      });
  if (!options_.quiet) s.set_logger(log_request);
}

HttpServer::~HttpServer() = default;

Result<int> HttpServer::bind() {
  if (auto e = check_host(options_.host)) return *e;
  errno = 0;
  if (options_.port == 0) {
    const int port = server_->bind_to_any_port(options_.host);
    if (port > 0) return port;
  } else if (server_->bind_to_port(options_.host, options_.port)) {
    return options_.port;
  }
  const int error = errno;
  return Error{"port", std::to_string(options_.port), "a free port (0 picks one)",
               fmt::format("cannot listen on {}:{}{}", options_.host, options_.port,
                           error != 0 ? std::string(": ") + std::strerror(error) : "")};
}

bool HttpServer::run() { return server_->listen_after_bind(); }

void HttpServer::stop() { server_->stop(); }

}  // namespace vramplan::server

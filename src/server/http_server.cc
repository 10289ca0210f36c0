#include "server/http_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "server/api.h"

namespace vramplan::server {
namespace {

using Clock = std::chrono::steady_clock;

// When the request on this worker thread started (set before routing, read by the logger).
thread_local std::optional<Clock::time_point> request_start;

Request to_api_request(const httplib::Request& req) {
  Request request;
  request.method = req.method;
  request.path = req.path;
  for (const auto& [key, value] : req.params) request.query.emplace(key, value);
  request.body = req.body;
  request.content_type = req.get_header_value("Content-Type");
  return request;
}

void to_httplib_response(Response response, httplib::Response& res) {
  res.status = response.status;
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
  res.set_content(std::move(response.body), response.content_type);
}

// JSON bodies for the errors httplib answers itself, before any handler runs.
Response httplib_error(const httplib::Request& req, int status, std::size_t max_body) {
  switch (status) {
    case 413:
      return error_response(
          {"body", req.get_header_value("Content-Length") + " bytes",
           fmt::format("at most {} bytes", max_body), "the request body is too large"},
          413);
    case 400:
      return error_response(
          {"request", req.method + " " + req.path, "a well-formed HTTP/1.1 request", ""}, 400);
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
                                  : std::max<std::size_t>(8, std::thread::hardware_concurrency());
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_socket_options(socket_options);
  s.set_tcp_nodelay(true);
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_read_timeout(options_.read_timeout_s, 0);
  s.set_write_timeout(options_.write_timeout_s, 0);
  s.set_keep_alive_max_count(1000);
  s.set_keep_alive_timeout(5);

  s.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    request_start = Clock::now();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Every method and path goes to handle_request(), whose router answers 404 and 405 itself.
  const httplib::Server::Handler handler = [](const httplib::Request& req, httplib::Response& res) {
    to_httplib_response(handle_request(to_api_request(req)), res);
  };
  s.Get(".*", handler);
  s.Post(".*", handler);
  s.Put(".*", handler);
  s.Patch(".*", handler);
  s.Delete(".*", handler);
  s.Options(".*", handler);

  const std::size_t max_body = options_.max_body_bytes;
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

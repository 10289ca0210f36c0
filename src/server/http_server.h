// The HTTP front of the API: cpp-httplib (Debian's libcpp-httplib) feeding handle_request() from
// a thread pool, with a body size limit, timeouts, one log line per request, and JSON errors for
// what httplib itself rejects (oversized bodies, malformed requests).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "vramplan/base/error.h"

namespace httplib {
class Server;
}

namespace vramplan::server {

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8080;                 // 0: any free port (bind() says which)
  bool quiet = false;              // no per-request log lines
  std::size_t max_body_bytes = 1 << 20;
  int read_timeout_s = 10;   // a client that stalls mid-request is dropped
  int write_timeout_s = 10;  // ... or stops reading the answer
  int threads = 0;           // 0: max(16, hardware threads)
};

class HttpServer {
 public:
  explicit HttpServer(ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket. Returns the port (the chosen one when options.port is 0), or an
  // Error naming "host" (cannot be resolved) or "port" (in use, not permitted).
  Result<int> bind();
  // Serves until stop(). REQUIRES: bind() succeeded. False if listening failed.
  bool run();
  // Thread-safe; run() returns once in-flight requests are done.
  void stop();

 private:
  ServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
};

// "http://127.0.0.1:8080/" ("[::1]" for IPv6 hosts).
std::string server_url(const std::string& host, int port);

}  // namespace vramplan::server

// `vramplan serve`: the web UI and the JSON API on one port (see src/server/api.h).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "hub/settings.h"
#include "server/http_server.h"
#include "server/hub_access.h"
#include "server/search_limits.h"

namespace vramplan::cli {
namespace {

// SIGINT/SIGTERM are blocked in every thread and taken by one waiter thread, which stops the
// server: the handler-free way to shut down cleanly (stop() is not async-signal-safe).
class ShutdownOnSignal {
 public:
  explicit ShutdownOnSignal(server::HttpServer& http) {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);  // before any thread starts: all inherit it
    waiter_ = std::thread([this, &http] {
      int signal = 0;
      sigwait(&signals_, &signal);
      if (!done_) {
        std::cerr << "vramplan: " << (signal == SIGINT ? "interrupted" : "terminated")
                  << ", stopping\n";
        http.stop();
      }
    });
  }
  ~ShutdownOnSignal() {
    done_ = true;
    pthread_kill(waiter_.native_handle(), SIGTERM);  // wakes the waiter if no signal came
    waiter_.join();
  }

 private:
  sigset_t signals_;
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

// The Hub settings every request uses: the environment's (HF_ENDPOINT, the cache, offline mode,
// timeouts), with the host's token only when --hub-token says so (see server/hub_access.h).
std::optional<Error> configure_hub(bool send_token) {
  Result<hub::HubSettings> from_env = hub::settings_from_environment();
  if (!from_env) return from_env.error();
  if (send_token && !from_env->token)
    return Error{"--hub-token", "",
                 "a token in HF_TOKEN, HUGGING_FACE_HUB_TOKEN or the file `huggingface-cli login` "
                 "writes ($HF_TOKEN_PATH, default $HF_HOME/token)",
                 "no Hugging Face token found on this machine"};
  server::configure_hub(server::server_hub_settings(std::move(from_env).value(), send_token));
  return std::nullopt;
}

int run_serve(const server::ServerOptions& options, const server::ServerLimits& limits,
              bool send_hub_token) {
  // A client that disconnects mid-answer must cost that answer, not the process.
  signal(SIGPIPE, SIG_IGN);
  server::configure_limits(limits);
  if (std::optional<Error> error = configure_hub(send_hub_token)) return report_error(*error);
  server::HttpServer http(options);
  Result<int> port = http.bind();
  if (!port) {
    Error error = port.error();
    error.field = "--" + error.field;  // "host" -> "--host", as typed
    return report_error(error);
  }
  ShutdownOnSignal shutdown(http);
  std::cout << "vramplan: serving " << server::server_url(options.host, *port)
            << " (Ctrl-C to stop)" << std::endl;
  if (!http.run()) {
    std::cerr << "vramplan: error: the server stopped listening unexpectedly\n";
    return 1;
  }
  std::cerr << "vramplan: stopped\n";
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, std::function<int()>* run) {
  auto options = std::make_shared<server::ServerOptions>();
  auto limits = std::make_shared<server::ServerLimits>();
  auto send_hub_token = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve the web UI and the JSON API (POST /api/estimate, /api/infer, /api/sweep, "
      "/api/roofline; GET "
      "/api/models, /api/gpus, /api/options, /api/infer/options, /api/hub/{org}/{name}) on one "
      "port.");
  cmd->add_option("--host", options->host,
                  "address to listen on; 0.0.0.0 exposes the server to the network")
      ->capture_default_str();
  cmd->add_option("--port", options->port, "TCP port; 0 picks a free one and prints it")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_flag("--quiet", options->quiet, "no log line per request on stderr");
  cmd->add_option("--threads", options->threads,
                  "worker threads (default: the hardware's, at least 8)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--max-searches", limits->max_searches,
                  "layout searches (POST /api/plan) at once; another waits --search-queue-seconds "
                  "for a slot, then is answered 429 with Retry-After (default: hardware threads "
                  "/ 4, at least 1)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--search-queue-seconds", limits->queue_seconds,
                  "how long a search waits for a free slot before 429 (0: refused at once)")
      ->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  cmd->add_option("--search-seconds", limits->search_seconds,
                  "time budget of one layout search; past it the search stops and answers 503")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", options->max_body_bytes,
                  "largest request body; a larger declared Content-Length is answered 413 at once")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
      ->capture_default_str();
  cmd->add_flag("--hub-token", *send_hub_token,
                "send this machine's Hugging Face token (HF_TOKEN or `huggingface-cli login`) "
                "when fetching Hub models for requests; without it the server sends none, so "
                "gated and private models are refused");
  cmd->callback([run, options, limits, send_hub_token] {
    *run = [options, limits, send_hub_token] {
      return run_serve(*options, *limits, *send_hub_token);
    };
  });
}

}  // namespace vramplan::cli

// Test support (header-only, used by src/hub/*_test.cc): runs tests/hub/fixture_server.py, a local
// stand-in for the Hugging Face Hub on 127.0.0.1, and a temporary directory per test.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "hub/http.h"
#include "hub/settings.h"

extern char** environ;

namespace vramplan::hub::testing {

// A directory removed with everything in it when the object goes.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "vramplan-hub-test.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The fixture Hub: started in the constructor (it prints its URLs once it listens), stopped in
// the destructor or by stop().
class FixtureHub {
 public:
  explicit FixtureHub(std::vector<std::string> extra_args = {}) {
    // A proxy configured on the machine must not sit between the tests and 127.0.0.1.
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe failed");
    const std::string script = std::string(VRAMPLAN_SOURCE_DIR) + "/tests/hub/fixture_server.py";
    std::vector<std::string> args = {"python3", script};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    const int rc = posix_spawnp(&pid_, "python3", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (rc != 0) {
      close(out[0]);
      throw std::runtime_error("cannot start python3 " + script);
    }
    const std::string line = read_line(out[0]);
    close(out[0]);
    const nlohmann::json urls = nlohmann::json::parse(line, nullptr, false);
    if (!urls.is_object()) {
      stop();
      throw std::runtime_error("the fixture Hub did not start: '" + line + "'");
    }
    hub = urls.value("hub", "");
    cdn = urls.value("cdn", "");
    https = urls.value("https", "");
    ca = urls.value("ca", "");
  }
  ~FixtureHub() { stop(); }
  FixtureHub(const FixtureHub&) = delete;
  FixtureHub& operator=(const FixtureHub&) = delete;

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  // Every request the servers received: [{server, method, path, authorization, range}].
  nlohmann::json log() const { return get_json(hub + "/__log"); }
  void clear_log() const { get_json(hub + "/__clear"); }

  // Settings for a client of this Hub, with its caches under `dir`.
  HubSettings settings(const std::filesystem::path& dir) const {
    HubSettings s;
    s.endpoint = hub;
    s.cache_dir = (dir / "hub").string();
    s.checkpoint_dir = (dir / "checkpoints").string();
    s.total_timeout_s = 20;
    return s;
  }

  std::string hub, cdn, https, ca;

 private:
  static std::string read_line(int fd) {
    std::string line;
    char c;
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, 30000) > 0 && read(fd, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }

  static nlohmann::json get_json(const std::string& url) {
    HttpClient http;
    HttpRequest request;
    request.url = url;
    HttpOutcome outcome = http.get(request);
    if (!std::holds_alternative<HttpResponse>(outcome)) return nullptr;
    return nlohmann::json::parse(std::get<HttpResponse>(outcome).body, nullptr, false);
  }

  pid_t pid_ = -1;
};

}  // namespace vramplan::hub::testing

#include "hub/settings.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/text.h"

namespace vramplan::hub {
namespace {

// huggingface_hub's ENV_VARS_TRUE_VALUES.
bool is_true(const std::optional<std::string>& value) {
  if (!value) return false;
  const std::string v = to_lower(*value);
  return v == "1" || v == "on" || v == "yes" || v == "true";
}

// Unset and empty mean the same, as `os.getenv(...) or default` does.
std::optional<std::string> non_empty(const EnvLookup& env, const char* name) {
  std::optional<std::string> value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

// "~/x" -> "$HOME/x" (os.path.expanduser).
std::string expand_home(const std::string& path, const EnvLookup& env) {
  if (path == "~" || path.starts_with("~/")) {
    if (std::optional<std::string> home = non_empty(env, "HOME")) return *home + path.substr(1);
  }
  return path;
}

std::string user_cache_home(const EnvLookup& env) {
  if (std::optional<std::string> xdg = non_empty(env, "XDG_CACHE_HOME"))
    return expand_home(*xdg, env);
  return expand_home("~/.cache", env);
}

std::string hf_home(const EnvLookup& env) {
  if (std::optional<std::string> home = non_empty(env, "HF_HOME")) return expand_home(*home, env);
  return user_cache_home(env) + "/huggingface";
}

// huggingface_hub's _clean_token: line breaks removed, surrounding spaces stripped, "" = none.
std::optional<std::string> clean_token(std::string token) {
  std::erase(token, '\r');
  std::erase(token, '\n');
  const size_t first = token.find_first_not_of(" \t");
  if (first == std::string::npos) return std::nullopt;
  const size_t last = token.find_last_not_of(" \t");
  return token.substr(first, last - first + 1);
}

std::optional<std::string> read_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return clean_token(text.str());
}

void read_token(const EnvLookup& env, HubSettings& s) {
  if (is_true(env("HF_HUB_DISABLE_IMPLICIT_TOKEN"))) return;
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    if (std::optional<std::string> value = non_empty(env, name)) {
      s.token = clean_token(*value);
      s.token_source = name;
      return;
    }
  }
  std::string path = hf_home(env) + "/token";
  if (std::optional<std::string> custom = non_empty(env, "HF_TOKEN_PATH"))
    path = expand_home(*custom, env);
  s.token = read_token_file(path);
  if (s.token) s.token_source = path;
}

std::optional<Error> read_endpoint(const EnvLookup& env, HubSettings& s) {
  std::optional<std::string> endpoint = non_empty(env, "HF_ENDPOINT");
  if (!endpoint) return std::nullopt;
  std::string e = *endpoint;
  while (e.ends_with("/")) e.pop_back();
  const bool http = e.starts_with("http://") || e.starts_with("https://");
  const size_t host_start = e.find("://") + 3;
  if (!http || e.size() <= host_start || e.find_first_of(" \t\r\n?#") != std::string::npos)
    return Error{"HF_ENDPOINT", *endpoint,
                 "an http:// or https:// URL such as https://huggingface.co", ""};
  s.endpoint = e;
  return std::nullopt;
}

std::optional<Error> read_timeout(const EnvLookup& env, HubSettings& s) {
  std::optional<std::string> text = non_empty(env, "VRAMPLAN_HUB_TIMEOUT");
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double seconds = std::strtod(text->c_str(), &end);
  if (end != text->c_str() + text->size() || !std::isfinite(seconds) || seconds <= 0 ||
      seconds > 3600)
    return Error{"VRAMPLAN_HUB_TIMEOUT", *text, "seconds per request, above 0 and at most 3600",
                 ""};
  s.total_timeout_s = seconds;
  s.connect_timeout_s = std::min(s.connect_timeout_s, seconds);
  return std::nullopt;
}

std::string hub_cache_dir(const EnvLookup& env) {
  for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
    if (std::optional<std::string> dir = non_empty(env, name)) return expand_home(*dir, env);
  }
  return hf_home(env) + "/hub";
}

std::string checkpoint_dir(const EnvLookup& env) {
  if (std::optional<std::string> dir = non_empty(env, "VRAMPLAN_CACHE_DIR"))
    return expand_home(*dir, env) + "/checkpoints";
  return user_cache_home(env) + "/vramplan/checkpoints";
}

}  // namespace

std::optional<std::string> process_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Result<HubSettings> settings_from_environment(const EnvLookup& env) {
  HubSettings s;
  if (auto e = read_endpoint(env, s)) return *e;
  if (auto e = read_timeout(env, s)) return *e;
  read_token(env, s);
  s.cache_dir = hub_cache_dir(env);
  s.checkpoint_dir = checkpoint_dir(env);
  s.offline = is_true(env("HF_HUB_OFFLINE")) || is_true(env("TRANSFORMERS_OFFLINE"));
  s.refresh = is_true(env("VRAMPLAN_HUB_REFRESH"));
  for (const char* name : {"REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"}) {
    if (std::optional<std::string> bundle = non_empty(env, name)) {
      s.ca_bundle = expand_home(*bundle, env);
      break;
    }
  }
  return s;
}

}  // namespace vramplan::hub

#include "fuzz_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "hub/settings.h"
#include "server/hub_access.h"

namespace vramplan::fuzz {
namespace {

using nlohmann::json;

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool is_byte_count(std::string_view key) {
  return ends_with(key, "bytes") || ends_with(key, "bytes_low") || ends_with(key, "bytes_high") ||
         key.find("bytes_per_") != std::string_view::npos;
}

std::optional<double> number_at(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

void check_order(const json& object, const std::string& path, const std::string& suffix) {
  const auto allocated = number_at(object, ("allocated_bytes" + suffix).c_str());
  const auto reserved = number_at(object, ("reserved_bytes" + suffix).c_str());
  const auto device = number_at(object, ("device_bytes" + suffix).c_str());
  if (allocated && reserved && *allocated > *reserved)
    fail("allocated > reserved", path + " " + object.dump());
  if (reserved && device && *reserved > *device)
    fail("reserved > device", path + " " + object.dump());
  if (allocated && device && !reserved && *allocated > *device)
    fail("allocated > device", path + " " + object.dump());
}

}  // namespace

void fail(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n  %.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(std::min<size_t>(detail.size(), 4000)), detail.data());
  std::abort();
}

void check_bytes(const json& answer, const std::string& path) {
  if (answer.is_object()) {
    for (const auto& [key, value] : answer.items()) {
      const std::string at = path + "." + key;
      if (is_byte_count(key)) {
        if (value.is_null()) fail("a byte count is null (NaN or infinity in the model)", at);
        if (value.is_number()) {
          const double v = value.get<double>();
          if (!std::isfinite(v) || v < 0) fail("a byte count is negative or not finite", at);
        }
      }
      check_bytes(value, at);
    }
    check_order(answer, path, "");
    check_order(answer, path, "_low");
    check_order(answer, path, "_high");
  } else if (answer.is_array()) {
    for (size_t i = 0; i < answer.size(); ++i)
      check_bytes(answer[i], path + "[" + std::to_string(i) + "]");
  } else if (answer.is_number_float() && !std::isfinite(answer.get<double>())) {
    fail("a number is not finite", path);
  }
}

void check_error(const Error& error) {
  if (error.field.empty()) fail("an error names no field", error.message());
  if (error.reason.empty() && error.accepted.empty())
    fail("an error says neither why nor what is accepted", error.message());
}

void check_api_answer(int status, const std::string& body) {
  json parsed;
  try {
    parsed = json::parse(body);
  } catch (const json::exception& e) {
    fail("the answer is not JSON", body);
  }
  if (status == 200) {
    check_bytes(parsed);
    return;
  }
  if (status >= 500 && status != 502 && status != 503 && status != 504)
    fail("a server error (500)", body);
  const json* error = parsed.contains("error") ? &parsed["error"] : nullptr;
  if (error == nullptr || !error->is_object() || !(*error)["field"].is_string() ||
      (*error)["field"].get<std::string>().empty())
    fail("an error answer names no field", body);
}

void use_offline_hub() {
  hub::HubSettings settings;
  settings.endpoint = "http://127.0.0.1:9";  // discard port: nothing answers, never the Hub
  settings.offline = true;
  settings.cache_dir = "/nonexistent/vramplan-fuzz/hub";
  settings.checkpoint_dir = "/nonexistent/vramplan-fuzz/checkpoints";
  server::configure_hub(settings);
}

}  // namespace vramplan::fuzz

#include "server/hub_access.h"

#include <utility>

namespace vramplan::server {
namespace {

std::optional<hub::HubSettings>& configured() {
  static std::optional<hub::HubSettings> settings;
  return settings;
}

}  // namespace

hub::HubSettings server_hub_settings(hub::HubSettings from_environment, bool send_token) {
  if (!send_token) {
    from_environment.token.reset();
    from_environment.token_source.clear();
  }
  return from_environment;
}

void configure_hub(std::optional<hub::HubSettings> settings) { configured() = std::move(settings); }

Result<hub::HubSettings> hub_settings() {
  if (configured()) return *configured();
  Result<hub::HubSettings> from_env = hub::settings_from_environment();
  if (!from_env) return from_env.error();
  return server_hub_settings(std::move(from_env).value(), false);
}

hub::HubModels request_hub() {
  Result<hub::HubSettings> settings = hub_settings();
  // Without valid settings the client reads the environment itself and reports its error (500)
  // when a Hub model is asked for; presets and inline configs still work.
  return settings ? hub::HubModels(std::move(settings).value()) : hub::HubModels();
}

int hub_failure_status(hub::HubFailure failure) {
  using F = hub::HubFailure;
  switch (failure) {
    case F::kNone:
    case F::kInvalidId:
      return 400;
    case F::kUnauthorized:
      return 403;
    case F::kNotFound:
      return 404;
    case F::kOffline:
    case F::kRateLimited:
      return 503;
    case F::kTimeout:
      return 504;
    case F::kUnreachable:
    case F::kBadAnswer:
    case F::kUpstreamError:
      return 502;
    case F::kSettings:
      return 500;
  }
  return 502;
}

Response hub_aware_error(const Error& error, const hub::HubModels& hub) {
  const hub::HubFailure failure = hub.failure();
  Error shown = error;
  const bool refused =
      failure == hub::HubFailure::kUnauthorized || failure == hub::HubFailure::kNotFound;
  if (refused) {
    Result<hub::HubSettings> settings = hub_settings();
    if (settings && !settings->token)
      shown.reason +=
          "; this server sends no Hugging Face token (its operator can start it with "
          "`vramplan serve --hub-token` to use the host's token)";
  }
  return error_response(shown, hub_failure_status(failure));
}

}  // namespace vramplan::server

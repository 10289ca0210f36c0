// How the server fetches models from the Hugging Face Hub ("model": "org/name[@revision]" in
// /api/estimate and /api/infer, and GET /api/hub/{org}/{name}[@revision]): the CLI's client
// (hub::HubModels) with the server's own token policy, and Hub failures as HTTP statuses.
//
// Token policy: a server answers anyone who can reach it, so by default it sends NO token to the
// Hub, even when its host has HF_TOKEN or a `huggingface-cli login` token: gated and private
// models are refused (403) instead of being fetched with the host owner's credentials. With
// `vramplan serve --hub-token` it sends the token the environment names, as the CLI does.
#pragma once

#include <optional>

#include "hub/hub_models.h"
#include "server/api.h"
#include "vramplan/base/error.h"

namespace vramplan::server {

// The settings the server's Hub client uses: those read from the environment, without the token
// unless send_token.
hub::HubSettings server_hub_settings(hub::HubSettings from_environment, bool send_token);

// Set once by `vramplan serve`, before it listens (not thread-safe against requests in flight).
// Until then (or after configure_hub(std::nullopt)) the environment's settings are read per
// request, without a token.
void configure_hub(std::optional<hub::HubSettings> settings);

// The settings requests use now.
Result<hub::HubSettings> hub_settings();

// A Hub client for one request, with the settings above (errors surface when a model is fetched).
hub::HubModels request_hub();

// The HTTP status for a failed fetch: 400 invalid id (and kNone: the scenario itself was wrong),
// 403 gated or private, 404 no such repository / revision / config.json, 503 offline without a
// cached copy or rate-limited, 504 timeout, 502 unreachable or an answer that is not the Hub's,
// 500 invalid Hub settings in the server's environment.
int hub_failure_status(hub::HubFailure failure);

// The error response for a failed request that may have fetched from the Hub: the status from
// hub.failure(), and for refusals the reason says what this server's operator can change.
Response hub_aware_error(const Error& error, const hub::HubModels& hub);

}  // namespace vramplan::server

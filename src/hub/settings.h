// Where and how the Hub client talks to the Hub, read from the same environment variables as
// huggingface_hub (constants.py, utils/_auth.py), so a machine set up for transformers works as is.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "vramplan/base/error.h"

namespace vramplan::hub {

struct HubSettings {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT, no trailing '/'
  std::optional<std::string> token;                 // sent only to the endpoint's own host
  std::string token_source;    // "HF_TOKEN" or the token file's path, for messages
  std::string cache_dir;       // the Hub cache (models--org--name/...)
  std::string checkpoint_dir;  // vramplan's own cache of checkpoint summaries
  bool offline = false;        // HF_HUB_OFFLINE: cache only, no network at all
  bool refresh = false;        // VRAMPLAN_HUB_REFRESH: ask the Hub even when a revision is cached
  double connect_timeout_s = 10;
  double total_timeout_s = 30;  // per request; VRAMPLAN_HUB_TIMEOUT
  std::string ca_bundle;        // REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE / SSL_CERT_FILE
  int parallel_requests = 8;    // safetensors headers read at once
};

// Looks up an environment variable; std::nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The process environment.
std::optional<std::string> process_env(const char* name);

// Reads, in huggingface_hub's order of precedence:
//   endpoint   HF_ENDPOINT (default https://huggingface.co)
//   token      HF_TOKEN, HUGGING_FACE_HUB_TOKEN, then the file $HF_TOKEN_PATH or $HF_HOME/token
//              (what `huggingface-cli login` writes); none with HF_HUB_DISABLE_IMPLICIT_TOKEN=1
//   cache      HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub,
//              ~/.cache/huggingface/hub
//   offline    HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE = 1/ON/YES/TRUE
// and vramplan's own: VRAMPLAN_HUB_TIMEOUT (seconds per request, default 30), VRAMPLAN_HUB_REFRESH,
// VRAMPLAN_CACHE_DIR (default $XDG_CACHE_HOME/vramplan or ~/.cache/vramplan).
// Errors name the variable that is wrong.
Result<HubSettings> settings_from_environment(const EnvLookup& env = process_env);

}  // namespace vramplan::hub

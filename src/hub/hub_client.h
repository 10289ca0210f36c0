// Fetches files of Hub model repositories as huggingface_hub's hf_hub_download does: the cache
// first, then GET {endpoint}/{repo_id}/resolve/{revision}/{filename}, the commit from X-Repo-Commit
// and the blob name from X-Linked-Etag or ETag, stored in the Hugging Face cache layout. Redirects
// are followed hop by hop and the token goes only to the endpoint's own host.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "hub/cache.h"
#include "hub/http.h"
#include "hub/model_id.h"
#include "hub/safetensors.h"
#include "hub/settings.h"
#include "vramplan/base/error.h"

namespace vramplan::hub {

inline constexpr int64_t kMaxJsonBytes = 10 << 20;  // config.json and index files

struct FetchedFile {
  std::string content;
  std::string commit;
  std::string path;  // the snapshot file in the cache ("" when it could not be cached)
  bool from_cache = false;
  std::vector<std::string> notes;  // e.g. the cache could not be written
};

// The file is not in the repository at that revision (HTTP 404 EntryNotFound, or recorded so
// in the cache's .no_exist).
struct MissingFile {
  std::string commit;  // when the Hub said which commit it looked at
};

using FetchOutcome = std::variant<FetchedFile, MissingFile, Error>;

// What kind of failure an error was, for front ends that answer with a status of their own (the
// server maps these to HTTP statuses; the CLI only prints the message).
enum class HubFailure {
  kNone,
  kInvalidId,      // not an org/name[@revision] the Hub accepts (no request was made)
  kNotFound,       // no such repository, revision or config.json
  kUnauthorized,   // gated or private: no token, or the token was refused (HTTP 401/403)
  kRateLimited,    // HTTP 429
  kOffline,        // HF_HUB_OFFLINE and the file is not in the cache
  kUnreachable,    // connection or TLS failure
  kTimeout,        // no answer within the time limit
  kBadAnswer,      // an answer that is not the Hub's: not JSON, too large, no commit, redirects
  kUpstreamError,  // the Hub answered HTTP 5xx or another unexpected status
  kSettings,       // the environment's Hub settings are invalid
};

// Why a checkpoint header could not be read (a note for the user, not an error).
struct ReadFailure {
  std::string reason;
};

class HubClient {
 public:
  explicit HubClient(HubSettings settings);
  ~HubClient();

  const HubSettings& settings() const { return settings_; }
  const HubCache& cache() const { return cache_; }

  // A JSON file of the repository (config.json, model.safetensors.index.json). A revision that is
  // in the cache is read from it without network (always so with HF_HUB_OFFLINE); otherwise the
  // file is downloaded, checked to be JSON of at most 10 MiB, and cached.
  FetchOutcome fetch_json(const ModelRef& ref, const std::string& filename);

  // The model's config.json; a missing one is an error naming the model.
  Result<FetchedFile> fetch_config(const ModelRef& ref);

  // The kind of the last error fetch_json / fetch_config returned (kNone after a success).
  HubFailure last_failure() const { return last_failure_; }

  // Stored bytes and dtypes of the safetensors checkpoint at `commit`: from
  // model.safetensors.index.json and every shard's header, or model.safetensors's header alone;
  // headers come from the cache when the weights are there, else from HTTP Range requests.
  // Summaries are kept in settings().checkpoint_dir by commit, which never changes.
  Result<CheckpointSummary> checkpoint(const std::string& repo_id, const std::string& commit);

 private:
  struct Answer {
    HttpResponse response;
    std::string commit;  // X-Repo-Commit of the endpoint's answer
    std::string etag;    // X-Linked-Etag or ETag, normalised
  };
  struct Failed {
    Error error;
    HubFailure kind;
  };
  using Outcome = std::variant<Answer, MissingFile, Failed>;

  HttpRequest base_request() const;  // timeouts and CA certificates from the settings
  Outcome request(HttpClient& http, const ModelRef& ref, const std::string& filename,
                  const HttpRequest& base);
  FetchOutcome download_json(const ModelRef& ref, const std::string& filename);
  std::variant<TensorStats, MissingFile, ReadFailure> shard_stats(HttpClient& http,
                                                                  const ModelRef& pinned,
                                                                  const std::string& shard);
  std::variant<std::string, MissingFile, ReadFailure> remote_header(HttpClient& http,
                                                                    const ModelRef& pinned,
                                                                    const std::string& shard);
  std::vector<std::variant<TensorStats, MissingFile, ReadFailure>> all_shard_stats(
      const ModelRef& pinned, const std::vector<std::string>& shards);
  Error http_error(const ModelRef& ref, const std::string& url, const HttpResponse& r,
                   bool token_sent) const;
  Error transport_error(const ModelRef& ref, const std::string& url, const TransportError& e) const;

  HubSettings settings_;
  HubCache cache_;
  std::unique_ptr<HttpClient> http_;
  HubFailure last_failure_ = HubFailure::kNone;  // set on the calling thread only
};

// "W/\"abc\"" -> "abc" (huggingface_hub _normalize_etag).
std::string normalize_etag(std::string_view etag);

}  // namespace vramplan::hub

#include "hub/hub_client.h"

#include <fmt/format.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

namespace vramplan::hub {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxRedirects = 10;
constexpr int64_t kFirstHeaderRead = 64 << 10;  // most headers fit: one request per shard
constexpr const char* kIndexFile = "model.safetensors.index.json";
constexpr const char* kSingleFile = "model.safetensors";

std::string file_url(const std::string& endpoint, const ModelRef& ref,
                     const std::string& filename) {
  std::string path;
  size_t start = 0;
  while (start <= filename.size()) {
    const size_t end = std::min(filename.find('/', start), filename.size());
    path += (start ? "/" : "") + url_encode_segment(filename.substr(start, end - start));
    start = end + 1;
  }
  return fmt::format("{}/{}/resolve/{}/{}", endpoint, ref.repo_id, url_encode_segment(ref.revision),
                     path);
}

// The first characters of a body, printable, for messages.
std::string excerpt(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, 60)) out += (c >= 32 && c < 127) ? c : ' ';
  return out + (body.size() > 60 ? "..." : "");
}

std::string host_of(const std::string& url) {
  const size_t start = url.find("://");
  if (start == std::string::npos) return url;
  const size_t end = url.find('/', start + 3);
  return url.substr(0, end);
}

// The id itself was fine, so there is no other value to suggest: the reason says what to do.
Error model_error(const ModelRef& ref, std::string reason) {
  return Error{"model", ref.text(), "", std::move(reason)};
}

HubFailure transport_failure(TransportFailure kind) {
  switch (kind) {
    case TransportFailure::kTimeout:
      return HubFailure::kTimeout;
    case TransportFailure::kTooLarge:
      return HubFailure::kBadAnswer;
    default:
      return HubFailure::kUnreachable;
  }
}

// Mirrors http_error(): the same status and X-Error-Code decide the message and the kind.
HubFailure http_failure(const HttpResponse& r) {
  const std::string code = r.header("x-error-code").value_or("");
  if (code == "RevisionNotFound" || code == "RepoNotFound" ||
      (r.status == 404 && code != "GatedRepo"))
    return HubFailure::kNotFound;
  if (r.status == 401 || r.status == 403) return HubFailure::kUnauthorized;
  if (r.status == 429) return HubFailure::kRateLimited;
  return HubFailure::kUpstreamError;
}

std::optional<std::string> read_local_header(const fs::path& path, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  char first[8];
  if (!in.read(first, 8)) {
    why = fmt::format("{} is shorter than 8 bytes", path.string());
    return std::nullopt;
  }
  const std::optional<int64_t> length = safetensors_header_length(std::string_view(first, 8));
  if (!length) {
    why = fmt::format("{} does not start with a safetensors header length", path.string());
    return std::nullopt;
  }
  std::string header(static_cast<size_t>(*length), '\0');
  if (!in.read(header.data(), *length)) {
    why = fmt::format("{} ends inside its header", path.string());
    return std::nullopt;
  }
  return header;
}

}  // namespace

std::string normalize_etag(std::string_view etag) {
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
    etag = etag.substr(1, etag.size() - 2);
  return std::string(etag);
}

HubClient::HubClient(HubSettings settings)
    : settings_(std::move(settings)),
      cache_(settings_.cache_dir),
      http_(std::make_unique<HttpClient>()) {}

HubClient::~HubClient() = default;

Error HubClient::transport_error(const ModelRef& ref, const std::string& url,
                                 const TransportError& e) const {
  const std::string where = host_of(url);
  switch (e.kind) {
    case TransportFailure::kTimeout:
      return model_error(ref, fmt::format("no answer from {} within {:g} s ({}); "
                                          "VRAMPLAN_HUB_TIMEOUT sets the limit in seconds",
                                          where, settings_.total_timeout_s, e.detail));
    case TransportFailure::kTls:
      return model_error(
          ref, fmt::format("TLS failure talking to {}: {}; if a proxy re-signs TLS, point "
                           "REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE at its CA certificate",
                           where, e.detail));
    case TransportFailure::kConnect:
      return model_error(
          ref, fmt::format("cannot reach {}: {}; without network, set HF_HUB_OFFLINE=1 to use "
                           "only models in the cache ({})",
                           where, e.detail, settings_.cache_dir));
    case TransportFailure::kTooLarge:
      return model_error(ref, fmt::format("{} sent more than {} MiB for {}: not a config file",
                                          where, kMaxJsonBytes >> 20, url));
    default:
      return model_error(ref, fmt::format("fetching {} failed: {}", url, e.detail));
  }
}

Error HubClient::http_error(const ModelRef& ref, const std::string& url, const HttpResponse& r,
                            bool token_sent) const {
  const std::string code = r.header("x-error-code").value_or("");
  const std::string page = fmt::format("{}/{}", settings_.endpoint, ref.repo_id);
  if (code == "RevisionNotFound")
    return model_error(ref, fmt::format("{} has no revision '{}' (a branch, tag or commit)",
                                        ref.repo_id, ref.revision));
  if (code == "RepoNotFound" || (r.status == 404 && code != "GatedRepo"))
    return model_error(
        ref, token_sent
                 ? fmt::format("no model repository {} on {} that the token from {} can see "
                               "(HTTP {})",
                               ref.repo_id, settings_.endpoint, settings_.token_source, r.status)
                 : fmt::format("no model repository {} on {} (HTTP {}); if it is private, set "
                               "HF_TOKEN or run `huggingface-cli login`",
                               ref.repo_id, settings_.endpoint, r.status));
  if (r.status == 401 || r.status == 403)
    return model_error(
        ref, token_sent
                 ? fmt::format("{} is gated or private and the token from {} was refused (HTTP "
                               "{}); accept its licence at {} with that token's account",
                               ref.repo_id, settings_.token_source, r.status, page)
                 : fmt::format("{} is gated or private (HTTP {}); accept its licence at {}, "
                               "then set HF_TOKEN or run `huggingface-cli login`",
                               ref.repo_id, r.status, page));
  if (r.status == 429)
    return model_error(ref, fmt::format("{} is rate-limiting requests (HTTP 429); wait, or set "
                                        "HF_TOKEN for a higher limit",
                                        host_of(url)));
  if (r.status >= 500)
    return model_error(ref, fmt::format("{} answered HTTP {} for {}; try again later, or set "
                                        "HF_HUB_OFFLINE=1 to use cached models only",
                                        host_of(url), r.status, url));
  return model_error(ref, fmt::format("{} answered HTTP {} for {}", host_of(url), r.status, url));
}

HttpRequest HubClient::base_request() const {
  HttpRequest r;
  r.connect_timeout_s = settings_.connect_timeout_s;
  r.total_timeout_s = settings_.total_timeout_s;
  r.ca_bundle = settings_.ca_bundle;
  return r;
}

HubClient::Outcome HubClient::request(HttpClient& http, const ModelRef& ref,
                                      const std::string& filename, const HttpRequest& base) {
  const std::string endpoint_origin = url_origin(settings_.endpoint);
  std::string url = file_url(settings_.endpoint, ref, filename);
  Answer answer;
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    HttpRequest req = base;
    req.url = url;
    // The token is for the endpoint alone: never for the CDN or any other host a redirect names.
    const bool own_host = url_origin(url) == endpoint_origin;
    const bool token_sent = own_host && settings_.token.has_value();
    if (token_sent) req.headers.push_back("Authorization: Bearer " + *settings_.token);
    HttpOutcome outcome = http.get(req);
    if (auto* e = std::get_if<TransportError>(&outcome))
      return Failed{transport_error(ref, url, *e), transport_failure(e->kind)};
    HttpResponse& r = std::get<HttpResponse>(outcome);
    // As get_hf_file_metadata: the commit and ETag of the endpoint's own answer, before any
    // redirect to a CDN.
    if (own_host && answer.commit.empty() && r.header("x-repo-commit")) {
      answer.commit = *r.header("x-repo-commit");
      answer.etag =
          normalize_etag(r.header("x-linked-etag").value_or(r.header("etag").value_or("")));
    }
    if (r.status >= 300 && r.status < 400) {
      const std::string next = resolve_location(url, r.header("location").value_or(""));
      if (next.empty())
        return Failed{
            model_error(ref, fmt::format("{} redirected {} to an unusable address '{}'",
                                         host_of(url), url, r.header("location").value_or(""))),
            HubFailure::kBadAnswer};
      url = next;
      continue;
    }
    if (r.status == 200 || r.status == 206) {
      answer.response = std::move(r);
      return answer;
    }
    const std::string code = r.header("x-error-code").value_or("");
    if (r.status == 404 && (code == "EntryNotFound" || (code.empty() && own_host)))
      return MissingFile{r.header("x-repo-commit").value_or(answer.commit)};
    return Failed{http_error(ref, url, r, token_sent), http_failure(r)};
  }
  return Failed{model_error(ref, fmt::format("more than {} redirects fetching {}", kMaxRedirects,
                                             file_url(settings_.endpoint, ref, filename))),
                HubFailure::kBadAnswer};
}

FetchOutcome HubClient::download_json(const ModelRef& ref, const std::string& filename) {
  HttpRequest base = base_request();
  base.max_body_bytes = kMaxJsonBytes;
  Outcome outcome = request(*http_, ref, filename, base);
  if (auto* failed = std::get_if<Failed>(&outcome)) {
    last_failure_ = failed->kind;
    return failed->error;
  }
  if (auto* missing = std::get_if<MissingFile>(&outcome)) {
    cache_.record_missing(ref, missing->commit, filename);
    return *missing;
  }
  Answer& a = std::get<Answer>(outcome);
  const std::string url = file_url(settings_.endpoint, ref, filename);
  last_failure_ = HubFailure::kBadAnswer;  // until the answer passes the checks below
  if (!nlohmann::json::accept(a.response.body))
    return model_error(ref, fmt::format("the answer for {} is not JSON ({}: \"{}\"); is "
                                        "HF_ENDPOINT ({}) a Hugging Face Hub?",
                                        url, a.response.header("content-type").value_or("no type"),
                                        excerpt(a.response.body), settings_.endpoint));
  // huggingface_hub refuses answers without these: they name the cache entries.
  if (!is_commit_hash(a.commit))
    return model_error(ref, fmt::format("the answer for {} has no commit id (X-Repo-Commit); is "
                                        "HF_ENDPOINT ({}) a Hugging Face Hub?",
                                        url, settings_.endpoint));
  if (!is_safe_etag(a.etag))
    return model_error(
        ref, fmt::format("the answer for {} has no usable ETag ('{}')", url, excerpt(a.etag)));
  last_failure_ = HubFailure::kNone;
  FetchedFile file;
  file.commit = a.commit;
  auto stored = cache_.store(ref, a.commit, a.etag, filename, a.response.body);
  if (auto* path = std::get_if<fs::path>(&stored))
    file.path = path->string();
  else
    file.notes.push_back("not cached: " + std::get<std::string>(stored));
  file.content = std::move(a.response.body);
  return file;
}

FetchOutcome HubClient::fetch_json(const ModelRef& ref, const std::string& filename) {
  last_failure_ = HubFailure::kNone;
  // A commit never changes; a branch or tag is taken as cached unless VRAMPLAN_HUB_REFRESH asks.
  const bool use_cache = settings_.offline || !settings_.refresh || is_commit_hash(ref.revision);
  if (std::optional<std::string> commit = use_cache ? cache_.commit_for(ref) : std::nullopt) {
    if (std::optional<fs::path> path = cache_.find(ref.repo_id, *commit, filename)) {
      if (std::optional<std::string> text = read_small_file(*path, kMaxJsonBytes))
        return FetchedFile{std::move(*text), *commit, path->string(), true, {}};
    }
    if (cache_.known_missing(ref.repo_id, *commit, filename)) return MissingFile{*commit};
  }
  if (settings_.offline) {
    last_failure_ = HubFailure::kOffline;
    return model_error(ref, fmt::format("HF_HUB_OFFLINE is set and {} of {} at '{}' is not in the "
                                        "Hugging Face cache ({}); fetch it once with network",
                                        filename, ref.repo_id, ref.revision,
                                        cache_.repo_dir(ref.repo_id).string()));
  }
  return download_json(ref, filename);
}

Result<FetchedFile> HubClient::fetch_config(const ModelRef& ref) {
  FetchOutcome outcome = fetch_json(ref, "config.json");
  if (auto* e = std::get_if<Error>(&outcome)) return *e;
  if (std::holds_alternative<MissingFile>(outcome)) {
    last_failure_ = HubFailure::kNotFound;
    return model_error(ref, fmt::format("{} has no config.json at revision '{}' (or no such "
                                        "repository or revision on {})",
                                        ref.repo_id, ref.revision, settings_.endpoint));
  }
  return std::get<FetchedFile>(std::move(outcome));
}

std::variant<std::string, MissingFile, ReadFailure> HubClient::remote_header(
    HttpClient& http, const ModelRef& pinned, const std::string& shard) {
  HttpRequest base = base_request();
  base.stop_at_max = true;  // a server that ignores Range must not send us the weights
  base.range = std::pair<int64_t, int64_t>{0, kFirstHeaderRead - 1};
  base.max_body_bytes = kFirstHeaderRead;
  Outcome first = request(http, pinned, shard, base);
  if (auto* failed = std::get_if<Failed>(&first)) return ReadFailure{failed->error.reason};
  if (auto* m = std::get_if<MissingFile>(&first)) return *m;
  std::string bytes = std::move(std::get<Answer>(first).response.body);
  const std::optional<int64_t> length = safetensors_header_length(bytes);
  if (!length) return ReadFailure{fmt::format("{} does not start like a safetensors file", shard)};
  const int64_t needed = 8 + *length;
  if (static_cast<int64_t>(bytes.size()) < needed) {
    base.range = std::pair<int64_t, int64_t>{0, needed - 1};
    base.max_body_bytes = needed;
    Outcome rest = request(http, pinned, shard, base);
    if (auto* failed = std::get_if<Failed>(&rest)) return ReadFailure{failed->error.reason};
    if (auto* m = std::get_if<MissingFile>(&rest)) return *m;
    bytes = std::move(std::get<Answer>(rest).response.body);
    if (static_cast<int64_t>(bytes.size()) < needed)
      return ReadFailure{fmt::format("{} ended inside its header", shard)};
  }
  return bytes.substr(8, static_cast<size_t>(*length));
}

std::variant<TensorStats, MissingFile, ReadFailure> HubClient::shard_stats(
    HttpClient& http, const ModelRef& pinned, const std::string& shard) {
  std::string header;
  if (std::optional<fs::path> local = cache_.find(pinned.repo_id, pinned.revision, shard)) {
    std::string why;
    std::optional<std::string> text = read_local_header(*local, why);
    if (!text) return ReadFailure{why};
    header = std::move(*text);
  } else if (settings_.offline) {
    return ReadFailure{fmt::format("HF_HUB_OFFLINE is set and {} is not in the cache", shard)};
  } else {
    auto remote = remote_header(http, pinned, shard);
    if (auto* m = std::get_if<MissingFile>(&remote)) return *m;
    if (auto* f = std::get_if<ReadFailure>(&remote)) return *f;
    header = std::move(std::get<std::string>(remote));
  }
  auto stats = parse_safetensors_header(header);
  if (auto* why = std::get_if<std::string>(&stats)) return ReadFailure{shard + ": " + *why};
  return std::get<TensorStats>(stats);
}

std::vector<std::variant<TensorStats, MissingFile, ReadFailure>> HubClient::all_shard_stats(
    const ModelRef& pinned, const std::vector<std::string>& shards) {
  std::vector<std::variant<TensorStats, MissingFile, ReadFailure>> results(shards.size());
  const size_t workers = std::clamp<size_t>(settings_.parallel_requests, 1, shards.size());
  if (workers == 1) {
    for (size_t i = 0; i < shards.size(); ++i) results[i] = shard_stats(*http_, pinned, shards[i]);
    return results;
  }
  // Many shards (DeepSeek-V3 has 163): a few connections at once, each thread its own handle.
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      HttpClient http;
      for (size_t i = next++; i < shards.size(); i = next++)
        results[i] = shard_stats(http, pinned, shards[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

Result<CheckpointSummary> HubClient::checkpoint(const std::string& repo_id,
                                                const std::string& commit) {
  const ModelRef pinned{repo_id, commit, true};
  if (!is_commit_hash(commit) || !parse_model_ref(repo_id).ok())
    return model_error(pinned, "a checkpoint is read at a full commit of a valid Hub id");
  const fs::path saved =
      fs::path(settings_.checkpoint_dir) / repo_folder_name(repo_id) / (commit + ".json");
  if (std::optional<std::string> text = read_small_file(saved, 1 << 20)) {
    const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_object() && j.value("commit", "") == commit && j.value("repo", "") == repo_id &&
        j.value("dtypes", nlohmann::json()).is_object())
      return checkpoint_from_json(j);
  }
  FetchOutcome index_file = fetch_json(pinned, kIndexFile);
  if (auto* e = std::get_if<Error>(&index_file)) return *e;
  CheckpointSummary s;
  s.repo_id = repo_id;
  s.commit = commit;
  std::vector<std::string> shards = {kSingleFile};
  std::optional<int64_t> index_total;
  const bool sharded = std::holds_alternative<FetchedFile>(index_file);
  if (sharded) {
    auto index = parse_safetensors_index(std::get<FetchedFile>(index_file).content);
    if (auto* why = std::get_if<std::string>(&index)) return model_error(pinned, *why);
    shards = std::get<SafetensorsIndex>(index).shards;
    index_total = std::get<SafetensorsIndex>(index).total_size;
  }
  s.files = static_cast<int64_t>(shards.size());
  std::string failure;
  for (size_t i = 0; auto& result : all_shard_stats(pinned, shards)) {
    if (auto* stats = std::get_if<TensorStats>(&result)) add_stats(s.stats, *stats);
    if (std::holds_alternative<MissingFile>(result))
      failure = sharded ? fmt::format("{} is listed in the index but missing", shards[i])
                        : std::string("no safetensors weights (model.safetensors or its index)");
    if (auto* f = std::get_if<ReadFailure>(&result)) failure = f->reason;
    ++i;
  }
  if (failure.empty()) {
    s.dtypes_known = true;
    s.total_bytes = s.stats.bytes;
    s.source = sharded ? fmt::format("{} + {} shard headers", kIndexFile, shards.size())
                       : fmt::format("{} header", kSingleFile);
    write_file_atomically(saved, checkpoint_to_json(s).dump());  // a convenience: errors ignored
    return s;
  }
  if (!index_total) return model_error(pinned, failure);
  s.stats = TensorStats{};
  s.total_bytes = *index_total;
  s.source = fmt::format("{} metadata.total_size; shard headers not read: {}", kIndexFile, failure);
  return s;
}

}  // namespace vramplan::hub

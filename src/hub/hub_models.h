// The Hub behind `--model org/name[@revision]`, for front ends (CLI, server, `infer`): a
// ModelFetcher for resolve_scenario, and afterwards notes on where the config came from and what
// the checkpoint stores.
//
//   hub::HubModels hub;
//   auto resolved = resolve_scenario(settings, read_file, hub.fetcher(read_file));
//   ... estimate ...
//   std::optional<nlohmann::json> checkpoint = hub.report(est.parameters.total, est.warnings);
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hub/hub_client.h"
#include "hub/safetensors.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/model/params.h"

namespace vramplan::hub {

class HubModels {
 public:
  HubModels();  // settings come from the environment, read when a Hub id is first fetched
  explicit HubModels(HubSettings settings);
  ~HubModels();

  // For resolve_scenario, called for a --model value that is neither a preset nor a path. With
  // local_files (the CLI), an existing file of that name wins over a Hub id; without (a server),
  // only the Hub is asked.
  ModelFetcher fetcher(FileReader local_files = nullptr);

  // config.json of a Hub id "org/name[@revision]"; errors name "model".
  Result<std::string> fetch_config(const std::string& model);

  // What the last failed fetch_config was (kNone when it succeeded or none was made): the server
  // answers 400, 403, 404, 502, 503 or 504 by it.
  HubFailure failure() const { return failure_; }

  // The commit the fetched config.json came from ("" before a successful fetch).
  std::string fetched_commit() const { return fetched_ ? fetched_->file.commit : ""; }

  // After a Hub model was fetched: appends to `notes` where its config came from and the
  // checkpoint's stored size and dtypes beside `computed_params` (or why they are unknown), and
  // returns the JSON "checkpoint" object: {available, source, repo, commit, files, total_bytes,
  // dtypes, params} or {available: false, reason}. nullopt when no Hub model was fetched.
  std::optional<nlohmann::json> report(int64_t computed_params, std::vector<std::string>& notes);
  // The same, checking the checkpoint module by module against `counts` (safetensors.h
  // ModuleCounts): a gap of more than 0.01% names the modules that differ.
  std::optional<nlohmann::json> report(const ParamCounts& counts, std::vector<std::string>& notes);

 private:
  Result<HubClient*> client();
  std::optional<nlohmann::json> report_with(int64_t computed_params, const ModuleCounts* modules,
                                            std::vector<std::string>& notes);

  std::optional<HubSettings> settings_;
  std::unique_ptr<HubClient> client_;
  struct Fetched {
    ModelRef ref;
    FetchedFile file;
  };
  std::optional<Fetched> fetched_;
  HubFailure failure_ = HubFailure::kNone;
};

}  // namespace vramplan::hub

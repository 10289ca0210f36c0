#include "hub/hub_models.h"

#include <fmt/format.h>

#include <filesystem>

namespace vramplan::hub {

HubModels::HubModels() = default;
HubModels::HubModels(HubSettings settings) : settings_(std::move(settings)) {}
HubModels::~HubModels() = default;

Result<HubClient*> HubModels::client() {
  if (!client_) {
    if (!settings_) {
      Result<HubSettings> from_env = settings_from_environment();
      if (!from_env) return from_env.error();
      settings_ = std::move(from_env).value();
    }
    client_ = std::make_unique<HubClient>(*settings_);
  }
  return client_.get();
}

Result<std::string> HubModels::fetch_config(const std::string& model) {
  failure_ = HubFailure::kInvalidId;
  Result<ModelRef> ref = parse_model_ref(model);
  if (!ref) return ref.error();
  failure_ = HubFailure::kSettings;
  Result<HubClient*> hub = client();
  if (!hub) return hub.error();
  Result<FetchedFile> file = (*hub)->fetch_config(*ref);
  failure_ = (*hub)->last_failure();
  if (!file) return file.error();
  failure_ = HubFailure::kNone;
  fetched_ = Fetched{*ref, *file};
  return file->content;
}

ModelFetcher HubModels::fetcher(FileReader local_files) {
  return [this, local_files](const std::string& model) -> Result<std::string> {
    std::error_code ec;
    if (local_files && std::filesystem::is_regular_file(model, ec)) return local_files(model);
    return fetch_config(model);
  };
}

std::optional<nlohmann::json> HubModels::report(int64_t computed_params,
                                                std::vector<std::string>& notes) {
  return report_with(computed_params, nullptr, notes);
}

namespace {

// vramplan's count keyed as module_of keys the checkpoint's tensors.
ModuleCounts module_counts(const ParamCounts& counts) {
  ModuleCounts m;
  m["embedding"] = counts.embedding + counts.position_embedding;
  if (counts.lm_head > 0) m["lm head"] = counts.lm_head;
  if (counts.vision > 0) m["vision tower + projector"] = counts.vision;
  if (counts.final_norm > 0) m["other"] = counts.final_norm;
  for (size_t i = 0; i < counts.layers.size(); ++i)
    m["layer " + std::to_string(i)] = counts.layers[i].total();
  return m;
}

}  // namespace

std::optional<nlohmann::json> HubModels::report(const ParamCounts& counts,
                                                std::vector<std::string>& notes) {
  const ModuleCounts modules = module_counts(counts);
  return report_with(counts.total, &modules, notes);
}

std::optional<nlohmann::json> HubModels::report_with(int64_t computed_params,
                                                     const ModuleCounts* modules,
                                                     std::vector<std::string>& notes) {
  if (!fetched_ || !client_) return std::nullopt;
  const Fetched& f = *fetched_;
  notes.push_back(
      fmt::format("config.json of {} (commit {}) {}", f.ref.text(), f.file.commit.substr(0, 12),
                  f.file.from_cache ? "read from the Hugging Face cache"
                                    : "downloaded from " + client_->settings().endpoint));
  for (const std::string& note : f.file.notes) notes.push_back(note);
  Result<CheckpointSummary> summary = client_->checkpoint(f.ref.repo_id, f.file.commit);
  if (!summary) {
    notes.push_back("checkpoint size and dtypes not available: " + summary.error().reason);
    return nlohmann::json{{"available", false}, {"reason", summary.error().reason}};
  }
  notes.push_back(checkpoint_note(*summary, computed_params, modules));
  nlohmann::json out = checkpoint_to_json(*summary);
  out["available"] = true;
  return out;
}

}  // namespace vramplan::hub

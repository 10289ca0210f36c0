// The fit questions' settings (CLI flags, API requests) to a FitRequest: the question, its cap
// and sequence step, the scenario, and the planner's settings for the GPU-count question.
#include "vramplan/io/fit_settings.h"

#include <fmt/format.h>

#include <algorithm>

#include "io/setting_reader.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/io/plan_settings.h"

namespace vramplan {
namespace {

using nlohmann::json;

Result<FitQuestion> question_of(const json& settings) {
  const std::string accepted = "micro_batch, seq_len, global_batch, gpus";
  if (!settings.contains("question")) return Error{"question", "", accepted, "say what to find"};
  const json& v = settings.at("question");
  if (!v.is_string()) return Error{"question", setting_text(v), accepted, ""};
  std::string text = v.get<std::string>();
  std::replace(text.begin(), text.end(), '-', '_');  // the CLI's micro-batch
  for (size_t i = 0; i < kFitQuestionNames.size(); ++i)
    if (text == kFitQuestionNames[i]) return static_cast<FitQuestion>(i);
  return Error{"question", v.get<std::string>(), accepted, ""};
}

// The keys the question itself searches: given too, they would be overridden silently.
std::optional<Error> refuse_searched(const json& settings, FitQuestion q) {
  auto refuse = [&](const char* key, const char* why) -> std::optional<Error> {
    if (!settings.contains(key)) return std::nullopt;
    return Error{key, setting_text(settings.at(key)),
                 fmt::format("no {} with question {}", key, fit_question_name(q)), why};
  };
  switch (q) {
    case FitQuestion::kMicroBatch:
      return refuse("micro_batch", "the question searches the micro-batch");
    case FitQuestion::kSeqLen:
      return refuse("seq_len", "the question searches the sequence length (up_to caps it)");
    case FitQuestion::kGlobalBatch:
      if (auto e = refuse("global_batch", "the question searches the global batch (up_to caps it)"))
        return e;
      return refuse("grad_accum", "the question searches the gradient accumulation");
    case FitQuestion::kGpus:
      if (auto e = refuse("gpus", "the question searches the GPU count (up_to caps it)")) return e;
      return refuse("grad_accum",
                    "the GPU count changes dp: give the sequences per step as global_batch");
  }
  return std::nullopt;
}

Result<FitRequest> request_from(const json& settings, const FileReader& read_file) {
  if (!settings.is_object())
    return Error{"settings", setting_text(settings).substr(0, 60), "a JSON object of settings", ""};
  FitRequest r;
  Result<FitQuestion> question = question_of(settings);
  if (!question) return question.error();
  r.question = *question;
  if (auto e = refuse_searched(settings, r.question)) return *e;
  if (auto e = read_integer_setting(settings, "up_to", r.up_to)) return *e;
  if (settings.contains("up_to") && r.up_to < 1)
    return Error{"up_to", std::to_string(r.up_to), "a positive integer", ""};
  if (auto e = read_integer_setting(settings, "seq_multiple", r.seq_multiple)) return *e;
  if (settings.contains("seq_multiple") && r.question != FitQuestion::kSeqLen)
    return Error{"seq_multiple", setting_text(settings.at("seq_multiple")),
                 "only with question seq_len", ""};
  json rest = settings;
  for (const OptionSpec& o : fit_options()) rest.erase(o.key);
  if (r.question == FitQuestion::kGpus) {
    // The planner's request, on one GPU for now: each count tried sets its own. Offloading is
    // another answer to "how few GPUs", so the planner searches it only when asked.
    rest["gpus"] = 1;
    if (!rest.contains("offload_search")) rest["offload_search"] = "never";
    Result<PlanRequest> plan = plan_request_from_settings(rest, read_file);
    if (!plan) return plan.error();
    r.plan = std::move(plan).value();
    r.base = r.plan.base;
    r.gpu = r.plan.gpu;
    r.headroom = r.plan.headroom;
    r.settings = r.plan.settings;
    return r;
  }
  // Only headroom of the planner's keys applies to one layout.
  for (const OptionSpec& o : plan_options()) {
    if (std::string(o.key) == "headroom" || !rest.contains(o.key)) continue;
    return Error{o.key, setting_text(rest.at(o.key)), "only with question gpus",
                 "the other questions estimate one layout"};
  }
  if (auto e = read_number_setting(rest, "headroom", r.headroom)) return *e;
  rest.erase("headroom");
  r.micro_batch_fixed = rest.contains("micro_batch");
  Result<ResolvedScenario> resolved = resolve_scenario(rest, read_file);
  if (!resolved) return resolved.error();
  r.base = resolved->scenario;
  // The GPU and its node as `estimate` chooses them (its fit table's first row, add_host_fit).
  Result<std::vector<Fit>> rows = fit_rows(*resolved, 0);
  if (!rows) return rows.error();
  const Fit& chosen = rows->front();
  const Gpu* catalog = builtin_gpus().find(chosen.gpu);
  r.gpu = catalog && !resolved->gpu_memory_gib ? *catalog : Gpu{};
  r.gpu.id = chosen.gpu;
  r.gpu.name = chosen.name;
  r.gpu.nominal_bytes = chosen.nominal_bytes;
  r.gpu.usable_bytes = chosen.usable_bytes;
  r.host_gpus_per_node = catalog ? catalog->gpus_per_node : 8;
  r.host_memory_gib = resolved->host_memory_gib.value_or(catalog ? catalog->host_memory_gib : 0.0);
  r.settings = rest;
  return r;
}

}  // namespace

Result<FitRequest> fit_request_from_settings(const json& settings, const FileReader& read_file) {
  return request_from(settings, read_file);
}

Result<FitAnswer> fit_from_settings(const json& settings, const FileReader& read_file) {
  Result<FitRequest> request = fit_request_from_settings(settings, read_file);
  if (!request) return request.error();
  return fit(*request);
}

}  // namespace vramplan

// The planner's front-end side: settings (CLI flags, API requests) to a PlanRequest, and a
// PlanResult to JSON and to a terminal table.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/framework_layouts.h"
#include "core/pipeline.h"
#include "core/planner_search.h"
#include "vramplan/planner.h"

namespace vramplan {
namespace {

using nlohmann::json;
using K = OptionKind;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

constexpr PlanOption kPlanOptions[] = {
    {"gpus_per_node", K::kInteger, "from the GPU catalog (8)",
     "GPUs per node: tensor parallelism stays inside one by default"},
    {"max_tp", K::kInteger, "gpus_per_node", "largest tensor-parallel degree to consider"},
    {"headroom", K::kNumber, "0.1", "fraction of usable GPU memory kept free"},
    {"top", K::kInteger, "5", "layouts to show"},
    {"threads", K::kInteger, "0 (all cores)", "search threads"},
};

std::string as_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Integers and numbers typed or as text (the CLI passes text), naming the key on failure.
std::optional<Error> read_integer(const json& settings, const char* key, int64_t& out) {
  if (!settings.contains(key) || settings[key].is_null()) return std::nullopt;
  const json& v = settings[key];
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
    return std::nullopt;
  }
  if (v.is_number_float() && std::isfinite(v.get<double>()) &&
      v.get<double>() == std::floor(v.get<double>()) && std::fabs(v.get<double>()) < 9e18) {
    out = static_cast<int64_t>(v.get<double>());
    return std::nullopt;
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc() && ptr == s.data() + s.size() && !s.empty()) return std::nullopt;
  }
  return Error{key, as_text(v), "an integer", ""};
}

std::optional<Error> read_number(const json& settings, const char* key, double& out) {
  if (!settings.contains(key) || settings[key].is_null()) return std::nullopt;
  const json& v = settings[key];
  if (v.is_number()) {
    out = v.get<double>();
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) return Error{key, s, "a number", ""};
  } else {
    return Error{key, as_text(v), "a number", ""};
  }
  if (!std::isfinite(out)) return Error{key, as_text(v), "a finite number", ""};
  return std::nullopt;
}

// The split the settings fix, if any, as the one planner split kind it is. The kinds are
// exclusive: a combination that is none of them (balanced with only one of the embedding and the
// loss counted as a layer) is refused rather than planned as another split than the one asked for.
Result<std::optional<PipelineSplit>> fixed_split(const json& settings, const ModelConfig& model,
                                                 const Parallelism& p) {
  const bool given = std::any_of(std::begin(kSplitSettingKeys), std::end(kSplitSettingKeys),
                                 [&](const char* key) { return settings.contains(key); });
  if (!given) return std::optional<PipelineSplit>{};
  if (p.compute_balanced_split) {
    if (auto e = validate_pipeline(model, p)) return *e;  // names what compute cannot combine with
    return std::optional<PipelineSplit>{PipelineSplit{SplitKind::kCompute, 0, 0}};
  }
  const bool lighter_ends = p.first_stage_layers > 0 || p.last_stage_layers > 0;
  if (lighter_ends && (p.embedding_as_stage || p.loss_as_stage || p.balanced_split))
    return Error{p.first_stage_layers > 0 ? "first_stage_layers" : "last_stage_layers",
                 std::to_string(std::max(p.first_stage_layers, p.last_stage_layers)),
                 "first/last stage layers with an even split of the rest, or no first/last stage "
                 "layers",
                 "explicit stage sizes leave nothing for embedding/loss accounting or a balanced "
                 "split to place"};
  const std::optional<SplitKind> kind = split_kind_of(p);
  if (!kind)
    return Error{"pipeline_split", "balanced",
                 "even with embedding_stage/loss_stage, or balanced with both or neither",
                 "plan searches the balanced split with both the embedding and the loss counted "
                 "as layers (torchtitan's split) or neither; estimate models the others"};
  return std::optional<PipelineSplit>{
      PipelineSplit{*kind, p.first_stage_layers, p.last_stage_layers}};
}

// Each layout key given fixes its dimension to the resolved value.
Result<PlanSpace> space_from(const json& settings, const Scenario& s) {
  const Parallelism& p = s.parallel;
  PlanSpace space;
  auto fix = [&](const char* key, auto& list, auto value) {
    if (settings.contains(key)) list = {value};
  };
  fix("tp", space.tp, p.tp);
  fix("pp", space.pp, p.pp);
  fix("vpp", space.vpp, p.vpp);
  fix("cp", space.cp, p.cp);
  fix("ep", space.ep, p.ep);
  fix("etp", space.etp, p.etp);
  fix("dp", space.dp, p.dp);
  fix("micro_batch", space.micro_batch, s.training.micro_batch);
  fix("zero", space.zero, p.zero);
  fix("fsdp_shard_group", space.fsdp_shard_group, p.fsdp_shard_group);
  fix("sequence_parallel", space.sequence_parallel, p.sequence_parallel);
  fix("distributed_optimizer", space.distributed_optimizer, p.distributed_optimizer);
  fix("schedule", space.schedule, p.schedule);
  fix("recompute", space.recompute, s.training.recompute);
  fix("fsdp", space.fsdp, p.fsdp);
  Result<std::optional<PipelineSplit>> split = fixed_split(settings, s.model, p);
  if (!split) return split.error();
  space.fixed_split = *split;
  return restrict_to_framework(std::move(space), settings, s);
}

Result<Gpu> gpu_of(const ResolvedScenario& resolved) {
  const std::string id = resolved.gpu.empty() ? "h100-80gb" : resolved.gpu;
  const Gpu* gpu = builtin_gpus().find(id);
  if (gpu == nullptr) return Error{"gpu", id, builtin_gpus().ids(), "not in the GPU catalog"};
  Gpu out = *gpu;
  if (resolved.gpu_memory_gib) {
    // Another capacity for the same chip: its speeds stay.
    const Gpu custom = custom_gpu(*resolved.gpu_memory_gib);
    out.nominal_bytes = custom.nominal_bytes;
    out.usable_bytes = custom.usable_bytes;
    out.name += fmt::format(" with {:g} GiB", *resolved.gpu_memory_gib);
  }
  return out;
}

json step_time_json(const StepTime& t) {
  return {{"compute_s", t.compute_s},     {"recompute_s", t.recompute_s},
          {"tp_comm_s", t.tp_comm_s},     {"cp_comm_s", t.cp_comm_s},
          {"ep_comm_s", t.ep_comm_s},     {"cpu_bound_s", t.cpu_bound_s},
          {"pp_bubble_s", t.pp_bubble_s}, {"dp_comm_exposed_s", t.dp_comm_exposed_s},
          {"optimizer_s", t.optimizer_s}, {"step_time_s", t.step_time_s}};
}

json parallel_json(const PlanLayout& l) {
  return {{"tp", l.tp},
          {"sequence_parallel", l.sequence_parallel},
          {"pp", l.pp},
          {"vpp", l.vpp},
          {"schedule", schedule_name(l.schedule)},
          {"split", split_name(l.split.kind)},
          {"first_stage_layers", l.split.first_stage_layers},
          {"last_stage_layers", l.split.last_stage_layers},
          {"cp", l.cp},
          {"ep", l.ep},
          {"etp", l.etp},
          {"dp", l.dp},
          {"zero", l.sharding.zero},
          {"fsdp", fsdp_name(l.sharding.fsdp)},
          {"fsdp_shard_group", l.sharding.fsdp_shard_group},
          {"distributed_optimizer", l.sharding.distributed_optimizer}};
}

// Settings `vramplan estimate --scenario` reads back into this very layout.
json scenario_settings(const PlanResult& p, const PlanLayout& l) {
  json s = p.settings.is_object() ? p.settings : json::object();
  for (const char* key : kPlanLayoutKeys) s.erase(key);
  s["gpus"] = p.gpus;
  s["global_batch"] = p.global_batch;
  s["seq_len"] = p.seq_len;
  s["tp"] = l.tp;
  s["sequence_parallel"] = l.sequence_parallel;
  s["pp"] = l.pp;
  s["vpp"] = l.vpp;
  s["schedule"] = schedule_name(l.schedule);
  s["dp"] = l.dp;
  s["cp"] = l.cp;
  s["ep"] = l.ep;
  s["etp"] = l.etp;
  s["micro_batch"] = l.micro_batch;
  s["recompute"] = recompute_name(l.recompute);
  s["zero"] = l.sharding.zero;
  s["fsdp"] = fsdp_name(l.sharding.fsdp);
  if (l.sharding.fsdp == FsdpMode::kHybridShard)
    s["fsdp_shard_group"] = l.sharding.fsdp_shard_group;
  s["distributed_optimizer"] = l.sharding.distributed_optimizer;
  if (l.split.first_stage_layers > 0) s["first_stage_layers"] = l.split.first_stage_layers;
  if (l.split.last_stage_layers > 0) s["last_stage_layers"] = l.split.last_stage_layers;
  if (l.pp == 1) return s;  // no split: the framework's default one stays
  Parallelism split;
  set_split(l.split, split);
  s["embedding_stage"] = split.embedding_as_stage;
  s["loss_stage"] = split.loss_as_stage;
  s["pipeline_split"] = split.compute_balanced_split ? "compute"
                        : split.balanced_split       ? "balanced"
                                                     : "even";
  return s;
}

json peak_json(const PlanCandidate& c) {
  return {{"stage", c.peak_stage},
          {"stage_index", c.peak_stage_index},
          {"allocated_bytes", c.allocated_bytes},
          {"reserved_bytes", c.reserved_bytes},
          {"device_bytes", c.device_bytes}};
}

json candidate_json(const PlanResult& p, const PlanCandidate& c) {
  return {{"layout", layout_name(c.layout)},
          {"parallel", parallel_json(c.layout)},
          {"micro_batch", c.layout.micro_batch},
          {"recompute", recompute_name(c.layout.recompute)},
          {"peak", peak_json(c)},
          {"used_fraction", static_cast<double>(c.device_bytes) / p.gpu.usable_bytes},
          {"tokens_per_s_per_gpu", c.time.tokens_per_s_per_gpu},
          {"mfu", c.time.mfu},
          {"step_time_s", c.time.step_time_s},
          {"step_time", step_time_json(c.time)},
          {"scenario", scenario_settings(p, c.layout)}};
}

json miss_json(const PlanResult& p, const PlanCandidate& c) {
  return {{"layout", layout_name(c.layout)},
          {"parallel", parallel_json(c.layout)},
          {"micro_batch", c.layout.micro_batch},
          {"recompute", recompute_name(c.layout.recompute)},
          {"peak", peak_json(c)},
          {"over_bytes", c.device_bytes - p.limit_bytes},
          {"scenario", scenario_settings(p, c.layout)}};
}

std::string with_commas(double value) {
  const std::string digits = fmt::format("{:.0f}", value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::span<const PlanOption> plan_options() { return kPlanOptions; }

Result<PlanRequest> plan_request_from_settings(const json& settings, const FileReader& read_file) {
  if (!settings.is_object())
    return Error{"settings", as_text(settings).substr(0, 60), "a JSON object of settings", ""};
  PlanRequest r;
  json scenario_keys = settings;
  for (const PlanOption& o : kPlanOptions) scenario_keys.erase(o.key);
  // The world size is the planner's to split: dp, when given, is a fixed dimension instead.
  scenario_keys.erase("gpus");
  if (!settings.contains("gpus"))
    return Error{"gpus", "", "the number of GPUs to plan for (an integer ≥ 1)",
                 "the planner splits a given number of GPUs"};
  if (auto e = read_integer(settings, "gpus", r.gpus)) return *e;
  if (!scenario_keys.contains("global_batch"))
    return Error{"global_batch", "", "sequences per optimizer step (an integer ≥ 1)",
                 "layouts are compared at a fixed global batch"};
  Result<ResolvedScenario> resolved = resolve_scenario(scenario_keys, read_file);
  if (!resolved) return resolved.error();
  r.base = resolved->scenario;
  Result<PlanSpace> space = space_from(scenario_keys, r.base);
  if (!space) return space.error();
  r.space = *std::move(space);
  const bool dense_standard =
      !r.base.model.is_moe() && r.base.model.attention != AttentionKind::kMla;
  if (r.base.training.recompute == Recompute::kSelectiveOp && !dense_standard)
    return Error{"recompute", "selective-op", "none, selective or full for MoE and MLA models",
                 "op-level selective checkpointing is modelled for dense layers with standard "
                 "attention only"};
  if (r.base.training.recompute == Recompute::kSelectiveOp &&
      r.base.training.fp8 != Fp8Recipe::kNone)
    return Error{"recompute", "selective-op", "none, selective or full with fp8",
                 "op-level selective checkpointing is modelled for bf16 layers only"};
  Result<Gpu> gpu = gpu_of(*resolved);
  if (!gpu) return gpu.error();
  r.gpu = *gpu;
  r.cluster = default_cluster(r.gpu);
  int64_t per_node = r.cluster.gpus_per_node, top = r.top_k, threads = r.threads;
  if (auto e = read_integer(settings, "gpus_per_node", per_node)) return *e;
  if (per_node < 1 || per_node > 4096)
    return Error{"gpus_per_node", std::to_string(per_node), "an integer from 1 to 4096", ""};
  r.cluster.gpus_per_node = static_cast<int>(per_node);
  if (auto e = read_integer(settings, "max_tp", r.max_tp)) return *e;
  if (settings.contains("max_tp") && r.max_tp < 1)
    return Error{"max_tp", std::to_string(r.max_tp), "an integer ≥ 1", ""};
  if (auto e = read_number(settings, "headroom", r.headroom)) return *e;
  if (auto e = read_integer(settings, "top", top)) return *e;
  if (auto e = read_integer(settings, "threads", threads)) return *e;
  if (top < 1 || top > 1000)
    return Error{"top", std::to_string(top), "an integer from 1 to 1000", ""};
  if (threads < 0 || threads > 1024)
    return Error{"threads", std::to_string(threads), "0 (all cores) to 1024", ""};
  r.top_k = static_cast<int>(top);
  r.threads = static_cast<int>(threads);
  r.settings = scenario_keys;
  return r;
}

Result<PlanResult> plan_from_settings(const json& settings, const FileReader& read_file) {
  Result<PlanRequest> request = plan_request_from_settings(settings, read_file);
  if (!request) return request.error();
  return plan(*request);
}

json plan_to_json(const PlanResult& p) {
  json out = {{"model", p.model},
              {"gpus", p.gpus},
              {"gpu",
               {{"id", p.gpu.id},
                {"name", p.gpu.name},
                {"usable_bytes", p.gpu.usable_bytes},
                {"gpus_per_node", p.cluster.gpus_per_node}}},
              {"max_tp", p.max_tp},
              {"headroom", p.headroom},
              {"limit_bytes", p.limit_bytes},
              {"seq_len", p.seq_len},
              {"global_batch", p.global_batch},
              {"evaluated", p.stats.evaluated},
              {"stats",
               {{"evaluated", p.stats.evaluated},
                {"memory_computed", p.stats.memory_computed},
                {"memory_fallback", p.stats.memory_fallback},
                {"pruned", p.stats.pruned},
                {"fitting", p.stats.fitting},
                {"untimed", p.stats.untimed},
                {"seconds", p.stats.seconds},
                {"threads", p.stats.threads}}},
              {"candidates", json::array()},
              {"families", json::array()},
              {"why", p.why},
              {"closest_miss", nullptr},
              {"suggestions", p.suggestions}};
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    json c = candidate_json(p, p.candidates[i]);
    c["rank"] = i + 1;
    out["candidates"].push_back(std::move(c));
  }
  for (const FamilyOutcome& f : p.families) {
    json family = {
        {"name", family_name(f.family)},
        {"best", f.best ? candidate_json(p, *f.best) : json(nullptr)},
        {"closest_miss", f.closest_miss ? miss_json(p, *f.closest_miss) : json(nullptr)}};
    if (f.best && !p.candidates.empty())
      family["slower_pct"] =
          (1 - f.best->time.tokens_per_s_per_gpu / p.candidates.front().time.tokens_per_s_per_gpu) *
          100;
    out["families"].push_back(std::move(family));
  }
  if (p.closest_miss) out["closest_miss"] = miss_json(p, *p.closest_miss);
  return out;
}

std::string render_plan(const PlanResult& p) {
  std::string out =
      fmt::format("vramplan plan · {} · {} × {} ({} per node) · seq {} · global batch {}\n",
                  p.model, p.gpus, p.gpu.name, p.cluster.gpus_per_node, p.seq_len, p.global_batch);
  out += fmt::format("limit: {:.1f} GiB per GPU ({:.1f} GiB usable less {:.0f}% headroom)\n",
                     p.limit_bytes / kGiB, p.gpu.usable_bytes / kGiB, p.headroom * 100);
  const PlanStats& s = p.stats;
  out += fmt::format(
      "searched {} layouts in {:.3f} s on {} thread(s): {} peaks computed, {} ruled out by a "
      "model-state bound, {} fit\n\n",
      with_commas(static_cast<double>(s.evaluated)), s.seconds, s.threads,
      with_commas(static_cast<double>(s.memory_computed)),
      with_commas(static_cast<double>(s.pruned)), with_commas(static_cast<double>(s.fitting)));
  if (p.candidates.empty()) {
    out += "No layout fits.\n";
    if (p.closest_miss) {
      const PlanCandidate& m = *p.closest_miss;
      out += fmt::format("The closest, {}, needs {:.1f} GiB per GPU: {:.1f} GiB over the limit.\n",
                         layout_name(m.layout), m.device_bytes / kGiB,
                         (m.device_bytes - p.limit_bytes) / kGiB);
    }
    if (!p.suggestions.empty()) out += "Try:\n";
    for (const std::string& tip : p.suggestions) out += "  - " + tip + "\n";
    return out;
  }
  size_t width = 6;
  for (const PlanCandidate& c : p.candidates) width = std::max(width, layout_name(c.layout).size());
  out += fmt::format("{:>3}  {:<{}}  {:>15}  {:>9}  {:>10}  {:>6}\n", "#", "layout", width,
                     "peak GiB/limit", "step s", "tok/s/GPU", "MFU");
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    const PlanCandidate& c = p.candidates[i];
    out += fmt::format(
        "{:>3}  {:<{}}  {:>15}  {:>9.3f}  {:>10}  {:>5.1f}%\n", i + 1, layout_name(c.layout), width,
        fmt::format("{:.1f}/{:.1f}", c.device_bytes / kGiB, p.limit_bytes / kGiB),
        c.time.step_time_s, with_commas(c.time.tokens_per_s_per_gpu), c.time.mfu * 100);
  }
  out += "\nWhy: " + p.why + "\n";
  return out;
}

}  // namespace vramplan

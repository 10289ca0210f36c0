// The planner's settings (CLI flags, API requests) to a PlanRequest: the scenario keys, the
// layout keys that fix a dimension of the search, and plan_options().
#include "vramplan/io/plan_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "io/setting_reader.h"
#include "plan/framework_space.h"
#include "plan/planner_search.h"
#include "training/framework_layouts.h"
#include "training/pipeline.h"
#include "vramplan/interop/import.h"
#include "vramplan/io/roofline_settings.h"

namespace vramplan {
namespace {

using nlohmann::json;
using K = OptionKind;

// The split the settings fix, if any, as the one planner split kind it is. The kinds are
// exclusive: a combination that is none of them (balanced with only one of the embedding and the
// loss counted as a layer) is refused rather than planned as another split than the one asked for.
Result<std::optional<PipelineSplit>> fixed_split(const json& settings, const ModelConfig& model,
                                                 const Parallelism& p) {
  const bool given = std::any_of(std::begin(kSplitSettingKeys), std::end(kSplitSettingKeys),
                                 [&](const char* key) { return settings.contains(key); });
  if (!given) return std::optional<PipelineSplit>{};
  if (!p.chunk_layers.empty())
    return Error{"pipeline_layout", settings["pipeline_layout"].dump(),
                 "first_stage_layers/last_stage_layers, embedding_stage/loss_stage or "
                 "pipeline_split (plan searches pp and vpp)",
                 "a layout fixes every stage; vramplan estimate takes it"};
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

}  // namespace

namespace {

Result<PlanRequest> request_from(const json& settings, const FileReader& read_file) {
  if (!settings.is_object())
    return Error{"settings", setting_text(settings).substr(0, 60), "a JSON object of settings", ""};
  PlanRequest r;
  json scenario_keys = settings;
  for (const OptionSpec& o : plan_options()) scenario_keys.erase(o.key);
  // The world size is the planner's to split: dp, when given, is a fixed dimension instead.
  scenario_keys.erase("gpus");
  if (!settings.contains("gpus"))
    return Error{"gpus", "", "the number of GPUs to plan for (an integer ≥ 1)",
                 "the planner splits a given number of GPUs"};
  if (auto e = read_integer_setting(settings, "gpus", r.gpus)) return *e;
  // Gradient accumulation on `gpus` data-parallel ranks is a global batch; the planner then
  // splits it its own way.
  if (scenario_keys.contains("grad_accum") && !scenario_keys.contains("global_batch")) {
    int64_t accum = 1, micro = 1;
    if (auto e = read_integer_setting(settings, "grad_accum", accum)) return *e;
    if (auto e = read_integer_setting(settings, "micro_batch", micro)) return *e;
    if (accum < 1 || micro < 1 || accum > (1 << 20) || micro > (1 << 20) || r.gpus < 1 ||
        r.gpus > (1 << 24))
      return Error{"grad_accum", std::to_string(accum),
                   "a positive count of microbatches per step, with --gpus and --micro-batch", ""};
    scenario_keys["global_batch"] = micro * accum * r.gpus;
  }
  scenario_keys.erase("grad_accum");
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
  if (auto e = read_integer_setting(settings, "gpus_per_node", per_node)) return *e;
  if (per_node < 1 || per_node > 4096)
    return Error{"gpus_per_node", std::to_string(per_node), "an integer from 1 to 4096", ""};
  r.cluster.gpus_per_node = static_cast<int>(per_node);
  if (auto e = read_offload_bandwidths(settings, r.cluster)) return *e;
  r.host_memory_gib = resolved->host_memory_gib.value_or(r.gpu.host_memory_gib);
  if (settings.contains("offload_search")) {
    const json& v = settings.at("offload_search");
    if (!v.is_string() || (v != "auto" && v != "never"))
      return Error{"offload_search", setting_text(v), "auto, never", ""};
    r.offload_search = v == "auto";
  }
  if (auto e = read_integer_setting(settings, "max_tp", r.max_tp)) return *e;
  if (settings.contains("max_tp") && r.max_tp < 1)
    return Error{"max_tp", std::to_string(r.max_tp), "an integer ≥ 1", ""};
  if (auto e = read_number_setting(settings, "headroom", r.headroom)) return *e;
  if (auto e = read_integer_setting(settings, "top", top)) return *e;
  if (auto e = read_integer_setting(settings, "threads", threads)) return *e;
  if (auto e = read_integer_setting(settings, "space", r.space_points)) return *e;
  if (top < 1 || top > 1000)
    return Error{"top", std::to_string(top), "an integer from 1 to 1000", ""};
  if (threads < 0 || threads > 1024)
    return Error{"threads", std::to_string(threads), "0 (all cores) to 1024", ""};
  r.top_k = static_cast<int>(top);
  r.threads = static_cast<int>(threads);
  r.settings = scenario_keys;
  return r;
}

}  // namespace

Result<PlanRequest> plan_request_from_settings(const json& settings, const FileReader& read_file) {
  Result<SettingsWithImport> given = apply_from(settings, ImportFor::kPlan);
  if (!given) return given.error();
  Result<PlanRequest> request = request_from(given->settings, read_file);
  if (!request)
    return given->imported ? name_as_imported(request.error(), *given->imported, settings)
                           : request.error();
  PlanRequest out = std::move(request).value();
  if (given->imported) out.imported = imported_to_json(*given->imported);
  return out;
}

Result<PlanResult> plan_from_settings(const json& settings, const FileReader& read_file) {
  Result<PlanRequest> request = plan_request_from_settings(settings, read_file);
  if (!request) return request.error();
  return plan(*request);
}

}  // namespace vramplan

#include "core/framework_layouts.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "core/pipeline.h"
#include "core/planner_search.h"

namespace vramplan {
namespace {

using nlohmann::json;

FrameworkLayouts megatron() {
  FrameworkLayouts f;
  // schedules.py: forward_backward_pipelining_without_interleaving (1F1B) and
  // _with_interleaving; there is no all-forward-all-backward schedule. Its sharding modes
  // (distributed optimizer, Megatron-FSDP's optim / optim_grads / optim_grads_params, torch
  // FSDP2) hold what vramplan's ZeRO stages and FSDP modes hold, so none is ruled out.
  f.schedule = {Schedule::k1F1B, Schedule::kInterleaved};
  f.source =
      "Megatron-LM schedules only 1F1B and interleaved 1F1B "
      "(megatron/core/pipeline_parallel/schedules.py)";
  return f;
}

FrameworkLayouts torchtitan() {
  FrameworkLayouts f;
  // FSDP2 fully_shard (reshard_after_forward or not), HSDP, or DDP (replicate): the parameters
  // are sharded whenever anything is, so there is no ZeRO-1/2 and no distributed optimizer.
  f.zero = {0};
  f.distributed_optimizer = {false};
  f.split.assign(kSplitOrder, kSplitOrder + kGenericSplitKinds);
  f.split.push_back(SplitKind::kBalancedEmbeddingAndLoss);
  f.source =
      "torchtitan shards with FSDP2 fully_shard, HSDP or DDP: no ZeRO-1/2 and no distributed "
      "optimizer (parallelize_llama.py); its pipeline split is its own by default, any other "
      "by module_fqns_per_model_part";
  return f;
}

FrameworkLayouts deepspeed() {
  FrameworkLayouts f;
  f.vpp = {1};
  f.schedule = {Schedule::k1F1B};
  f.fsdp = {FsdpMode::kNone};
  f.distributed_optimizer = {false};
  f.pipeline_max_zero = 1;
  f.source =
      "DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3 (runtime/pipe/engine.py) and runs "
      "1F1B without virtual stages (runtime/pipe/schedule.py TrainSchedule); it has no FSDP";
  return f;
}

FrameworkLayouts nanotron() {
  FrameworkLayouts f;
  f.vpp = {1};
  f.schedule = {Schedule::k1F1B, Schedule::kGPipe};  // pp_engine "1f1b" or "afab"
  f.zero = {0, 1};
  f.fsdp = {FsdpMode::kNone};
  f.distributed_optimizer = {false};
  f.split = {SplitKind::kCompute};
  f.source =
      "nanotron has ZeRO-1 at most (helpers.py: ZeroDistributedOptimizer for any zero_stage), "
      "the 1F1B and AFAB pipeline engines without virtual stages (config/parallelism_config.py) "
      "and places layers by compute cost (models/base.py)";
  return f;
}

FrameworkLayouts hf_trainer() {
  FrameworkLayouts f;
  f.pp = {1};
  f.distributed_optimizer = {false};
  f.source =
      "the Hugging Face Trainer runs DDP, FSDP (accelerate) or DeepSpeed ZeRO, without pipeline "
      "parallelism or Megatron's distributed optimizer";
  return f;
}

template <class T>
bool listed(const std::vector<T>& list, const T& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

template <class T, class Name>
std::string names(const std::vector<T>& list, Name name) {
  std::string out;
  for (const T& v : list) out += (out.empty() ? "" : ", ") + name(v);
  return out;
}

std::string as_text(int64_t v) { return std::to_string(v); }
std::string as_text(bool v) { return v ? "true" : "false"; }
std::string as_text(Schedule v) { return schedule_name(v); }
std::string as_text(FsdpMode v) { return fsdp_name(v); }
std::string as_text(SplitKind v) { return split_name(v); }

// A dimension the settings fixed must be in the framework's list; one they left open takes it.
template <class T>
std::optional<Error> restrict(const json& settings, const char* key, const std::vector<T>& runs,
                              std::vector<T>& space, const char* framework, const char* source) {
  if (runs.empty()) return std::nullopt;
  if (!settings.contains(key)) {
    space = runs;
    return std::nullopt;
  }
  for (const T& v : space)
    if (!listed(runs, v))
      return Error{key, as_text(v),
                   fmt::format("{} under --framework {}",
                               names(runs, [](const T& x) { return as_text(x); }), framework),
                   source};
  return std::nullopt;
}

// The split setting the user gave, to name in an error.
const char* split_key(const json& settings) {
  for (const char* key : kSplitSettingKeys)
    if (settings.contains(key)) return key;
  return "pipeline_split";
}

// A split kind in the settings that choose it.
const char* split_settings(SplitKind k) {
  switch (k) {
    case SplitKind::kEven:
      return "pipeline_split even";
    case SplitKind::kEmbeddingAndLoss:
      return "embedding_stage and loss_stage";
    case SplitKind::kEmbedding:
      return "embedding_stage";
    case SplitKind::kLoss:
      return "loss_stage";
    case SplitKind::kLighterEnds:
      return "first_stage_layers/last_stage_layers";
    case SplitKind::kBalanced:
      return "pipeline_split balanced";
    case SplitKind::kBalancedEmbeddingAndLoss:
      return "pipeline_split balanced with embedding_stage and loss_stage";
    case SplitKind::kCompute:
      return "pipeline_split compute";
  }
  return "";
}

Error split_refused(const json& settings, const FrameworkLayouts& f, const char* framework) {
  const char* key = split_key(settings);
  const json& given = settings[key];
  return Error{
      key, given.is_string() ? given.get<std::string>() : given.dump(),
      fmt::format("{} under --framework {}",
                  names(f.split, [](SplitKind k) { return std::string(split_settings(k)); }),
                  framework),
      f.source};
}

}  // namespace

const FrameworkLayouts& framework_layouts(Framework framework) {
  // Built once: estimate() asks on every call, the planner's fallback included.
  static const std::array<FrameworkLayouts, kFrameworkNames.size()> kAll = {
      megatron(), torchtitan(), deepspeed(), nanotron(), hf_trainer()};  // Framework's order
  return kAll[static_cast<size_t>(framework)];
}

std::optional<SplitKind> split_kind_of(const Parallelism& p) {
  if (p.compute_balanced_split) return SplitKind::kCompute;
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0) return SplitKind::kLighterEnds;
  if (p.balanced_split) {
    if (p.embedding_as_stage != p.loss_as_stage) return std::nullopt;
    return p.embedding_as_stage ? SplitKind::kBalancedEmbeddingAndLoss : SplitKind::kBalanced;
  }
  if (p.embedding_as_stage && p.loss_as_stage) return SplitKind::kEmbeddingAndLoss;
  if (p.embedding_as_stage) return SplitKind::kEmbedding;
  if (p.loss_as_stage) return SplitKind::kLoss;
  return SplitKind::kEven;
}

std::vector<std::string> layout_outside_framework(const Scenario& s) {
  std::vector<std::string> out;
  if (s.framework_id < 0) return out;
  const auto framework = static_cast<Framework>(s.framework_id);
  const FrameworkLayouts& f = framework_layouts(framework);
  const Parallelism& p = s.parallel;
  auto check = [&](const char* key, const auto& runs, const auto& value) {
    if (listed(runs, value)) return;
    out.push_back(fmt::format("{} = {} (it runs {})", key, as_text(value),
                              names(runs, [](const auto& x) { return as_text(x); })));
  };
  check("pp", f.pp, p.pp);
  check("zero", f.zero, p.zero);
  check("fsdp", f.fsdp, p.fsdp);
  check("distributed_optimizer", f.distributed_optimizer, p.distributed_optimizer);
  if (p.pp > 1) {
    check("vpp", f.vpp, p.vpp);
    check("schedule", f.schedule, p.schedule);
    const std::optional<SplitKind> kind = split_kind_of(p);
    if (kind) check("pipeline_split", f.split, *kind);
    if (!kind && !f.split.empty())
      out.push_back(
          fmt::format("a balanced split with only one of embedding_stage/loss_stage "
                      "(it runs {})",
                      names(f.split, [](SplitKind k) { return as_text(k); })));
    if (f.pipeline_max_zero && p.zero > *f.pipeline_max_zero)
      out.push_back(fmt::format("zero = {} with pp = {} (it runs ZeRO 0 to {} with a pipeline)",
                                p.zero, p.pp, *f.pipeline_max_zero));
  }
  return out;
}

Result<PlanSpace> restrict_to_framework(PlanSpace space, const json& settings,
                                        const Scenario& scenario) {
  if (scenario.framework_id < 0) return space;
  const auto framework = static_cast<Framework>(scenario.framework_id);
  const FrameworkLayouts& f = framework_layouts(framework);
  const char* name = framework_name(framework);
  if (auto e = restrict(settings, "pp", f.pp, space.pp, name, f.source)) return *e;
  if (auto e = restrict(settings, "vpp", f.vpp, space.vpp, name, f.source)) return *e;
  if (auto e = restrict(settings, "schedule", f.schedule, space.schedule, name, f.source))
    return *e;
  if (auto e = restrict(settings, "zero", f.zero, space.zero, name, f.source)) return *e;
  if (auto e = restrict(settings, "fsdp", f.fsdp, space.fsdp, name, f.source)) return *e;
  if (auto e = restrict(settings, "distributed_optimizer", f.distributed_optimizer,
                        space.distributed_optimizer, name, f.source))
    return *e;
  if (space.fixed_split && !listed(f.split, space.fixed_split->kind))
    return split_refused(settings, f, name);
  if (space.split.empty()) space.split = f.split;
  space.pipeline_max_zero = f.pipeline_max_zero;
  // Both fixed: no layout of the framework has them together.
  if (f.pipeline_max_zero && settings.contains("zero") && settings.contains("pp") &&
      space.pp.front() > 1 && space.zero.front() > *f.pipeline_max_zero)
    return Error{
        "zero", as_text(space.zero.front()),
        fmt::format("0 to {} with pp > 1 under --framework {}", *f.pipeline_max_zero, name),
        f.source};
  return space;
}

}  // namespace vramplan

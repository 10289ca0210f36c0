// restrict_to_framework: the planner's search space cut down to what --framework runs.
#include "plan/framework_space.h"

#include <fmt/format.h>

#include "training/framework_layouts.h"
#include "training/pipeline.h"

namespace vramplan {
namespace {

using nlohmann::json;

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
    if (!runs_value(runs, v))
      return Error{key, layout_value_text(v),
                   fmt::format("{} under --framework {}", layout_values_text(runs), framework),
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
  return Error{key, given.is_string() ? given.get<std::string>() : given.dump(),
               fmt::format("{} under --framework {}", layout_values_text(f.split, split_settings),
                           framework),
               f.source};
}

}  // namespace

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
  if (auto e = restrict(settings, "recompute", f.recompute, space.recompute, name, f.source))
    return *e;
  if (space.fixed_split && !runs_value(f.split, space.fixed_split->kind))
    return split_refused(settings, f, name);
  if (space.split.empty()) space.split = f.split;
  space.pipeline_max_zero = f.pipeline_max_zero;
  // Both fixed: no layout of the framework has them together.
  if (f.pipeline_max_zero && settings.contains("zero") && settings.contains("pp") &&
      space.pp.front() > 1 && space.zero.front() > *f.pipeline_max_zero)
    return Error{
        "zero", layout_value_text(space.zero.front()),
        fmt::format("0 to {} with pp > 1 under --framework {}", *f.pipeline_max_zero, name),
        f.source};
  return space;
}

}  // namespace vramplan

// What each training framework can run, for the planner: it searches only layouts the chosen
// framework supports and refuses a fixed setting the framework lacks (docs/frameworks.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "vramplan/error.h"
#include "vramplan/frameworks.h"
#include "vramplan/planner.h"

namespace vramplan {

// The framework's choices as PlanSpace lists; an empty list leaves that dimension open.
struct FrameworkLayouts {
  std::vector<int64_t> pp;  // {1}: no pipeline parallelism
  std::vector<int64_t> vpp;
  std::vector<Schedule> schedule;
  std::vector<int64_t> zero;
  std::vector<FsdpMode> fsdp;
  std::vector<bool> distributed_optimizer;
  std::vector<SplitKind> split;  // in the order the planner names splits by
  std::optional<int64_t> pipeline_max_zero;
  const char* source = "";  // where the restrictions come from
};

FrameworkLayouts framework_layouts(Framework framework);

// `space` restricted to what the scenario's framework runs (none: unchanged). A dimension the
// settings fixed (a key present in `settings`) must be one the framework runs, else an Error
// naming the key, the value and what the framework accepts; the others take its list.
Result<PlanSpace> restrict_to_framework(PlanSpace space, const nlohmann::json& settings,
                                        const Scenario& scenario);

}  // namespace vramplan

// What each training framework can run, for the planner: it searches only layouts the chosen
// framework supports and refuses a fixed setting the framework lacks (docs/frameworks.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

const FrameworkLayouts& framework_layouts(Framework framework);

// The split kind a parallelism's split fields describe (set_split's inverse), or nothing for a
// combination that is no planner kind (balanced with only one of embedding/loss).
std::optional<SplitKind> split_kind_of(const Parallelism& parallel);

// What of the scenario's layout its framework does not run, in words ("zero = 2 (nanotron runs
// 0, 1)"), each with the framework's source; empty when it runs all of it or no framework is set.
// estimate() still estimates such a layout as given and says so in a warning.
std::vector<std::string> layout_outside_framework(const Scenario& scenario);

// `space` restricted to what the scenario's framework runs (none: unchanged). A dimension the
// settings fixed (a key present in `settings`) must be one the framework runs, else an Error
// naming the key, the value and what the framework accepts; the others take its list.
Result<PlanSpace> restrict_to_framework(PlanSpace space, const nlohmann::json& settings,
                                        const Scenario& scenario);

}  // namespace vramplan

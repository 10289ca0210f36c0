// What each training framework can run (docs/frameworks.md): estimate() warns about a layout its
// framework cannot run, and the planner searches only what it runs (plan/framework_space.h).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/training/frameworks.h"
#include "vramplan/training/pipeline_split.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// The framework's choices per layout dimension; an empty list leaves that dimension open.
struct FrameworkLayouts {
  std::vector<int64_t> pp;  // {1}: no pipeline parallelism
  std::vector<int64_t> vpp;
  std::vector<Schedule> schedule;
  std::vector<int64_t> zero;
  std::vector<FsdpMode> fsdp;
  std::vector<bool> distributed_optimizer;
  std::vector<SplitKind> split;  // in the order the planner names splits by
  std::optional<int64_t> pipeline_max_zero;
  std::vector<Recompute> recompute;  // the activation checkpointing it has
  const char* source = "";           // where the restrictions come from
};

const FrameworkLayouts& framework_layouts(Framework framework);

// Whether a framework's list allows `value` (an empty list allows every value).
template <class T>
bool runs_value(const std::vector<T>& runs, const T& value) {
  return runs.empty() || std::find(runs.begin(), runs.end(), value) != runs.end();
}

// A layout value as warnings and errors write it ("4", "true", "interleaved", "full_shard").
std::string layout_value_text(int64_t v);
std::string layout_value_text(bool v);
std::string layout_value_text(Schedule v);
std::string layout_value_text(FsdpMode v);
std::string layout_value_text(SplitKind v);
std::string layout_value_text(Recompute v);

// "a, b, c": each value of the list as `text` writes it (layout_value_text by default).
template <class T>
std::string layout_values_text(const std::vector<T>& list) {
  std::string out;
  for (const T& v : list) out += (out.empty() ? "" : ", ") + layout_value_text(v);
  return out;
}
template <class T, class Text>
std::string layout_values_text(const std::vector<T>& list, Text text) {
  std::string out;
  for (const T& v : list) out += (out.empty() ? "" : ", ") + std::string(text(v));
  return out;
}

// What of the scenario's layout its framework does not run, in words ("zero = 2 (nanotron runs
// 0, 1)"), each with the framework's source; empty when it runs all of it or no framework is set.
// estimate() still estimates such a layout as given and says so in a warning.
std::vector<std::string> layout_outside_framework(const Scenario& scenario);

}  // namespace vramplan

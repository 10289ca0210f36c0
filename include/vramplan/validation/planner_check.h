// The planner against measurements: does it choose the layouts that ran fastest?
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vramplan/base/error.h"

namespace vramplan {

// For each (model, GPU count) group of the Ultra-Scale Playbook sweep
// (data/measurements/ultrascale_playbook_benchmarks.csv): the planner restricted to what nanotron
// varied there (dp, tp up to 32, pp with its compute-cost split and 1F1B, ZeRO 0/1, micro-batch; TP
// with sequence parallelism; same sequence length and global batch) on H100 80GB nodes of 8, and
// where its choices rank among the layouts that ran, by measured tokens/s per GPU.
struct PlannerCheckGroup {
  std::string model;  // "1B", "3B", "8B", "80B"
  int64_t gpus = 0;
  int measured = 0;           // distinct layouts that ran
  double best_measured = 0;   // tokens/s per GPU of the fastest that ran
  std::string best_layout;    // ... and its layout
  std::string top_layout;     // the planner's first choice ("" when nothing fits)
  std::string top_status;     // "ran", "crashed" (in the crashed list), "not run", "nothing fits"
  int top_measured_rank = 0;  // among the layouts that ran, 1 = fastest; 0 unless it ran
  double top_fraction = 0;    // its measured tokens/s over the best measured
  // The planner's highest-ranked choice that ran (the top choice itself when it ran).
  int ran_plan_rank = 0;  // 1 = the planner's top choice; 0 when none of its choices ran
  std::string ran_layout;
  int ran_measured_rank = 0;
  double ran_fraction = 0;
};

struct PlannerCheck {
  double headroom = 0;
  std::vector<PlannerCheckGroup> groups;
  int top_ran = 0;                 // groups whose top choice ran
  int top_in_top3 = 0;             // ... and was among the 3 fastest measured
  int top_within_5pct = 0;         // ... and measured at least 95% of the best (the target)
  double median_ran_fraction = 0;  // median over groups of ran_fraction
  double min_ran_fraction = 0;
};

// Errors: the embedded measurement tables cannot be read, or the step-time model cannot be
// prepared for the sweep's models.
Result<PlannerCheck> check_planner_on_ultrascale(double headroom = 0.1);
nlohmann::json planner_check_to_json(const PlannerCheck& check);
std::string render_planner_check(const PlannerCheck& check);

}  // namespace vramplan

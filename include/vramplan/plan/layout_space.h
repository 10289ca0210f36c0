// Collecting the planner's space of fitting layouts (PlanResult::space, planner.h): every
// Pareto-optimal point (least peak memory for its speed) exactly, plus a bounded, deterministic
// sample of the rest thinned on a grid in (peak, log tokens/s), so that the cloud's shape
// survives whatever the number of layouts that fit (10^5 and more on large clusters).
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "vramplan/plan/planner.h"

namespace vramplan {

// Collects the points of one search thread; threads' collectors merge. The result depends only
// on the set of points added, never on their order or on how they were split among threads.
class SpaceCollector {
 public:
  // `limit_bytes`: the fitting limit (peaks are ≤ it); `cap`: the sample's bound (≥ 1).
  SpaceCollector(int64_t limit_bytes, int64_t cap);

  // A layout that fits, timed (tokens/s > 0).
  void add(const PlanCandidate& c);
  void merge(const SpaceCollector& other);
  // The points: the front, the sample coarsened until it holds at most `cap` cells, and the
  // `top` candidates (best first) marked by rank (added when the sample missed them).
  LayoutSpace finish(const std::vector<PlanCandidate>& top) const;

  int64_t added() const { return added_; }

 private:
  int64_t cell_of(const PlanCandidate& c, int level) const;
  // A cell's best point: its speed and memory kept beside the key, so that the common case (a
  // point that does not beat the cell's) reads no more than the small map.
  struct Cell {
    double speed = 0;
    int64_t bytes = 0;
    size_t slot = 0;  // into the points
  };
  struct Cells {
    std::unordered_map<int64_t, Cell> cells;
    std::vector<PlanCandidate> points;
  };
  static void keep_in_cell(Cells& cells, int64_t key, const PlanCandidate& c);
  void coarsen_to(int level);

  int64_t limit_ = 1;
  int64_t cap_ = 1;
  int level_ = 0;  // each level halves the cells in one direction (layout_space.cc)
  int64_t added_ = 0;
  // Device bytes → the fastest point at that memory; speeds strictly increase with memory.
  std::map<int64_t, PlanCandidate> front_;
  Cells cells_;
};

}  // namespace vramplan

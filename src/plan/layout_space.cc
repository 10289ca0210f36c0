#include "vramplan/plan/layout_space.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>

#include "plan/planner_search.h"

namespace vramplan {
namespace {

constexpr int kMemoryCells = 128;         // finest grid: peak device memory from 0 to the limit
constexpr int kSpeedCellsPerOctave = 16;  // finest grid: tokens/s per GPU, log scale
// Each level halves the cells in one direction, memory first: level L groups 2^ceil(L/2) memory
// cells and 2^floor(L/2) speed cells. Past kMaxLevel the whole space is one cell.
constexpr int kMaxLevel = 24;
int memory_shift(int level) { return (level + 1) / 2; }
int speed_shift(int level) { return level / 2; }
// A thread coarsens its own sample when it holds this many times the cap: the merged sample
// would have more cells than the cap at that level anyway, so the final grid is the same.
constexpr int64_t kSlack = 4;

bool same_point(const PlanCandidate& a, const PlanCandidate& b) {
  return !better_candidate(a, b) && !better_candidate(b, a);
}

}  // namespace

SpaceCollector::SpaceCollector(int64_t limit_bytes, int64_t cap)
    : limit_(std::max<int64_t>(1, limit_bytes)), cap_(std::max<int64_t>(1, cap)) {}

int64_t SpaceCollector::cell_of(const PlanCandidate& c, int level) const {
  const double fraction =
      static_cast<double>(std::clamp<int64_t>(c.device_bytes, 0, limit_)) / limit_;
  const int64_t x =
      std::min<int64_t>(kMemoryCells - 1, static_cast<int64_t>(fraction * kMemoryCells));
  const int64_t y = static_cast<int64_t>(
      std::floor(std::log2(c.time.tokens_per_s_per_gpu) * kSpeedCellsPerOctave));
  // Arithmetic shifts: floor division by a power of two, also for speeds under 1 token/s (y < 0).
  return ((x >> memory_shift(level)) << 32) ^
         static_cast<int64_t>(static_cast<uint32_t>(y >> speed_shift(level)));
}

void SpaceCollector::keep_in_cell(Cells& cells, int64_t key, const PlanCandidate& c) {
  const double speed = c.time.tokens_per_s_per_gpu;
  auto [at, inserted] = cells.cells.try_emplace(key, Cell{speed, c.device_bytes, 0});
  Cell& cell = at->second;
  if (inserted) {
    cell.slot = cells.points.size();
    cells.points.push_back(c);
    return;
  }
  // better_candidate's order, on the kept numbers first.
  const bool better =
      speed > cell.speed ||
      (speed == cell.speed &&
       (c.device_bytes < cell.bytes ||
        (c.device_bytes == cell.bytes && better_candidate(c, cells.points[cell.slot]))));
  if (!better) return;
  cell.speed = speed;
  cell.bytes = c.device_bytes;
  cells.points[cell.slot] = c;
}

void SpaceCollector::coarsen_to(int level) {
  if (level <= level_) return;
  level_ = level;
  Cells coarse;
  coarse.cells.reserve(cells_.cells.size());
  for (const auto& [key, cell] : cells_.cells) {
    const PlanCandidate& c = cells_.points[cell.slot];
    keep_in_cell(coarse, cell_of(c, level_), c);
  }
  cells_ = std::move(coarse);
}

void SpaceCollector::add(const PlanCandidate& c) {
  ++added_;
  // The front: speeds strictly increase with memory. `c` is dominated by the point with the
  // most memory ≤ its own if that one is at least as fast (a tie at equal memory and speed
  // keeps the first by fields).
  const int64_t bytes = c.device_bytes;
  const double speed = c.time.tokens_per_s_per_gpu;
  auto after = front_.upper_bound(bytes);
  bool on_front = true;
  if (after != front_.begin()) {
    auto prev = std::prev(after);
    const double prev_speed = prev->second.time.tokens_per_s_per_gpu;
    if (prev_speed > speed || (prev_speed == speed && prev->first < bytes)) {
      on_front = false;
    } else if (prev->first == bytes) {
      if (prev_speed == speed && !better_candidate(c, prev->second)) on_front = false;
      if (on_front) front_.erase(prev);
    }
  }
  if (on_front) {
    auto at = front_.insert_or_assign(bytes, c).first;
    for (auto next = std::next(at);
         next != front_.end() && next->second.time.tokens_per_s_per_gpu <= speed;)
      next = front_.erase(next);
  }
  keep_in_cell(cells_, cell_of(c, level_), c);
  if (static_cast<int64_t>(cells_.cells.size()) > kSlack * cap_ && level_ < kMaxLevel)
    coarsen_to(level_ + 1);
}

void SpaceCollector::merge(const SpaceCollector& other) {
  const int64_t added = added_;
  for (const auto& [bytes, c] : other.front_) add(c);  // each also joins the sample
  coarsen_to(other.level_);
  for (const auto& [key, cell] : other.cells_.cells) {
    const PlanCandidate& c = other.cells_.points[cell.slot];
    keep_in_cell(cells_, cell_of(c, level_), c);
  }
  while (static_cast<int64_t>(cells_.cells.size()) > kSlack * cap_ && level_ < kMaxLevel)
    coarsen_to(level_ + 1);
  added_ = added + other.added_;
}

LayoutSpace SpaceCollector::finish(const std::vector<PlanCandidate>& top) const {
  SpaceCollector sample = *this;
  while (static_cast<int64_t>(sample.cells_.cells.size()) > cap_ && sample.level_ < kMaxLevel)
    sample.coarsen_to(sample.level_ + 1);
  LayoutSpace out;
  out.fitting = added_;
  out.cap = cap_;
  out.memory_cells = std::max(1, kMemoryCells >> memory_shift(sample.level_));
  out.speed_cell_octaves = std::ldexp(1.0, speed_shift(sample.level_)) / kSpeedCellsPerOctave;
  out.pareto_count = static_cast<int64_t>(front_.size());
  std::vector<LayoutSpace::Point> points;
  points.reserve(front_.size() + sample.cells_.cells.size() + top.size());
  for (const auto& [bytes, c] : front_) points.push_back({c, true, 0});
  for (const auto& [key, cell] : sample.cells_.cells)
    points.push_back({sample.cells_.points[cell.slot], false, 0});
  for (size_t i = 0; i < top.size(); ++i)
    points.push_back({top[i], false, static_cast<int>(i + 1)});
  // Fastest first; one entry per point, keeping the front's flag and the candidate's rank (and
  // its equivalents and peak stage, which only the candidates carry).
  std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
    return better_candidate(a.candidate, b.candidate);
  });
  for (const LayoutSpace::Point& p : points) {
    if (!out.points.empty() && same_point(out.points.back().candidate, p.candidate)) {
      LayoutSpace::Point& kept = out.points.back();
      kept.pareto = kept.pareto || p.pareto;
      if (p.rank > 0) {
        kept.rank = p.rank;
        kept.candidate = p.candidate;
      }
      continue;
    }
    out.points.push_back(p);
  }
  out.thinned = static_cast<int64_t>(out.points.size()) < out.fitting;
  return out;
}

}  // namespace vramplan

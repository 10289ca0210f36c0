#include "vramplan/plan/layout_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>

#include "plan/planner_search.h"
#include "plan/test_search.h"
#include "vramplan/io/plan_settings.h"
#include "vramplan/report/plan_report.h"

namespace vramplan {
namespace {

using namespace testing;

constexpr int64_t kLimit = int64_t{80} << 30;

// A made-up point: memory and speed drawn from few values, so that ties (equal memory, equal
// speed, both) are common; the layout's dp tells points apart.
PlanCandidate point(int64_t id, int64_t bytes, double speed) {
  PlanCandidate c;
  c.layout.dp = id + 1;
  c.device_bytes = c.allocated_bytes = c.reserved_bytes = bytes;
  c.time.tokens_per_s_per_gpu = speed;
  c.time.step_time_s = 1.0 / speed;
  return c;
}

std::vector<PlanCandidate> random_points(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> bytes(1, 60);
  std::uniform_int_distribution<int> speed(1, 400);
  std::vector<PlanCandidate> out;
  for (int i = 0; i < n; ++i)
    out.push_back(point(i, bytes(rng) * (kLimit / 64), 10.0 * speed(rng)));
  return out;
}

// The non-dominated (memory, speed) pairs: none other has at most its memory and at least its
// speed, one of them strictly.
std::set<std::pair<int64_t, double>> brute_front(const std::vector<PlanCandidate>& all) {
  std::set<std::pair<int64_t, double>> out;
  for (const PlanCandidate& a : all) {
    bool dominated = false;
    for (const PlanCandidate& b : all)
      if (b.device_bytes <= a.device_bytes &&
          b.time.tokens_per_s_per_gpu >= a.time.tokens_per_s_per_gpu &&
          (b.device_bytes < a.device_bytes ||
           b.time.tokens_per_s_per_gpu > a.time.tokens_per_s_per_gpu))
        dominated = true;
    if (!dominated) out.insert({a.device_bytes, a.time.tokens_per_s_per_gpu});
  }
  return out;
}

std::set<std::pair<int64_t, double>> front_of(const LayoutSpace& space) {
  std::set<std::pair<int64_t, double>> out;
  for (const LayoutSpace::Point& p : space.points) {
    if (!p.pareto) continue;
    const bool inserted =
        out.insert({p.candidate.device_bytes, p.candidate.time.tokens_per_s_per_gpu}).second;
    EXPECT_TRUE(inserted) << "a trade-off twice on the front";
  }
  return out;
}

// Names, flags and numbers of every point, in order: equal when the spaces are the same.
std::vector<std::string> fingerprint(const LayoutSpace& space) {
  std::vector<std::string> out;
  for (const LayoutSpace::Point& p : space.points)
    out.push_back(layout_name(p.candidate.layout) + (p.pareto ? " P" : "") + " r" +
                  std::to_string(p.rank) + " " + std::to_string(p.candidate.device_bytes));
  return out;
}

LayoutSpace collect(const std::vector<PlanCandidate>& all, int64_t cap, int parts, unsigned seed) {
  std::vector<PlanCandidate> order = all;
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  std::vector<SpaceCollector> threads(parts, SpaceCollector(kLimit, cap));
  for (size_t i = 0; i < order.size(); ++i) threads[(i * 7 + seed) % parts].add(order[i]);
  SpaceCollector total = threads[0];
  for (int t = 1; t < parts; ++t) total.merge(threads[t]);
  return total.finish({});
}

TEST(LayoutSpace, TheFrontIsExactlyTheBruteForceOne) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const std::vector<PlanCandidate> all = random_points(3000, seed);
    const LayoutSpace space = collect(all, 50, 3, seed);
    const std::set<std::pair<int64_t, double>> front = brute_front(all);
    EXPECT_EQ(front_of(space), front) << "seed " << seed;
    EXPECT_EQ(space.pareto_count, static_cast<int64_t>(front.size()));
    EXPECT_EQ(space.fitting, 3000);
  }
}

TEST(LayoutSpace, ThinningCapsTheSampleAndKeepsTheFront) {
  const std::vector<PlanCandidate> all = random_points(6000, 7);
  const std::set<std::pair<int64_t, double>> front = brute_front(all);
  for (int64_t cap : {1, 10, 200, 5000}) {
    const LayoutSpace space = collect(all, cap, 4, 3);
    const int64_t sampled = std::count_if(space.points.begin(), space.points.end(),
                                          [](const auto& p) { return !p.pareto; });
    EXPECT_LE(sampled, cap) << cap;
    EXPECT_EQ(front_of(space), front) << cap;
    EXPECT_TRUE(space.thinned);
    if (cap > 1) {
      EXPECT_GT(static_cast<int64_t>(space.points.size()), space.pareto_count);
    }
  }
  // A cap above the finest grid's cells: no coarsening, one point per occupied finest cell.
  const LayoutSpace fine = collect(all, 100000, 2, 1);
  EXPECT_EQ(fine.memory_cells, 128);
  EXPECT_DOUBLE_EQ(fine.speed_cell_octaves, 1.0 / 16);
}

TEST(LayoutSpace, SameResultWhateverTheOrderAndThreadSplit) {
  const std::vector<PlanCandidate> all = random_points(5000, 11);
  const std::vector<std::string> one = fingerprint(collect(all, 100, 1, 1));
  EXPECT_EQ(one, fingerprint(collect(all, 100, 2, 5)));
  EXPECT_EQ(one, fingerprint(collect(all, 100, 7, 9)));
  // Fastest first, and each point once.
  const LayoutSpace space = collect(all, 100, 3, 2);
  for (size_t i = 1; i < space.points.size(); ++i)
    EXPECT_TRUE(better_candidate(space.points[i - 1].candidate, space.points[i].candidate));
}

TEST(LayoutSpace, TopCandidatesAreMarkedAndAddedWhenThinnedOut) {
  const std::vector<PlanCandidate> all = random_points(2000, 5);
  SpaceCollector c(kLimit, 1);
  for (const PlanCandidate& p : all) c.add(p);
  std::vector<PlanCandidate> sorted = all;
  std::sort(sorted.begin(), sorted.end(), better_candidate);
  const std::vector<PlanCandidate> top(sorted.begin(), sorted.begin() + 5);
  const LayoutSpace space = c.finish(top);
  for (int rank = 1; rank <= 5; ++rank) {
    auto it = std::find_if(space.points.begin(), space.points.end(),
                           [&](const auto& p) { return p.rank == rank; });
    ASSERT_NE(it, space.points.end()) << rank;
    EXPECT_EQ(layout_name(it->candidate.layout), layout_name(top[rank - 1].layout));
  }
  EXPECT_TRUE(space.points.front().pareto);  // the fastest is on the front
  EXPECT_EQ(space.points.front().rank, 1);
}

// On a real search: the front equals the brute-force front of every fitting trade-off (the top K
// with K above their number lists them all), and the threads do not change the points.
TEST(LayoutSpace, PlannerSearchCollectsTheWholeFront) {
  PlanRequest r = request_for(tiny_dense(), 2, 64, 4);
  r.top_k = 1000;
  r.space_points = 20;
  RecordingTimer timer;
  SearchResult found = search(r, timer, kEverythingFits);
  ASSERT_TRUE(found.space);
  EXPECT_EQ(found.space->added(), 159);
  const LayoutSpace space = found.space->finish(found.top);
  EXPECT_EQ(front_of(space), brute_front(found.top));
  EXPECT_EQ(space.fitting, 159);
  r.threads = 3;
  SearchResult threaded = search(r, timer, kEverythingFits);
  EXPECT_EQ(fingerprint(threaded.space->finish(threaded.top)), fingerprint(space));
  r.space_points = 0;
  EXPECT_FALSE(search(r, timer, kEverythingFits).space);
}

TEST(LayoutSpace, PlanJsonCarriesTheSpace) {
  const FileReader no_files;
  nlohmann::json settings = {{"model", "Llama-3.1-8B"},
                             {"gpus", 8},
                             {"seq_len", 4096},
                             {"global_batch", 64},
                             {"top", 3},
                             {"threads", 1},
                             {"space", 50}};
  Result<PlanResult> p = plan_from_settings(settings, no_files);
  ASSERT_TRUE(p.ok()) << p.error().message();
  const nlohmann::json j = plan_to_json(*p);
  const nlohmann::json& space = j.at("space");
  EXPECT_EQ(space.at("fitting"), p->stats.fitting - p->stats.untimed);
  EXPECT_EQ(space.at("shown"), space.at("points").size());
  EXPECT_GT(space.at("pareto").size(), 0u);
  int ranked = 0;
  for (const nlohmann::json& point : space.at("points")) {
    ranked += point.at("rank").get<int>() > 0;
    EXPECT_LE(point.at("device_bytes").get<int64_t>(), j.at("limit_bytes").get<int64_t>());
    EXPECT_TRUE(point.at("scenario").contains("tp"));
  }
  EXPECT_EQ(ranked, 3);
  // The base scenario with a point's layout keys is that candidate's own scenario.
  const nlohmann::json& first = space.at("points").at(0);
  nlohmann::json scenario = space.at("base_scenario");
  scenario.update(first.at("scenario"));
  EXPECT_EQ(first.at("rank"), 1);
  EXPECT_EQ(scenario, j.at("candidates").at(0).at("scenario"));
  // Pareto indices by memory ascending, speeds ascending with it.
  const nlohmann::json& front = space.at("pareto");
  for (size_t i = 1; i < front.size(); ++i) {
    const nlohmann::json& a = space.at("points").at(front[i - 1].get<size_t>());
    const nlohmann::json& b = space.at("points").at(front[i].get<size_t>());
    EXPECT_LT(a.at("device_bytes"), b.at("device_bytes"));
    EXPECT_LT(a.at("tokens_per_s_per_gpu"), b.at("tokens_per_s_per_gpu"));
  }
  settings.erase("space");
  EXPECT_TRUE(plan_to_json(*plan_from_settings(settings, no_files)).at("space").is_null());
  settings["space"] = -1;
  Result<PlanResult> bad = plan_from_settings(settings, no_files);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "space");
}

}  // namespace
}  // namespace vramplan

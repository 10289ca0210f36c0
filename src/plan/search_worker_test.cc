// The search worker's shortcuts change no result: a timer that skips layouts certainly slower
// than what they could displace (LayoutTimer::time_unless_slower) and the misses decided by their
// first rank group over the limit give the same top K, family bests, misses and counts as timing
// every fitting layout.
#include "plan/search_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>

#include "plan/test_search.h"
#include "vramplan/perf/step_time.h"

namespace vramplan {
namespace {

using namespace testing;

const Gpu& h100() { return *builtin_gpus().find("h100-80gb"); }

// The step-time model through a StepTimeCache per thread, skipping or not.
class ModelTimer final : public LayoutTimer {
 public:
  ModelTimer(
      const StepTimeModel& model, bool skip,
      std::shared_ptr<std::atomic<int64_t>> skipped = std::make_shared<std::atomic<int64_t>>())
      : model_(model), skip_(skip), skipped_(std::move(skipped)) {}
  StepTime time(const Scenario& s) const override { return model_.evaluate(s, cache_); }
  std::optional<StepTime> time_unless_slower(const Scenario& s, double floor) const override {
    if (!skip_) return time(s);
    std::optional<StepTime> t = model_.evaluate_unless_slower(s, cache_, floor);
    if (!t) ++*skipped_;
    return t;
  }
  // As the planner's timer: the search skips the other shardings of a layout skipped.
  bool skips_regardless_of_sharding() const override { return skip_; }
  std::unique_ptr<LayoutTimer> for_thread() const override {
    return std::make_unique<ModelTimer>(model_, skip_, skipped_);
  }
  int64_t skipped() const { return *skipped_; }

 private:
  const StepTimeModel& model_;
  const bool skip_;
  mutable StepTimeCache cache_;
  std::shared_ptr<std::atomic<int64_t>> skipped_;  // shared by the threads' copies
};

void expect_same(const std::optional<PlanCandidate>& a, const std::optional<PlanCandidate>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(key_of(a->layout), key_of(b->layout));
  EXPECT_EQ(a->device_bytes, b->device_bytes);
  EXPECT_EQ(a->time.tokens_per_s_per_gpu, b->time.tokens_per_s_per_gpu);
  ASSERT_EQ(a->equivalents.size(), b->equivalents.size());
  for (size_t i = 0; i < a->equivalents.size(); ++i)
    EXPECT_EQ(key_of(a->equivalents[i]), key_of(b->equivalents[i]));
}

// Adds the layouts whose peaks were computed that missed the limit (one thread) to `missed`,
// those the skipping timer skipped to `skipped`.
void expect_same_search(const PlanRequest& r, int64_t limit, int64_t& missed, int64_t& skipped) {
  Result<StepTimeModel> model = StepTimeModel::prepare(r.base, h100(), r.cluster);
  EXPECT_TRUE(model.ok()) << model.error().message();
  if (!model) return;
  for (int threads : {1, 3}) {
    PlanRequest req = r;
    req.threads = threads;
    const ModelTimer skipping(*model, true), timing(*model, false);
    const SearchResult a = search(req, skipping, limit), b = search(req, timing, limit);
    EXPECT_EQ(a.top.size(), b.top.size());
    if (a.top.size() != b.top.size()) return;
    for (size_t i = 0; i < a.top.size(); ++i) expect_same(a.top[i], b.top[i]);
    for (int f = 0; f < kFamilies; ++f) {
      expect_same(a.family_best[f], b.family_best[f]);
      expect_same(a.family_miss[f], b.family_miss[f]);
    }
    expect_same(a.closest_miss, b.closest_miss);
    EXPECT_EQ(a.stats.evaluated, b.stats.evaluated);
    EXPECT_EQ(a.stats.fitting, b.stats.fitting);
    EXPECT_EQ(a.stats.untimed, b.stats.untimed);
    skipped += skipping.skipped();
    EXPECT_GT(a.stats.fitting, 0);
    if (threads == 1) {  // the branch bound depends on what a thread has seen
      EXPECT_EQ(a.stats.memory_computed, b.stats.memory_computed);
      EXPECT_EQ(a.stats.pruned, b.stats.pruned);
      missed += a.stats.memory_computed - a.stats.fitting;
    }
  }
}

TEST(SearchWorker, SkippingSlowLayoutsChangesNoResult) {
  PlanRequest r = request_for(tiny_moe(), 16, 2048, 32);
  r.top_k = 3;
  int64_t missed = 0, skipped = 0;
  expect_same_search(r, kEverythingFits, missed, skipped);
  EXPECT_EQ(missed, 0);
  // Limits that split the layouts: misses decided one by one.
  for (int64_t mib : {1200, 1400, 1700, 2200}) expect_same_search(r, mib << 20, missed, skipped);
  r.base.model = tiny_dense();
  for (int64_t mib : {1200, 1400, 1700, 2200}) expect_same_search(r, mib << 20, missed, skipped);
  EXPECT_GT(missed, 1000);
  EXPECT_GT(skipped, 1000);
}

}  // namespace
}  // namespace vramplan

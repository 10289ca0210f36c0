// The search's pruning against brute force: no layout that fits is ever dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <vector>

#include "plan/test_brute_force.h"
#include "plan/test_search.h"
#include "training/scenario_checks.h"
#include "vramplan/training/estimate.h"
#include "vramplan/training/frameworks.h"

namespace vramplan {
namespace {

using namespace testing;

// Brute force over the searched layouts: estimate() and the timer for each.
std::vector<PlanCandidate> brute_force_all(const PlanRequest& r) {
  RecordingTimer all;
  search(r, all, kEverythingFits);
  Superset sup;
  if (!r.space.micro_batch.empty()) {
    sup.micro_batches = r.space.micro_batch;
  } else {
    const int64_t global = r.base.training.global_batch;
    for (int64_t mb = 1; mb <= global; ++mb)
      if (global % mb == 0 || mb == 3) sup.micro_batches.push_back(mb);
  }
  if (r.base.model.is_moe()) {
    sup.eps = {1, 2, 4, 8};
    sup.etps = {1, 2, 4, 8};
  }
  int64_t rejected = 0;
  const std::map<std::string, PlanLayout> layouts = expected_layouts(r, sup, &rejected);
  EXPECT_EQ(layouts.size(), all.seen().size());
  std::vector<PlanCandidate> out;
  RecordingTimer timer;
  Scenario s = r.base;
  for (const auto& [key, layout] : layouts) {
    apply_layout(layout, s);
    Result<Estimate> est = estimate(s, {.explain = false});
    if (!est.ok()) continue;
    PlanCandidate c;
    c.layout = layout;
    c.allocated_bytes = est->peak.allocated_bytes;
    c.reserved_bytes = est->peak.reserved_bytes;
    c.device_bytes = est->peak.device_bytes;
    c.time = timer.time(s);
    out.push_back(c);
  }
  return out;
}

struct BruteForce {
  std::vector<PlanCandidate> fitting;   // sorted best first
  std::vector<PlanCandidate> distinct;  // one per trade-off, best first, with its equivalents
  std::vector<PlanCandidate> missing;   // sorted closest first
};

BruteForce split_at(const std::vector<PlanCandidate>& all, int64_t limit) {
  BruteForce out;
  for (const PlanCandidate& c : all)
    (c.device_bytes <= limit ? out.fitting : out.missing).push_back(c);
  std::sort(out.fitting.begin(), out.fitting.end(), better_candidate);
  std::sort(out.missing.begin(), out.missing.end(), closer_miss);
  // Equal time and memory sort next to each other, the first by layout fields first.
  for (const PlanCandidate& c : out.fitting) {
    if (!out.distinct.empty() && same_trade_off(out.distinct.back(), c))
      out.distinct.back().equivalents.push_back(c.layout);
    else
      out.distinct.push_back(c);
  }
  return out;
}

void expect_same_candidate(const std::optional<PlanCandidate>& got,
                           const std::optional<PlanCandidate>& want, const std::string& what) {
  ASSERT_EQ(got.has_value(), want.has_value()) << what;
  if (!got) return;
  EXPECT_EQ(key_of(got->layout), key_of(want->layout)) << what;
  EXPECT_EQ(got->device_bytes, want->device_bytes) << what;
}

// The search against brute force at a given limit: the fitting set, the top K in order, each
// family's best and (when none fits) closest miss, and the overall closest miss.
// Returns how many layouts the search ruled out by its bound (single thread).
int64_t expect_matches_brute_force(const PlanRequest& r, const std::vector<PlanCandidate>& all,
                                   int64_t limit) {
  const BruteForce want = split_at(all, limit);
  int64_t pruned = 0;
  for (int threads : {1, 3}) {
    PlanRequest req = r;
    req.threads = threads;
    RecordingTimer timer;
    const SearchResult found = search(req, timer, limit);
    std::set<std::string> want_fit;
    for (const PlanCandidate& c : want.fitting) want_fit.insert(key_of(c.layout));
    EXPECT_EQ(timer.seen(), want_fit) << "fitting layouts differ, threads " << threads;
    EXPECT_EQ(found.stats.fitting, static_cast<int64_t>(want.fitting.size()));
    EXPECT_EQ(found.stats.evaluated, static_cast<int64_t>(all.size()));
    if (threads == 1) pruned = found.stats.pruned;
    const size_t k = std::min<size_t>(r.top_k, want.distinct.size());
    EXPECT_EQ(found.top.size(), k);
    for (size_t i = 0; i < std::min(k, found.top.size()); ++i) {
      const std::string what = "top " + std::to_string(i);
      expect_same_candidate(found.top[i], want.distinct[i], what);
      const size_t same =
          std::min(found.top[i].equivalents.size(), want.distinct[i].equivalents.size());
      EXPECT_EQ(found.top[i].equivalents.size(), want.distinct[i].equivalents.size()) << what;
      for (size_t e = 0; e < same; ++e)
        EXPECT_EQ(key_of(found.top[i].equivalents[e]), key_of(want.distinct[i].equivalents[e]))
            << what;
    }
    for (int f = 0; f < kFamilies; ++f) {
      const Family family = static_cast<Family>(f);
      if (family == Family::kExpert && !r.base.model.is_moe()) continue;
      std::optional<PlanCandidate> best, miss;
      for (const PlanCandidate& c : want.fitting)
        if (!best && in_family(c.layout, family)) best = c;
      if (!best)
        for (const PlanCandidate& c : want.missing)
          if (!miss && in_family(c.layout, family)) miss = c;
      expect_same_candidate(found.family_best[f], best, family_name(family));
      expect_same_candidate(found.family_miss[f], miss, family_name(family));
    }
    std::optional<PlanCandidate> closest;
    if (want.fitting.empty() && !want.missing.empty()) closest = want.missing.front();
    expect_same_candidate(found.closest_miss, closest, "closest miss");
  }
  return pruned;
}

// A limit between the smallest and largest peak, so that some layouts fit and some do not.
int64_t quantile_limit(const std::vector<PlanCandidate>& all, double q) {
  std::vector<int64_t> peaks;
  for (const PlanCandidate& c : all) peaks.push_back(c.device_bytes);
  std::sort(peaks.begin(), peaks.end());
  return peaks[static_cast<size_t>(q * (peaks.size() - 1))];
}

// Returns the layouts ruled out by the bound over all the limits tried.
int64_t expect_matches_at_quantiles(const PlanRequest& r, std::initializer_list<double> quantiles) {
  const std::vector<PlanCandidate> all = brute_force_all(r);
  EXPECT_GT(all.size(), 100u);
  int64_t pruned = 0;
  for (double q : quantiles) pruned += expect_matches_brute_force(r, all, quantile_limit(all, q));
  // Nothing fits: the closest miss and each family's.
  return pruned + expect_matches_brute_force(r, all, quantile_limit(all, 0.0) - 1);
}

TEST(PlannerSearch, PruningNeverDropsALayoutThatFits) {
  PlanRequest r = request_for(tiny_dense(), 8, 4096, 16);
  r.base.overheads = Overheads{0, 0, 0.1, 0};  // tiny model: let the tensors decide
  r.top_k = 7;
  expect_matches_at_quantiles(r, {0.05, 0.3, 0.7});
}

// Wide layers and a large vocabulary: at a short sequence, model states decide.
ModelConfig wide_tiny_dense() {
  ModelConfig m = tiny_dense();
  m.hidden = 512;
  m.num_heads = 8;
  m.num_kv_heads = 4;
  m.head_dim = 64;
  m.ffn = 2048;
  m.vocab = 32000;
  return m;
}

TEST(PlannerSearch, PruningNeverDropsALayoutThatFitsWhenStatesDominate) {
  // Model states decide, so the bound rules out whole branches.
  PlanRequest r = request_for(wide_tiny_dense(), 8, 256, 16);
  const int64_t pruned = expect_matches_at_quantiles(r, {0.02, 0.2, 0.5});
  EXPECT_GT(pruned, 0);
}

TEST(PlannerSearch, PruningNeverDropsALayoutThatFitsUnderTorchtitansConventions) {
  // Lazy gradients, and pipeline stages kept unsharded under FSDP: phases drop parts of the
  // model states, so the bound must be the smallest states any phase keeps. A 16-token sequence
  // keeps the activations below what a phase drops, where a bound on all the states fails.
  PlanRequest r = request_for(wide_tiny_dense(), 8, 16, 16);
  apply_framework(Framework::kTorchtitan, r.base);
  ASSERT_TRUE(r.base.conventions.pipeline_fsdp_unsharded);
  const std::vector<PlanCandidate> all = brute_force_all(r);
  int64_t pruned = 0;
  for (double q : {0.02, 0.2, 0.5})
    pruned += expect_matches_brute_force(r, all, quantile_limit(all, q));
  EXPECT_GT(pruned, 0);
  // Limits exactly at the peaks of FSDP layouts with virtual stages whose microbatches fit one
  // round: they fit, though their states with every chunk's unsharded gradients would not.
  std::set<int64_t> limits;
  for (const PlanCandidate& c : all) {
    const PlanLayout& l = c.layout;
    const int64_t microbatches = 16 / (l.micro_batch * l.dp);
    if (l.vpp > 1 && l.sharding.fsdp == FsdpMode::kFullShard && microbatches <= l.pp &&
        limits.size() < 4)
      limits.insert(c.device_bytes);
  }
  EXPECT_FALSE(limits.empty());
  for (int64_t limit : limits) expect_matches_brute_force(r, all, limit);
}

TEST(PlannerSearch, PruningNeverDropsALayoutThatFitsWithTorchtitansSplit) {
  // 9 layers over 4 stages: torchtitan's split (2, 3, 3, 1) is searched beside the others.
  ModelConfig m = wide_tiny_dense();
  m.num_layers = 9;
  m.moe_layers.assign(9, false);
  m.layer_attention.assign(9, LayerAttention::kFull);
  PlanRequest r = request_for(m, 4, 16, 16);
  apply_framework(Framework::kTorchtitan, r.base);
  r.space.split.assign(std::begin(kAllSplits), std::end(kAllSplits) - 1);
  const std::vector<PlanCandidate> all = brute_force_all(r);
  EXPECT_TRUE(std::any_of(all.begin(), all.end(), [](const PlanCandidate& c) {
    return c.layout.split.kind == SplitKind::kBalancedEmbeddingAndLoss;
  }));
  int64_t pruned = 0;
  for (double q : {0.02, 0.2, 0.5})
    pruned += expect_matches_brute_force(r, all, quantile_limit(all, q));
  EXPECT_GT(pruned, 0);
}

TEST(PlannerSearch, PruningNeverDropsALayoutThatFitsForMoe) {
  PlanRequest r = request_for(testing::tiny_moe(), 4, 2048, 8);
  r.base.overheads = Overheads{0, 0, 0.1, 0};
  r.space.micro_batch = {1, 2};
  expect_matches_at_quantiles(r, {0.1, 0.5});
}

TEST(PlannerSearch, PrunesBranchesWhoseModelStatesAloneDoNotFit) {
  // Llama 8B shape on 8 GPUs with a 24 GiB limit: unsharded states (~18 B/param) rule out whole
  // branches before any activation is computed.
  PlanRequest r = request_for(testing::llama8b_shape(), 8, 4096, 64);
  r.threads = 2;
  RecordingTimer timer;
  const SearchResult found = search(r, timer, int64_t{24} << 30);
  EXPECT_GT(found.stats.pruned, 0);
  EXPECT_EQ(found.stats.evaluated, found.stats.memory_computed + found.stats.pruned);
  EXPECT_FALSE(found.top.empty());
}

TEST(PlannerSearch, LayoutsOutsideTheFastPathAreDecidedByEstimate) {
  // 64 stages of 40 layers, stage r holding r % 40 MoE layers: 40 distinct stages, more than the
  // fast path's groups, so each layout goes to estimate().
  ModelConfig m = testing::tiny_moe();
  m.num_layers = 64 * 40;
  m.moe_layers.clear();
  for (int i = 0; i < 64 * 40; ++i) m.moe_layers.push_back(i % 40 < (i / 40) % 40);
  m.layer_attention.assign(64 * 40, LayerAttention::kFull);
  PlanRequest r = request_for(m, 64, 64, 2);
  r.space.pp = {64};
  r.space.vpp = {1};
  r.space.split = {SplitKind::kEven};
  RecordingTimer timer;
  const SearchResult found = search(r, timer, kEverythingFits);
  // sp off (tp = 1), micro-batch {1, 2}, 3 recompute modes, 1F1B and GPipe; one data rank.
  EXPECT_EQ(found.stats.evaluated, 12);
  EXPECT_EQ(found.stats.memory_fallback, 12);
  ASSERT_FALSE(found.top.empty());
  Scenario s = r.base;
  for (const PlanCandidate& c : found.top) {
    apply_layout(c.layout, s);
    EXPECT_EQ(c.device_bytes, estimate(s)->peak.device_bytes) << layout_name(c.layout);
  }
}

}  // namespace
}  // namespace vramplan

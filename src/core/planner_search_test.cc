#include "core/planner_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <string>

#include "core/pipeline.h"
#include "core/test_models.h"
#include "core/validate.h"
#include "vramplan/estimate.h"
#include "vramplan/frameworks.h"

namespace vramplan {
namespace {

// h 64, 4 layers, 4 heads, 2 KV heads, f 128, V 1000: small enough to search by brute force.
ModelConfig tiny_dense() {
  ModelConfig m = testing::tiny_moe();
  m.name = "tiny-dense";
  m.moe = MoeConfig{};
  m.moe_layers.assign(4, false);
  return m;
}

PlanLayout layout_from(const Scenario& s) {
  const Parallelism& p = s.parallel;
  PlanLayout l;
  l.tp = p.tp;
  l.sequence_parallel = p.sequence_parallel;
  l.pp = p.pp;
  l.vpp = p.vpp;
  l.schedule = p.schedule;
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0)
    l.split = {SplitKind::kLighterEnds, p.first_stage_layers, p.last_stage_layers};
  else if (p.compute_balanced_split)
    l.split.kind = SplitKind::kCompute;
  else if (p.balanced_split && p.embedding_as_stage && p.loss_as_stage)
    l.split.kind = SplitKind::kBalancedEmbeddingAndLoss;
  else if (p.embedding_as_stage && p.loss_as_stage)
    l.split.kind = SplitKind::kEmbeddingAndLoss;
  else if (p.embedding_as_stage)
    l.split.kind = SplitKind::kEmbedding;
  else if (p.loss_as_stage)
    l.split.kind = SplitKind::kLoss;
  else if (p.balanced_split)
    l.split.kind = SplitKind::kBalanced;
  l.cp = p.cp;
  l.ep = p.ep;
  l.etp = p.etp;
  l.dp = p.dp;
  l.micro_batch = s.training.micro_batch;
  l.recompute = s.training.recompute;
  l.sharding = {p.zero, p.fsdp, p.fsdp_shard_group, p.distributed_optimizer};
  return l;
}

// Every field, so that two layouts share a key only when they are the same layout.
std::string key_of(const PlanLayout& l) {
  return layout_name(l) + " #" + std::to_string(static_cast<int>(l.split.kind)) + "/" +
         std::to_string(l.split.first_stage_layers) + "/" +
         std::to_string(l.split.last_stage_layers) + "/" + std::to_string(l.vpp) + "/" +
         std::to_string(static_cast<int>(l.schedule)) + "/" + std::to_string(l.ep) + "/" +
         std::to_string(l.etp);
}

// A made-up speed that orders layouts by many of their fields; it only has to be deterministic.
// It records every layout it is asked to time.
class RecordingTimer final : public LayoutTimer {
 public:
  StepTime time(const Scenario& s) const override {
    const Parallelism& p = s.parallel;
    const double t = 1.0 + 0.07 * p.tp + 0.11 * p.pp + 0.05 * p.vpp + 0.13 * p.cp + 0.03 * p.ep +
                     0.02 * p.etp + 0.17 * p.zero + 0.01 * s.training.micro_batch +
                     0.19 * static_cast<int>(s.training.recompute) +
                     (p.sequence_parallel ? 0.015 : 0) + 0.023 * static_cast<int>(p.schedule) +
                     0.029 * static_cast<int>(p.fsdp) + (p.distributed_optimizer ? 0.031 : 0) +
                     0.037 * p.first_stage_layers + (p.balanced_split ? 0.041 : 0) +
                     (p.embedding_as_stage ? 0.043 : 0) + (p.loss_as_stage ? 0.047 : 0);
    StepTime st;
    st.step_time_s = t;
    st.tokens_per_s_per_gpu = 1000.0 / t;
    st.mfu = 0.4 / t;
    std::lock_guard<std::mutex> lock(mutex_);
    seen_.insert(key_of(layout_from(s)));
    return st;
  }
  std::set<std::string> seen() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::set<std::string> seen_;
};

PlanRequest request_for(const ModelConfig& model, int64_t gpus, int64_t seq_len,
                        int64_t global_batch) {
  PlanRequest r;
  r.base.model = model;
  r.base.training.seq_len = seq_len;
  r.base.training.global_batch = global_batch;
  r.gpus = gpus;
  r.cluster = Cluster{8, 450, 50};
  r.threads = 1;
  r.top_k = 5;
  return r;
}

constexpr int64_t kEverythingFits = int64_t{1} << 62;

SearchResult search(const PlanRequest& r, const LayoutTimer& timer, int64_t limit) {
  Result<FastMemoryModel> memory = FastMemoryModel::prepare(r.base);
  EXPECT_TRUE(memory.ok());
  return search_layouts(r, *memory, timer, limit);
}

TEST(PlannerSearch, CountsEveryLayoutOfAHandCountedCase) {
  // 2 GPUs, tiny dense model (4 layers), seq 64, global batch 4. (tp, pp, cp, dp):
  //   (2,1,1,1): sp on/off = 2 · mb {1,2,4} · recompute 3                       = 18
  //   (1,2,1,1): vpp 1 (1f1b, gpipe) + vpp 2 (interleaved, gpipe) = 4 · 3 · 3     = 36
  //              (embedding+loss and balanced splits give the even split's [2,2]: not repeated)
  //   (1,1,2,1): 3 mb · 3 recompute · 7 shardings (ZeRO 0-3, distopt, FSDP full, grad-op) = 63
  //   (1,1,1,2): mb {1,2} · 3 · 7                                                 = 42
  // One data rank (the first two rows) has nothing to shard: only ZeRO 0.       total 159
  const PlanRequest r = request_for(tiny_dense(), 2, 64, 4);
  RecordingTimer timer;
  const SearchResult found = search(r, timer, kEverythingFits);
  EXPECT_EQ(found.stats.evaluated, 159);
  EXPECT_EQ(found.stats.memory_computed, 159);
  EXPECT_EQ(found.stats.fitting, 159);
  EXPECT_EQ(timer.seen().size(), 159u);

  PlanRequest fixed = r;  // zero 0 only, micro-batch 1, no recompute: 2 + 4 + 1 + 1
  fixed.space.zero = {0};
  fixed.space.fsdp = {FsdpMode::kNone};
  fixed.space.distributed_optimizer = {false};
  fixed.space.micro_batch = {1};
  fixed.space.recompute = {Recompute::kNone};
  EXPECT_EQ(search(fixed, timer, kEverythingFits).stats.evaluated, 8);
}

TEST(PlannerSearch, LighterEndsSplitFollowsLlama3) {
  // Llama 3 405B: 126 layers over 16 stages, one layer fewer on the first and last: 7 + 14·8 + 7.
  const std::optional<PipelineSplit> split = split_of(SplitKind::kLighterEnds, 126, 16, 1);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->first_stage_layers, 7);
  EXPECT_EQ(split->last_stage_layers, 7);
  EXPECT_FALSE(split_of(SplitKind::kLighterEnds, 126, 16, 2));  // needs vpp = 1
  EXPECT_FALSE(split_of(SplitKind::kEven, 126, 16, 1));
  EXPECT_TRUE(split_of(SplitKind::kEmbeddingAndLoss, 126, 16, 1));  // 128 = 16 · 8
}

// --- Brute force: the planner's conventions (see is_canonical), written out independently, and
// validate_scenario decide which layouts of a superset should be searched.

// Valid and invalid shardings (zero with FSDP, a group without HYBRID_SHARD, ...).
std::vector<ShardingChoice> all_shardings() {
  return {{0, FsdpMode::kNone, 0, false},        {1, FsdpMode::kNone, 0, false},
          {2, FsdpMode::kNone, 0, false},        {3, FsdpMode::kNone, 0, false},
          {0, FsdpMode::kNone, 0, true},         {1, FsdpMode::kNone, 0, true},
          {0, FsdpMode::kFullShard, 0, false},   {0, FsdpMode::kShardGradOp, 0, false},
          {1, FsdpMode::kFullShard, 0, false},   {0, FsdpMode::kFullShard, 0, true},
          {0, FsdpMode::kHybridShard, 0, false}, {0, FsdpMode::kHybridShard, 2, false},
          {0, FsdpMode::kHybridShard, 4, false}, {0, FsdpMode::kNoShard, 0, false},
          {0, FsdpMode::kNone, 2, false}};
}

// Every split kind, in the order that names a split whose sizes two kinds share.
constexpr SplitKind kAllSplits[] = {SplitKind::kEven,
                                    SplitKind::kEmbeddingAndLoss,
                                    SplitKind::kLoss,
                                    SplitKind::kEmbedding,
                                    SplitKind::kLighterEnds,
                                    SplitKind::kBalanced,
                                    SplitKind::kBalancedEmbeddingAndLoss,
                                    SplitKind::kCompute};

// Without a list the planner tries the generic kinds; the framework ones only when listed.
bool searched_kind(const PlanRequest& r, SplitKind kind) {
  if (r.space.split.empty())
    return kind != SplitKind::kBalancedEmbeddingAndLoss && kind != SplitKind::kCompute;
  return std::find(r.space.split.begin(), r.space.split.end(), kind) != r.space.split.end();
}

// The planner's conventions for tp, sp and the pipeline.
bool conventional_outer(const PlanRequest& r, const PlanLayout& l) {
  const int64_t layers = r.base.model.num_layers;
  if (l.tp > r.cluster.gpus_per_node) return false;
  if (l.tp == 1 && l.sequence_parallel) return false;
  if (l.pp == 1 &&
      (l.vpp != 1 || l.schedule != Schedule::k1F1B || l.split.kind != SplitKind::kEven))
    return false;
  if (l.pp > 1) {
    if (!searched_kind(r, l.split.kind)) return false;
    // The split is one of split_of's, and no earlier allowed kind gives the same chunk sizes.
    const std::optional<PipelineSplit> want = split_of(l.split.kind, layers, l.pp, l.vpp);
    if (!want || want->first_stage_layers != l.split.first_stage_layers ||
        want->last_stage_layers != l.split.last_stage_layers)
      return false;
    auto sizes = [&](const PipelineSplit& split) {
      Scenario s = r.base;
      PlanLayout probe = l;
      probe.split = split;
      apply_layout(probe, s);
      if (validate_pipeline(r.base.model, s.parallel)) return std::vector<size_t>{};
      // A rank's chunks are its runs of consecutive layers; chunk k is run k / pp of rank k % pp.
      std::vector<std::vector<size_t>> runs;
      for (const RankLayout& rank : layout_pipeline(r.base.model, s.parallel, 1)) {
        runs.emplace_back();
        for (size_t i = 0; i < rank.layers.size(); ++i) {
          if (i == 0 || rank.layers[i] != rank.layers[i - 1] + 1) runs.back().push_back(0);
          ++runs.back().back();
        }
        // Every chunk must hold a layer.
        if (runs.back().size() != static_cast<size_t>(l.vpp)) return std::vector<size_t>{};
      }
      std::vector<size_t> out;
      for (int64_t k = 0; k < l.pp * l.vpp; ++k) out.push_back(runs[k % l.pp][k / l.pp]);
      return out;
    };
    const std::vector<size_t> mine = sizes(l.split);
    if (mine.empty()) return false;
    for (SplitKind earlier : kAllSplits) {
      if (earlier == l.split.kind) break;
      if (!searched_kind(r, earlier)) continue;
      const std::optional<PipelineSplit> other = split_of(earlier, layers, l.pp, l.vpp);
      if (other && sizes(*other) == mine) return false;
    }
  }
  return true;
}

// The planner's conventions for sharding.
bool conventional_sharding(const PlanRequest& r, const PlanLayout& l) {
  const ShardingChoice& sh = l.sharding;
  const int64_t data_ranks = l.dp * l.cp;
  const int64_t node_group = std::gcd(data_ranks, std::max<int64_t>(1, 8 / l.tp));
  const bool listed =
      (sh.fsdp == FsdpMode::kNone && sh.fsdp_shard_group == 0 && !sh.distributed_optimizer) ||
      (sh.fsdp == FsdpMode::kNone && sh.zero == 0 && sh.fsdp_shard_group == 0) ||
      ((sh.fsdp == FsdpMode::kFullShard || sh.fsdp == FsdpMode::kShardGradOp) && sh.zero == 0 &&
       sh.fsdp_shard_group == 0 && !sh.distributed_optimizer) ||
      (sh.fsdp == FsdpMode::kHybridShard && sh.zero == 0 && !sh.distributed_optimizer &&
       sh.fsdp_shard_group == node_group && node_group > 1 && node_group < data_ranks);
  if (!listed) return false;
  const int64_t expert_group =
      r.base.model.is_moe() ? std::max<int64_t>(1, l.tp * l.cp * l.dp / (l.ep * l.etp)) : 1;
  if (data_ranks == 1 && expert_group == 1 &&
      (sh.zero != 0 || sh.fsdp != FsdpMode::kNone || sh.distributed_optimizer))
    return false;
  return true;
}

struct Superset {
  std::vector<int64_t> eps = {1}, etps = {1};
  std::vector<int64_t> micro_batches;
};

// Calls f for every layout of the superset whose degrees multiply to the GPU count.
template <class F>
void for_each_superset_layout(const PlanRequest& r, const Superset& sup, F f) {
  const int64_t n = r.gpus;
  const std::vector<ShardingChoice> shardings = all_shardings();
  for (int64_t tp = 1; tp <= n; ++tp)
    for (int64_t pp = 1; pp <= n; ++pp)
      for (int64_t cp = 1; cp <= n; ++cp) {
        if (n % (tp * pp * cp) != 0) continue;
        const int64_t dp = n / (tp * pp * cp);
        for (int64_t vpp = 1; vpp <= 4; ++vpp)
          for (bool sp : {false, true})
            for (Schedule sched : {Schedule::k1F1B, Schedule::kInterleaved, Schedule::kGPipe})
              for (SplitKind kind : kAllSplits) {
                PipelineSplit split{kind, 0, 0};
                if (kind == SplitKind::kLighterEnds) {
                  const auto s = split_of(kind, r.base.model.num_layers, pp, vpp);
                  if (!s) continue;
                  split = *s;
                }
                PlanLayout outer{tp, sp, pp, vpp, sched, split, cp, 1, 1, dp, 1, {}, {}};
                if (!conventional_outer(r, outer)) continue;
                for (int64_t ep : sup.eps)
                  for (int64_t etp : sup.etps)
                    for (int64_t mb : sup.micro_batches)
                      for (Recompute rc :
                           {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
                        for (const ShardingChoice& sh : shardings) {
                          PlanLayout l{tp, sp, pp, vpp, sched, split, cp, ep, etp, dp, mb, rc, sh};
                          if (l.etp <= r.cluster.gpus_per_node && conventional_sharding(r, l)) f(l);
                        }
              }
      }
}

// The layouts that should be searched: conventional and valid by validate_scenario.
std::map<std::string, PlanLayout> expected_layouts(const PlanRequest& r, const Superset& sup,
                                                   int64_t* rejected_by_validation) {
  std::map<std::string, PlanLayout> out;
  Scenario s = r.base;
  for_each_superset_layout(r, sup, [&](const PlanLayout& l) {
    apply_layout(l, s);
    if (validate_scenario(s)) {
      ++*rejected_by_validation;
      return;
    }
    out.emplace(key_of(l), l);
  });
  return out;
}

void expect_search_equals_brute_force(const PlanRequest& r, const Superset& sup) {
  int64_t rejected = 0;
  const std::map<std::string, PlanLayout> want = expected_layouts(r, sup, &rejected);
  RecordingTimer timer;
  const SearchResult found = search(r, timer, kEverythingFits);
  const std::set<std::string> got = timer.seen();
  EXPECT_EQ(found.stats.evaluated, static_cast<int64_t>(want.size()));
  EXPECT_GT(rejected, 0);  // the superset really holds invalid layouts to reject
  for (const auto& [key, layout] : want) EXPECT_TRUE(got.count(key)) << "not searched: " << key;
  Scenario s = r.base;
  for (const std::string& key : got) {
    EXPECT_TRUE(want.count(key)) << "searched but invalid or not conventional: " << key;
  }
  // Every layout the planner searched passes validate_scenario.
  for (const auto& [key, layout] : want) {
    apply_layout(layout, s);
    EXPECT_FALSE(validate_scenario(s).has_value()) << key;
  }
}

TEST(PlannerSearch, SearchesExactlyTheValidLayoutsOfADenseModel) {
  for (int64_t gpus : {4, 6}) {
    PlanRequest r = request_for(tiny_dense(), gpus, 96, 12);
    Superset sup;
    sup.micro_batches = {1, 2, 3, 4, 5, 6, 12};
    expect_search_equals_brute_force(r, sup);
  }
}

TEST(PlannerSearch, SearchesExactlyTheValidLayoutsWithEverySplitKind) {
  // torchtitan's and nanotron's splits beside the generic ones. 9 layers over 4 stages:
  // torchtitan's 2, 3, 3, 1 is no other kind's; nanotron's compute-cost split gives the stage
  // with the LM head fewer layers.
  ModelConfig m = tiny_dense();
  m.num_layers = 9;
  m.moe_layers.assign(9, false);
  m.layer_attention.assign(9, LayerAttention::kFull);
  PlanRequest r = request_for(m, 4, 96, 12);
  r.space.split.assign(std::begin(kAllSplits), std::end(kAllSplits));
  r.space.micro_batch = {1, 2};
  Superset sup;
  sup.micro_batches = {1, 2};
  expect_search_equals_brute_force(r, sup);
  int64_t rejected = 0;
  std::set<SplitKind> kinds;
  for (const auto& [key, layout] : expected_layouts(r, sup, &rejected))
    kinds.insert(layout.split.kind);
  EXPECT_TRUE(kinds.count(SplitKind::kBalancedEmbeddingAndLoss));
  EXPECT_TRUE(kinds.count(SplitKind::kCompute));
}

TEST(PlannerSearch, SearchesExactlyTheValidLayoutsOfAnMoeModel) {
  PlanRequest r = request_for(testing::tiny_moe(), 4, 64, 8);
  r.base.training.recompute_layers = 0;
  Superset sup;
  sup.eps = {1, 2, 3, 4, 8};
  sup.etps = {1, 2, 3, 4, 8};
  sup.micro_batches = {1, 2, 8};
  r.space.micro_batch = {1, 2, 8};  // keeps the superset small
  expect_search_equals_brute_force(r, sup);
}

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
  std::vector<PlanCandidate> fitting;  // sorted best first
  std::vector<PlanCandidate> missing;  // sorted closest first
};

BruteForce split_at(const std::vector<PlanCandidate>& all, int64_t limit) {
  BruteForce out;
  for (const PlanCandidate& c : all)
    (c.device_bytes <= limit ? out.fitting : out.missing).push_back(c);
  std::sort(out.fitting.begin(), out.fitting.end(), better_candidate);
  std::sort(out.missing.begin(), out.missing.end(), closer_miss);
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
    const size_t k = std::min<size_t>(r.top_k, want.fitting.size());
    EXPECT_EQ(found.top.size(), k);
    for (size_t i = 0; i < std::min(k, found.top.size()); ++i)
      expect_same_candidate(found.top[i], want.fitting[i], "top " + std::to_string(i));
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

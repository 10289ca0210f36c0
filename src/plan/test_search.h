// Helpers of the planner search tests: a tiny model searchable by brute force, requests for it,
// and a deterministic timer that records every layout it is asked to time.
#pragma once

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>

#include "model/test_models.h"
#include "plan/planner_search.h"

namespace vramplan::testing {

// h 64, 4 layers, 4 heads, 2 KV heads, f 128, V 1000: small enough to search by brute force.
inline ModelConfig tiny_dense() {
  ModelConfig m = testing::tiny_moe();
  m.name = "tiny-dense";
  m.moe = MoeConfig{};
  m.moe_layers.assign(4, false);
  return m;
}

inline PlanLayout layout_from(const Scenario& s) {
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
inline std::string key_of(const PlanLayout& l) {
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

inline PlanRequest request_for(const ModelConfig& model, int64_t gpus, int64_t seq_len,
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

inline constexpr int64_t kEverythingFits = int64_t{1} << 62;

inline SearchResult search(const PlanRequest& r, const LayoutTimer& timer, int64_t limit) {
  Result<FastMemoryModel> memory = FastMemoryModel::prepare(r.base);
  EXPECT_TRUE(memory.ok());
  return search_layouts(r, *memory, timer, limit);
}

}  // namespace vramplan::testing

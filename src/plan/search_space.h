// The planner's search space: the values each layout dimension may take for a request, under
// scenario_checks.cc's rules for the dimensions the planner varies and the planner's own
// conventions (is_canonical, planner_search.h). planner_search.cc enumerates them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "vramplan/plan/planner.h"

namespace vramplan::plan_space {

inline constexpr int64_t kMaxDegree = int64_t{1} << 20;      // scenario_checks.cc: any one degree
inline constexpr int64_t kMaxMicroBatch = int64_t{1} << 20;  // scenario_checks.cc

// Whether a request's list allows `value` (an empty list allows every value).
template <class T>
bool allowed(const std::vector<T>& list, const T& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

int64_t max_tp_of(const PlanRequest& r);

std::vector<int64_t> divisors(int64_t n);

// check_tensor_parallel: heads, KV heads (standard attention) and dense FFN width divide by tp.
bool tp_divides_model(const ModelConfig& m, int64_t tp);

// check_tensor_parallel: sequence parallelism splits each CP rank's tokens over tp.
bool sp_divides_sequence(int64_t seq_len, int64_t tp, int64_t cp, bool sp);

// check_context_parallel: two chunks of the sequence per CP rank.
bool cp_divides_sequence(int64_t seq_len, int64_t cp);

// check_experts.
bool experts_fit(const ModelConfig& m, int64_t tp, int64_t cp, int64_t dp, int64_t ep, int64_t etp);

bool same_split(const PipelineSplit& a, const PipelineSplit& b);

// Layers per chunk, or empty when some chunk would hold none (or the split is invalid).
std::vector<int64_t> chunk_sizes_of(const ModelConfig& model, int64_t pp, int64_t vpp,
                                    const PipelineSplit& split);

bool split_searched(const PlanRequest& r, SplitKind kind);

// The splits the planner tries for (pp, vpp): each allowed kind that applies, once per distinct
// list of chunk sizes.
std::vector<PipelineSplit> splits_for(const PlanRequest& r, int64_t pp, int64_t vpp);

std::vector<Schedule> schedules_for(const PlanRequest& r, int64_t pp, int64_t vpp);

// Whether a sharding choice shards the parameters themselves (sharding_of decides it).
bool shards_parameters(const ShardingChoice& c);

std::vector<ShardingChoice> shardings_for(const PlanRequest& r, int64_t tp, int64_t cp, int64_t dp,
                                          int64_t ep, int64_t etp);

std::vector<Recompute> recomputes_for(const PlanRequest& r);

std::vector<int64_t> micro_batches_for(const PlanRequest& r, int64_t dp);

// tp values worth a branch: divisors of the GPUs, within max_tp, dividing the model.
std::vector<int64_t> tps_for(const PlanRequest& r);

std::vector<bool> sequence_parallel_for(const PlanRequest& r, int64_t tp, int64_t cp);

}  // namespace vramplan::plan_space

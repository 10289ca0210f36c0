// The step time's per-pipeline-rank terms (step_time.cc evaluate): each distinct rank's work per
// microbatch, what recomputation adds to it, and the exposed data-parallel communication, the
// optimizer step and the offload transfers of its parameters. They are split by what each
// depends on, so that a caller varying only the recompute mode or the sharding over one pipeline
// (StepTimeCache, which the planner's inner loops use) reuses the rest; the figures are the same
// as when everything is computed afresh.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "perf/step_time_sections.h"

namespace vramplan {

// One pipeline rank: its layers by kind, time per microbatch and parameters.
struct RankWork {
  std::array<double, kLayerKinds> layers{};
  double layer_count = 0;
  SectionTime time;
  double recompute = 0, recompute_launches = 0;
  double dense_params = 0, expert_params = 0;
  double gpu = 0;  // seconds per microbatch the GPU is busy (compute and exposed communication)
  double cpu = 0;  // seconds per microbatch the framework needs to issue the work
  double busy() const { return std::max(gpu, cpu); }
};

// The pipeline ranks evaluate() visits for one layout: the first, the last, and each middle rank
// (neither embedding nor head) whose layers differ from those of the middle rank before it — one
// holding the same layers gives the same figures, which cannot change the maxima taken over the
// ranks. Each without recomputation (with_recompute adds it).
struct PipelineRanks {
  std::vector<RankWork> ranks;
  // Of each rank, its decoder layers' time alone: what recomputation re-runs.
  std::vector<SectionTime> layers_only;
};

// Fills `out` for layout `s`, whose section times are `times` (layout_times).
void visit_pipeline_ranks(const StepTimeData& data, const Scenario& s, const LayoutTimes& times,
                          PipelineRanks& out);

// The same in two steps: which ranks are visited and the layers of each kind they hold, which
// depend on the pipeline's shape and split alone (PipelineShapeKey); then their work.
struct VisitedRank {
  int64_t rank = 0;
  std::array<double, kLayerKinds> layers{};
};
void visited_ranks(const StepTimeData& data, const Scenario& s, std::vector<VisitedRank>& out);
void pipeline_ranks(const StepTimeData& data, const Scenario& s, const LayoutTimes& times,
                    const std::vector<VisitedRank>& visited, PipelineRanks& out);

// Rank `i` of `ranks` with the recomputation s.training.recompute asks for.
RankWork with_recompute(const StepTimeData& data, const Scenario& s, const PipelineRanks& ranks,
                        size_t i);

// The slowest rank (most busy seconds per microbatch; the first of equals) with recomputation.
RankWork slowest_rank(const StepTimeData& data, const Scenario& s, const PipelineRanks& ranks);

// The worst over the ranks of each per-step term their parameters cost.
struct RankTerms {
  double dp_exposed = 0;  // data-parallel communication not hidden by compute
  double optimizer = 0;   // the optimizer update on the GPU
  double offload = 0;     // offload transfers not hidden and the CPU optimizer step
};

// They depend on the sharding and, only when s offloads anything, on the recompute mode.
RankTerms rank_terms(const StepTimeData& data, const Scenario& s, const PipelineRanks& ranks,
                     double microbatches);

}  // namespace vramplan

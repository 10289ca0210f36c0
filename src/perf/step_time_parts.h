// The step from its parts (step_time.cc evaluate): a layout's section times, and the step
// assembled from the slowest rank's microbatches, the pipeline's fill, drain and sends, and the
// worst rank's per-step terms. The first parts alone bound the layout's speed from above, which
// lets a caller that only needs layouts faster than some figure skip the rest
// (StepTimeModel::evaluate_unless_slower).
#pragma once

#include "perf/step_time_ranks.h"

namespace vramplan {

LayoutTimes layout_times(const StepTimeData& data, const Scenario& s);

StepTime step_time_of(const StepTimeData& data, const Scenario& s, const OpDims& d,
                      double microbatches, const RankWork& slowest, const RankTerms& terms);

// The step's first parts, the slowest rank's microbatches (compute, recomputation, TP, CP and EP
// communication, CPU-bound time), written to `out`, and their sum, with which step_time_of
// begins the step's. The later parts (pipeline bubble, data-parallel communication, optimizer,
// offload) are not negative (later_parts_bounded), and adding a non-negative double never lowers
// a sum: the step is at least this sum, in floating point too, so tokens_per_gpu of it is at
// least the layout's tokens/s per GPU.
double first_parts_seconds(const Scenario& s, double microbatches, const RankWork& slowest,
                           StepTime& out);

// Tokens per second per GPU of a step of `step_seconds`, as step_time_of computes it.
double tokens_per_gpu(const Scenario& s, const OpDims& d, double microbatches, double step_seconds);

// Whether the later parts are finite and not negative for every layout whose section times are
// finite: the cluster's bandwidths and the constants they use are finite, the bandwidths (after
// efficiency) at least one byte per second, the latencies and overheads not negative; without
// offload (its terms are not covered). A layout bounded by the first parts alone is then
// certainly one the model times with a finite, positive speed.
bool later_parts_bounded(const StepTimeData& data);

}  // namespace vramplan

#include "perf/weight_reads.h"

#include "vramplan/perf/step_time.h"

namespace vramplan {

namespace {

// A decode step streams whole weight matrices, HBM's best case: 92% of the peak, the upper end of
// the range the step-time constants allow. Not the training fit's hbm_efficiency, which also
// stands for element-wise traffic the training model under-counts (docs/roofline.md).
constexpr double kStreamingHbmEfficiency = 0.92;

}  // namespace

WeightReads decode_weight_reads(int64_t gpu_weight_bytes, int64_t offloaded_bytes, const Gpu& gpu) {
  const StepTimeConstants c;
  WeightReads out;
  if (gpu.hbm_gbps > 0)
    out.hbm_s =
        static_cast<double>(gpu_weight_bytes) / (gpu.hbm_gbps * 1e9 * kStreamingHbmEfficiency);
  if (gpu.host_link_gbps > 0)
    out.host_link_s =
        static_cast<double>(offloaded_bytes) / (gpu.host_link_gbps * 1e9 * c.host_link_efficiency);
  return out;
}

}  // namespace vramplan

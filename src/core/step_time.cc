#include "vramplan/step_time.h"

namespace vramplan {

// Placeholder until the step-time model lands (same branch, following commits).
struct StepTimeData {};

Result<StepTimeModel> StepTimeModel::prepare(const Scenario&, const Gpu& gpu, const Cluster&) {
  return Error{"gpu", gpu.id, "", "step time is not implemented yet"};
}

StepTime StepTimeModel::evaluate(const Scenario&) const { return StepTime{}; }

Result<StepTime> estimate_step_time(const Scenario& s, const Gpu& gpu, const Cluster& cluster) {
  Result<StepTimeModel> model = StepTimeModel::prepare(s, gpu, cluster);
  if (!model) return model.error();
  return model->evaluate(s);
}

Cluster default_cluster(const Gpu& gpu) {
  return Cluster{gpu.gpus_per_node, gpu.nvlink_gbps, gpu.inter_node_gbps};
}

}  // namespace vramplan

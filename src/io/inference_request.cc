#include "vramplan/io/inference_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "perf/weight_reads.h"
#include "vramplan/io/estimate_request.h"
#include "vramplan/io/inference_settings.h"
#include "vramplan/perf/hardware.h"

namespace vramplan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Offloaded weights cross the host link at every forward step (docs/offload.md "Serving").
void add_decode_weight_reads(SettingsInference& out) {
  InferenceEstimate& e = out.estimate;
  const int64_t offloaded = out.resolved.scenario.offload.cpu_offload_bytes;
  if (offloaded <= 0 || e.fit.empty()) return;
  const Gpu* gpu = builtin_gpus().find(e.fit.front().gpu);
  if (gpu == nullptr || gpu->host_link_gbps <= 0 || gpu->hbm_gbps <= 0) {
    e.warnings.push_back(fmt::format(
        "cpu_offload_gib: every forward step reads the {:.2f} GiB offloaded over the GPU's host "
        "link (PCIe or NVLink-C2C), whose bandwidth the GPU's catalog entry does not give",
        offloaded / kGiB));
    return;
  }
  const WeightReads r = decode_weight_reads(e.weights_bytes, offloaded, *gpu);
  e.decode_weight_reads = InferenceEstimate::DecodeReads{gpu->id, r.hbm_s, r.host_link_s};
  e.warnings.push_back(fmt::format(
      "cpu_offload_gib: every forward step reads the {:.2f} GiB offloaded over the {:g} GB/s host "
      "link of {} (at 80%): at least {:.1f} ms per step, beside {:.1f} ms to read the {:.2f} GiB "
      "left on the GPU from HBM — a memory-bound decode runs about {:.1f}x slower than with every "
      "weight on the GPU",
      offloaded / kGiB, gpu->host_link_gbps, gpu->id, 1e3 * r.host_link_s, 1e3 * r.hbm_s,
      e.weights_bytes / kGiB,
      (r.hbm_s + r.host_link_s) / (r.hbm_s * (1.0 + static_cast<double>(offloaded) /
                                                        std::max<int64_t>(1, e.weights_bytes)))));
}

}  // namespace

Result<SettingsInference> infer_settings(const nlohmann::json& settings,
                                         const FileReader& read_file,
                                         const ModelFetcher& fetch_model,
                                         const EstimateOptions& options) {
  Result<ResolvedInference> resolved = resolve_inference(settings, read_file, fetch_model);
  if (!resolved) return resolved.error();
  Result<InferenceEstimate> result = estimate_inference(resolved->scenario, options);
  if (!result)
    return resolved->imported ? name_as_imported(result.error(), *resolved->imported, settings)
                              : result.error();
  SettingsInference out{std::move(resolved).value(), std::move(result).value()};
  Result<std::vector<Fit>> fits =
      fit_rows(out.resolved.gpu, out.resolved.gpu_memory_gib, out.estimate.device_bytes);
  if (!fits) return fits.error();
  out.estimate.fit = std::move(fits).value();
  // The node's RAM against the offload's host rows (docs/offload.md), as training checks it.
  if (out.estimate.host_bytes > 0) {
    const InferenceScenario& s = out.resolved.scenario;
    for (Fit& f : out.estimate.fit) {
      const Gpu* gpu = builtin_gpus().find(f.gpu);
      const double ram = out.resolved.host_memory_gib.value_or(gpu ? gpu->host_memory_gib : 0.0);
      fit_host(f, out.estimate.host_bytes, s.world_size(), gpu ? gpu->gpus_per_node : 8, ram);
    }
  }
  add_decode_weight_reads(out);
  std::vector<std::string>& warnings = out.estimate.warnings;
  warnings.insert(warnings.begin(), out.resolved.warnings.begin(), out.resolved.warnings.end());
  return out;
}

}  // namespace vramplan

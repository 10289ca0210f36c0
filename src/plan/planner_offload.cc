#include "plan/planner_offload.h"

#include <fmt/format.h>

#include "perf/step_time_offload.h"

namespace vramplan {
namespace {

struct Rung {
  Offload offload;
  const char* what;
};

constexpr OffloadTier kNo = OffloadTier::kNone, kCpu = OffloadTier::kCpu,
                      kNvme = OffloadTier::kNvme;

// Least disruptive first. Each rung keeps only the shardings that run it (search_space.cc
// shardings_for: ZeRO 1-3, FSDP or Megatron's distributed optimizer for the optimizer; ZeRO-3 or
// sharded FSDP for the parameters; NVMe with ZeRO-3 only).
const Rung kLadder[] = {
    {{kNo, kNo, 1.0, true}, "activations to the host"},
    {{kCpu, kNo, 1.0, false}, "the optimizer to the CPU"},
    {{kCpu, kNo, 1.0, true}, "the optimizer to the CPU and activations to the host"},
    {{kCpu, kCpu, 1.0, false}, "the optimizer and parameters to the CPU"},
    {{kCpu, kCpu, 1.0, true}, "the optimizer and parameters to the CPU, activations to the host"},
    {{kNvme, kNvme, 1.0, false}, "the optimizer and parameters to NVMe (ZeRO-Infinity)"},
    {{kNvme, kNvme, 1.0, true},
     "the optimizer and parameters to NVMe (ZeRO-Infinity), activations to the host"},
};

}  // namespace

OffloadSearch search_with_offload(const PlanRequest& r, const Scenario& neutral,
                                  const LayoutTimer& timer, int64_t limit) {
  OffloadSearch out;
  std::string fitted, unavailable, host_over;
  for (const Rung& rung : kLadder) {
    PlanRequest with = r;
    with.base.offload = rung.offload;
    if (auto e = offload_bandwidth_error(with.base, r.cluster)) {
      unavailable +=
          fmt::format("{}{} (no {})", unavailable.empty() ? "" : "; ", rung.what, e->field);
      continue;
    }
    Scenario memory_base = neutral;
    memory_base.offload = rung.offload;
    Result<FastMemoryModel> memory = FastMemoryModel::prepare(memory_base);
    if (!memory) continue;  // the same model prepared without offload: cannot fail here
    SearchResult part = search_layouts(with, *memory, timer, limit);
    if (part.stopped) {
      out.found.stopped = true;
      return out;
    }
    const int64_t fit = part.stats.fitting - part.stats.untimed;
    if (fit == 0 && part.stats.host_over > 0)
      host_over += fmt::format("{}{}", host_over.empty() ? "" : "; ", rung.what);
    if (fit > 0)
      fitted += fmt::format("{}{} ({} layout{})", fitted.empty() ? "" : "; ", rung.what, fit,
                            fit == 1 ? "" : "s");
    merge_search(out.found, part, r.top_k);
  }
  settle_misses(out.found);
  out.note = fitted.empty()
                 ? "Searched again with offload: nothing fits with any of " +
                       std::string("activations, the optimizer or the parameters offloaded.")
                 : "Searched again with offload, which fits with " + fitted + ".";
  if (!host_over.empty())
    out.note += fmt::format(" With {}, layouts fit the GPU but not the node's {:g} GiB of RAM.",
                            host_over, r.host_memory_gib);
  if (!unavailable.empty()) out.note += " Not tried: " + unavailable + ".";
  return out;
}

}  // namespace vramplan

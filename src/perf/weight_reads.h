// What a serving engine's weight offload (vLLM / SGLang --cpu-offload-gb) costs a decode step:
// a memory-bound step reads every weight once, those left on the GPU from HBM and the offloaded
// ones over the GPU's host link (vLLM's UVA reads pinned host memory from the kernels; SGLang
// copies each offloaded layer in before it runs). Lower bounds: HBM at kStreamingHbmEfficiency
// (weight_reads.cc), the host link at StepTimeConstants::host_link_efficiency.
#pragma once

#include <cstdint>

#include "vramplan/perf/hardware.h"

namespace vramplan {

struct WeightReads {
  double hbm_s = 0;        // the GPU-resident weights from HBM
  double host_link_s = 0;  // the offloaded weights over the host link; 0 when unknown
};

// 0 where the GPU lacks the bandwidth in its catalog entry.
WeightReads decode_weight_reads(int64_t gpu_weight_bytes, int64_t offloaded_bytes, const Gpu& gpu);

}  // namespace vramplan

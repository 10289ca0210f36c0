// The step-time model against training steps measured on a real GPU by this project
// (reference/vramref/gpu_speed.py; data/measurements/gpu_step_time.csv): one GPU, Hugging Face
// transformers' eager model code, SDPA attention, fused AdamW, on an H100 and an H200. No
// constant was fitted on these rows. Each row also carries the GPU kernel time by kind (GEMM,
// attention, element-wise, optimizer) from a profiler trace, which the docs compare with the
// model's own split (docs/roofline.md, "Measured on a GPU").
#pragma once

#include "validation/throughput/published_throughput.h"
#include "vramplan/base/error.h"
#include "vramplan/perf/step_time.h"

namespace vramplan {

// Rows as PublishedRow (framework "transformers", precision "bf16" for pure bf16 or "amp-bf16"
// for fp32 weights under bf16 autocast); summaries "all" and per GPU.
Result<PublishedReport> validate_gpu_step_time(const StepTimeConstants& constants = {});

}  // namespace vramplan

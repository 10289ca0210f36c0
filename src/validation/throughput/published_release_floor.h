// How far the published throughput disagrees with itself: rows that give the same layout (model,
// GPU, GPU count, TP/PP/CP/VP/EP/ETP, micro and global batch, sequence length, precision,
// recompute, framework) were measured in different releases of the framework, and each is
// compared with its group's median. No prediction from the layout alone can do better on them:
// what changed between those runs is the software (dispatchers, CUDA graphs, fused kernels).
#pragma once

#include <vector>

#include "base/csv.h"
#include "vramplan/validation/validation.h"

namespace vramplan {

// Over the rows with a preset (hf_model) and a published tokens/s; with held_out_only, over the
// held-out families only (published_held_out).
NoiseFloor published_release_floor(const std::vector<CsvRow>& rows, bool held_out_only);

}  // namespace vramplan

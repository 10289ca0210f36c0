// Checks a Scenario before estimating: impossible layouts, out-of-range sizes, conflicting
// options. Each failure names the field, the value and what would be accepted.
#pragma once

#include <optional>

#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

std::optional<Error> validate_scenario(const Scenario& s);

// The offload settings against the sharding and fine-tuning (part of validate_scenario): which
// framework's offload the layout runs and what it needs (docs/offload.md).
std::optional<Error> check_offload(const Scenario& s);

// Microbatches per step on one data-parallel rank: global_batch / (micro_batch · dp).
// REQUIRES: validate_scenario(s) returned no error.
int64_t microbatches_of(const Scenario& s);

// The global batch used when none is given: enough microbatches to fill the pipeline twice.
int64_t default_global_batch(const Parallelism& par, int64_t micro_batch);

}  // namespace vramplan

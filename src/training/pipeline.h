// Pipeline layout: which decoder layers each pipeline rank holds, which rank holds the embedding
// and the LM head, and how many microbatches of activations each rank keeps in flight.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "vramplan/base/error.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// The settings that choose the pipeline split, the one the user names first in an error. A
// framework's split is a default: any of these replaces it as a whole (scenario_io.cc).
inline constexpr const char* kSplitSettingKeys[] = {"pipeline_split",     "pipeline_layout",
                                                    "first_stage_layers", "last_stage_layers",
                                                    "embedding_stage",    "loss_stage"};

// Layer-microbatches alive on a rank (in_flight_layers, below).
struct InFlightLayers {
  int64_t peak = 0;
  int64_t at_last_chunk = 0;
};

struct RankLayout {
  std::vector<int64_t> layers;    // decoder layer ids, in order, across all its model chunks
  int64_t last_chunk_layers = 0;  // of those, the ones in its last model chunk (the tail)
  bool has_embedding = false;     // input embedding (rank 0)
  bool has_head = false;          // final norm, LM head and loss (last rank)
  // Activation units kept at the peak: microbatches × (1/vpp of the rank's layers) — i.e. in
  // model-chunk microbatches. Activation bytes = units × (layers / vpp) × per-layer bytes.
  int64_t in_flight_chunks = 0;
  // The same peak in layer-microbatches: in_flight_chunks × layers / vpp when the rank's chunks
  // hold equal layers, else what the schedule's order leaves alive (in_flight_layers).
  InFlightLayers in_flight_layers;
  int64_t in_flight_logits = 1;  // microbatches whose logits are alive at once (last rank)
};

// Splits layers over pp·vpp model chunks (Megatron's order: rank r holds chunks r, r+pp, ...).
// Uneven layouts follow Megatron's --decoder-first/last-pipeline-num-layers and
// --account-for-embedding/loss-in-pipeline-split.
// REQUIRES: the layout was checked by validate_pipeline.
std::vector<RankLayout> layout_pipeline(int64_t num_layers, const Parallelism& parallel,
                                        int64_t microbatches);
// The same for a model: also handles parallel.compute_balanced_split, which needs layer costs.
std::vector<RankLayout> layout_pipeline(const ModelConfig& model, const Parallelism& parallel,
                                        int64_t microbatches);

// Decoder layers per pipeline rank under nanotron's compute-cost split (see Parallelism).
std::vector<int64_t> compute_cost_split(const ModelConfig& model, int64_t pp);

// Checks that num_layers can be split as asked; the Error names the offending option.
std::optional<Error> validate_pipeline(int64_t num_layers, const Parallelism& parallel);
std::optional<Error> validate_pipeline(const ModelConfig& model, const Parallelism& parallel);

// Whether a rank with virtual stages runs all backwards of one chunk before the next chunk's:
// one round of an interleaved schedule (m <= pp; Megatron's and torch.distributed.pipelining's
// interleaved 1F1B group microbatches in rounds of pp), or an all-forward-all-backward schedule
// (torch's ScheduleLoopedBFS runs the backward stage by stage).
inline bool backward_chunk_by_chunk(const Parallelism& p, int64_t microbatches) {
  if (p.vpp == 1) return false;
  return p.schedule == Schedule::kGPipe || microbatches <= p.pp;
}

// Chunk-microbatches alive at the activation peak on `rank` (Megatron schedules):
//   1F1B: min(pp − rank, m);  GPipe: m;  interleaved: min(2·(pp − rank − 1) + (vpp − 1)·pp + 1,
//   m·vpp) chunks (schedules.py get_forward_backward_func warm-up count, plus the one in flight).
int64_t in_flight_chunks(const Parallelism& parallel, int64_t rank, int64_t microbatches);

// Layer-microbatches alive on `rank`, whose model chunks hold `chunk_layers` decoder layers
// (virtual stage order): at the peak, and at the peak after a forward of the rank's last chunk —
// on the last rank, the moment its loss runs. Where the chunks' layers differ, an interleaved
// rank's count depends on which chunks its forwards reached: both Megatron's and torch's
// interleaved 1F1B run `round` microbatches (pp, or m when fewer) through one virtual stage
// before the next, forwards from the first chunk and backwards from the last (Megatron
// schedules.py get_model_chunk_id; torch ScheduleInterleaved1F1B forward_stage_index /
// backward_stage_index), one forward then one backward after the warm-up. The alive layers are
// taken after each forward, over the warm-up and one period of the steady state (it repeats).
// Otherwise both are in_flight_chunks × layers / vpp.
InFlightLayers in_flight_layers(const Parallelism& parallel, int64_t rank, int64_t microbatches,
                                std::span<const int64_t> chunk_layers);
// Forwards `rank` runs before its first backward under interleaved 1F1B, uncapped by the
// microbatches: 2·(pp − rank − 1) + (vpp − 1)·pp (Megatron schedules.py, torch
// _get_warmup_ops).
int64_t interleaved_warmup(const Parallelism& parallel, int64_t rank);
// The microbatch count from which in_flight_layers no longer depends on it under the interleaved
// schedule: the round is pp and the warm-up and one period (pp·vpp steps) fit in m·vpp.
int64_t interleaved_steady_microbatches(const Parallelism& parallel, int64_t rank);

}  // namespace vramplan

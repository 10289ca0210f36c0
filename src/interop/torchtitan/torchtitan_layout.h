// torchtitan's own rules for a pipeline and for layer-level checkpointing, shared by the importer
// and the emitter so that what one writes the other reads back the same: the pipeline schedules
// by name (torch.distributed.pipelining get_schedule_class), the stages each rank holds
// (torchtitan/distributed/pipeline_parallel.py pipeline_llm and generate_llm_fqn_per_model_part)
// and which layers `selective_ac_option = N` checkpoints
// (torchtitan/distributed/activation_checkpoint.py _apply_layer_sac).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::interop {

struct TitanSchedule {
  const char* name;      // as torchtitan's docs spell it: "Interleaved1F1B"
  bool multi_stage;      // a looped schedule: several stages per rank
  const char* vramplan;  // the vramplan schedule whose memory it has: "interleaved"
  bool modelled;         // false: vramplan has no model of its memory (estimated as `vramplan`)
  bool v_shape;          // stages placed in a V (rank r holds r and 2·pp−1−r), not looped
};

// The schedule named `name` (case-insensitive, as get_schedule_class), or nullptr.
const TitanSchedule* find_titan_schedule(std::string_view name);
std::string titan_schedule_names();

// The decoder layers each pipeline rank holds: `stages` stages over `pp` ranks (stage s on rank
// s mod pp, or in a V), split by generate_llm_fqn_per_model_part with the embedding and the
// output counted as `input_weight` and `output_weight` layers. Empty when torchtitan refuses the
// split (it raises: more stages than layers, a weight above a stage's share).
std::vector<int64_t> titan_rank_layers(int64_t layers, int64_t pp, int64_t stages_per_rank,
                                       int64_t input_weight, int64_t output_weight, bool v_shape);

// selective_ac_option = N on ranks holding `rank_layers` layers: each rank checkpoints every N-th
// layer it builds (a counter over its layers), floor(layers / N) of them. vramplan recomputes
// `recompute_layers` per chunk (× vpp, at most the rank's layers): `layers_per_chunk` is the
// value giving the most loaded rank its count, and `exact` whether every rank then gets its own.
struct EveryNth {
  int64_t layers_per_chunk = 0;  // 0: no layer is checkpointed
  bool exact = true;
};
EveryNth titan_every_nth(const std::vector<int64_t>& rank_layers, int64_t vpp, int64_t every);

}  // namespace vramplan::interop

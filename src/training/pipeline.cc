#include "training/pipeline.h"

#include <algorithm>
#include <string>

#include "base/term.h"
#include "training/chunk_split.h"

namespace vramplan {
namespace {

// Decoder layers in each of the pp·vpp chunks, in chunk order.
std::vector<int64_t> chunk_sizes(int64_t num_layers, const Parallelism& par) {
  const ChunkSplit split(num_layers, par);
  std::vector<int64_t> sizes(split.chunks());
  for (int64_t c = 0; c < split.chunks(); ++c) sizes[c] = split.size(c);
  return sizes;
}

// Relative forward cost of one decoder layer as nanotron's get_block_compute_costs counts it:
// attention projections 4·a·d·h plus the MLP's 3·f·h (2·f·h for a plain MLP). An MoE layer
// counts the experts a token visits.
Wide layer_cost(const ModelConfig& m, int64_t layer) {
  const bool moe = layer < static_cast<int64_t>(m.moe_layers.size()) && m.moe_layers[layer];
  const Wide ffn = moe ? Wide{m.moe.top_k} * m.moe.expert_ffn +
                             Wide{m.moe.shared_experts} * m.moe.shared_expert_ffn
                       : Wide{m.ffn};
  const Wide mlp_matrices = m.mlp == MlpKind::kGated ? 3 : 2;
  return Wide{4} * m.num_heads * m.head_dim * m.hidden + mlp_matrices * ffn * m.hidden;
}

std::vector<RankLayout> layout_from_sizes(const std::vector<int64_t>& sizes, const Parallelism& par,
                                          int64_t m) {
  std::vector<RankLayout> ranks(par.pp);
  int64_t next_layer = 0;
  for (size_t chunk = 0; chunk < sizes.size(); ++chunk) {
    RankLayout& rank = ranks[chunk % par.pp];
    for (int64_t i = 0; i < sizes[chunk]; ++i) rank.layers.push_back(next_layer++);
  }
  ranks.front().has_embedding = true;
  ranks.back().has_head = true;
  const int64_t chunks_per_rank = static_cast<int64_t>(sizes.size()) / par.pp;
  for (int64_t r = 0; r < par.pp; ++r) {
    const int64_t last_chunk = sizes[static_cast<size_t>(r + (chunks_per_rank - 1) * par.pp)];
    ranks[r].last_chunk_layers = std::max<int64_t>(last_chunk, 0);
    ranks[r].in_flight_chunks = in_flight_chunks(par, r, m);
    std::vector<int64_t> own(static_cast<size_t>(chunks_per_rank));
    for (int64_t v = 0; v < chunks_per_rank; ++v)
      own[static_cast<size_t>(v)] =
          std::max<int64_t>(sizes[static_cast<size_t>(r + v * par.pp)], 0);
    ranks[r].in_flight_layers = in_flight_layers(par, r, m, own);
    // Only the all-forward-all-backward schedule keeps more than one microbatch of logits.
    ranks[r].in_flight_logits = (par.schedule == Schedule::kGPipe && par.pp > 1) ? m : 1;
  }
  return ranks;
}

}  // namespace

std::vector<int64_t> compute_cost_split(const ModelConfig& model, int64_t pp) {
  std::vector<Wide> costs;  // blocks: embedding, decoder layers, final norm, LM head, loss
  costs.push_back(0);
  for (int64_t l = 0; l < model.num_layers; ++l) costs.push_back(layer_cost(model, l));
  costs.push_back(0);
  costs.push_back(Wide{model.vocab} * model.hidden);
  costs.push_back(0);
  Wide total = 0;
  for (Wide c : costs) total += c;
  std::vector<int64_t> layers(pp, 0);
  int64_t rank = 0;
  Wide running = 0;
  for (size_t block = 0; block < costs.size(); ++block) {
    running += costs[block];
    const bool decoder = block >= 1 && block <= static_cast<size_t>(model.num_layers);
    if (decoder) ++layers[rank];
    // running > total·(rank+1)/pp, in exact integers.
    if (running * pp > total * (rank + 1) && rank + 1 < pp) ++rank;
  }
  return layers;
}

int64_t in_flight_chunks(const Parallelism& par, int64_t rank, int64_t m) {
  if (par.pp == 1) return 1;  // gradient accumulation runs microbatches one after another
  switch (par.schedule) {
    case Schedule::kGPipe:
      return m * par.vpp;
    case Schedule::k1F1B:
      return std::min(par.pp - rank, m);
    case Schedule::kInterleaved:
      return std::min(interleaved_warmup(par, rank) + 1, m * par.vpp);
  }
  return 1;
}

int64_t interleaved_warmup(const Parallelism& par, int64_t rank) {
  return 2 * (par.pp - rank - 1) + (par.vpp - 1) * par.pp;
}

int64_t interleaved_steady_microbatches(const Parallelism& par, int64_t rank) {
  return (interleaved_warmup(par, rank) + par.vpp - 1) / par.vpp + par.pp;
}

InFlightLayers in_flight_layers(const Parallelism& par, int64_t rank, int64_t m,
                                std::span<const int64_t> chunk_layers) {
  int64_t layers = 0;
  bool even = true;
  for (int64_t n : chunk_layers) {
    layers += n;
    even = even && n == chunk_layers.front();
  }
  const int64_t vpp = par.vpp;
  const int64_t chunks = in_flight_chunks(par, rank, m);
  if (vpp == 1 || even || par.schedule != Schedule::kInterleaved ||
      static_cast<int64_t>(chunk_layers.size()) != vpp)
    return {chunks * layers / vpp, chunks * layers / vpp};
  const int64_t total = m * vpp;
  const int64_t warmup = std::min(interleaved_warmup(par, rank), total);
  const int64_t round = std::min(par.pp, m);
  auto layers_of = [&](int64_t chunk) { return chunk_layers[static_cast<size_t>(chunk)]; };
  // Runs of steps whose forward and backward chunks stay the same: alive moves by a constant
  // each step, so each run's largest value is at one of its ends (O(vpp) runs, not O(pp·vpp)
  // steps: the planner's fast path calls this per layout).
  InFlightLayers out;
  int64_t alive = 0;
  auto seen = [&](int64_t value, int64_t chunk) {
    out.peak = std::max(out.peak, value);
    if (chunk == vpp - 1) out.at_last_chunk = std::max(out.at_last_chunk, value);
  };
  for (int64_t k = 0; k < warmup;) {  // forwards only: alive grows, largest at a run's end
    const int64_t chunk = (k / round) % vpp;
    const int64_t end = std::min(warmup, (k / round + 1) * round);
    alive += (end - k) * layers_of(chunk);
    seen(alive, chunk);
    k = end;
  }
  const int64_t period = std::min(total - warmup, round * vpp);
  for (int64_t i = 0; i < period;) {  // one forward, then one backward
    const int64_t forward = ((warmup + i) / round) % vpp;
    const int64_t backward = vpp - 1 - (i / round) % vpp;
    const int64_t end =
        std::min({period, i + round - (warmup + i) % round, (i / round + 1) * round});
    const int64_t step = layers_of(forward) - layers_of(backward);
    const int64_t first = alive + layers_of(forward);  // after the run's first forward
    seen(step >= 0 ? first + (end - 1 - i) * step : first, forward);
    alive += (end - i) * step;
    i = end;
  }
  return out;
}

std::vector<RankLayout> layout_pipeline(int64_t num_layers, const Parallelism& par, int64_t m) {
  return layout_from_sizes(chunk_sizes(num_layers, par), par, m);
}

std::vector<RankLayout> layout_pipeline(const ModelConfig& model, const Parallelism& par,
                                        int64_t m) {
  if (par.compute_balanced_split && par.pp > 1)
    return layout_from_sizes(compute_cost_split(model, par.pp), par, m);
  return layout_pipeline(model.num_layers, par, m);
}

namespace {

// An explicit layout: one size per chunk, adding up to the decoder layers.
std::optional<Error> validate_listed(int64_t num_layers, const Parallelism& par) {
  const auto chunks = static_cast<int64_t>(par.chunk_layers.size());
  if (chunks != par.pp * par.vpp)
    return Error{"pipeline_layout", std::to_string(chunks) + " stages",
                 "pp·vpp = " + std::to_string(par.pp * par.vpp) + " stages", ""};
  int64_t total = 0;
  for (int64_t n : par.chunk_layers) {
    if (n < 0) return Error{"pipeline_layout", std::to_string(n), "stages of 0 or more layers", ""};
    total += n;
  }
  if (total != num_layers)
    return Error{"pipeline_layout", std::to_string(total) + " decoder layers",
                 "the model's " + std::to_string(num_layers) + " decoder layers", ""};
  if (par.first_stage_layers > 0 || par.last_stage_layers > 0 || par.embedding_as_stage ||
      par.loss_as_stage || par.balanced_split || par.compute_balanced_split)
    return Error{"pipeline_layout", "given",
                 "a layout alone: it places every layer itself, without first/last stage layers, "
                 "embedding/loss stages or a split kind",
                 ""};
  return std::nullopt;
}

// Megatron's first/last stage layer counts: the other ranks share the rest evenly, and each
// rank's vpp chunks share its layers evenly.
std::optional<Error> validate_lighter_ends(int64_t num_layers, const Parallelism& par) {
  const char* key = par.first_stage_layers > 0 ? "first_stage_layers" : "last_stage_layers";
  const int64_t given = par.first_stage_layers > 0 ? par.first_stage_layers : par.last_stage_layers;
  if (par.embedding_as_stage || par.loss_as_stage)
    return Error{key, std::to_string(given),
                 "either explicit first/last stage layers or embedding/loss accounting, not both",
                 ""};
  if (par.pp < 2)
    return Error{"pp", std::to_string(par.pp), "pp >= 2 with first/last stage layers", ""};
  const int64_t rest = num_layers - par.first_stage_layers - par.last_stage_layers;
  const int64_t middle = par.pp - (par.first_stage_layers > 0) - (par.last_stage_layers > 0);
  if (rest < 0 || (middle == 0 && rest != 0) ||
      (middle > 0 && (rest <= 0 || rest % (middle * par.vpp) != 0)))
    return Error{key, std::to_string(given),
                 "values leaving the remaining layers divisible by the remaining stages" +
                     std::string(par.vpp > 1 ? " × vpp" : ""),
                 std::to_string(num_layers) + " layers minus first " +
                     std::to_string(par.first_stage_layers) + " and last " +
                     std::to_string(par.last_stage_layers) + " leaves " + std::to_string(rest) +
                     " for " + std::to_string(middle) + " middle stages" +
                     (par.vpp > 1 ? " of " + std::to_string(par.vpp) + " virtual stages" : "")};
  for (int64_t n : {par.first_stage_layers, par.last_stage_layers})
    if (n > 0 && n % par.vpp != 0)
      return Error{n == par.first_stage_layers ? "first_stage_layers" : "last_stage_layers",
                   std::to_string(n), "a multiple of vpp = " + std::to_string(par.vpp),
                   "each virtual stage of the rank holds an equal share"};
  return std::nullopt;
}

}  // namespace

std::optional<Error> validate_pipeline(int64_t num_layers, const Parallelism& par) {
  if (!par.chunk_layers.empty()) return validate_listed(num_layers, par);
  if (par.first_stage_layers > 0 || par.last_stage_layers > 0)
    return validate_lighter_ends(num_layers, par);
  const int64_t chunks = par.pp * par.vpp;
  const int64_t units = num_layers + par.embedding_as_stage + par.loss_as_stage;
  if (par.balanced_split) {
    if ((par.embedding_as_stage || par.loss_as_stage) && units / chunks == 0)
      return Error{"pipeline_split", "balanced", "an even split, or fewer stages than layers",
                   "the embedding or loss cannot be a layer of an empty stage"};
    return std::nullopt;
  }
  if (units % chunks != 0 || units < chunks) {
    std::string what = std::to_string(num_layers) + " layers";
    if (par.embedding_as_stage || par.loss_as_stage) what += " plus the embedding/loss units";
    return Error{par.vpp > 1 ? "vpp" : "pp", std::to_string(par.vpp > 1 ? par.vpp : par.pp),
                 "pp·vpp dividing the layer count, an uneven layout (first_stage_layers, "
                 "last_stage_layers), or pipeline_split balanced (with embedding_stage and "
                 "loss_stage: torchtitan's split)",
                 what + " (" + std::to_string(units) + ") are not divisible by pp·vpp = " +
                     std::to_string(par.pp) + "·" + std::to_string(par.vpp)};
  }
  return std::nullopt;
}

std::optional<Error> validate_pipeline(const ModelConfig& model, const Parallelism& par) {
  if (!par.compute_balanced_split) return validate_pipeline(model.num_layers, par);
  const char* why = nullptr;
  if (par.vpp > 1) why = "nanotron's compute-cost split has no virtual stages (vpp must be 1)";
  if (par.first_stage_layers > 0 || par.last_stage_layers > 0 || par.embedding_as_stage ||
      par.loss_as_stage || !par.chunk_layers.empty())
    why =
        "the compute-cost split places every block itself; drop first/last stage layers, "
        "embedding/loss stages and pipeline_layout";
  if (why) return Error{"pipeline_split", "compute", "even or balanced with this layout", why};
  return std::nullopt;
}

}  // namespace vramplan

#include "interop/torchtitan/torchtitan_layout.h"

#include <algorithm>
#include <cctype>

namespace vramplan::interop {
namespace {

// torch/distributed/pipelining/schedules.py get_schedule_class's table. ScheduleLoopedBFS runs
// every microbatch's forward on a stage before the next (GPipe's memory per stage); the zero-
// bubble schedules split the backward and keep weight-gradient inputs longer than 1F1B does.
constexpr TitanSchedule kSchedules[] = {
    {"1F1B", false, "1f1b", true, false},
    {"GPipe", false, "gpipe", true, false},
    {"Interleaved1F1B", true, "interleaved", true, false},
    {"LoopedBFS", true, "gpipe", true, false},
    {"InterleavedZeroBubble", true, "interleaved", false, false},
    {"ZBVZeroBubble", true, "interleaved", false, true},
    {"DualPipeV", true, "interleaved", false, true},
    {"PipelineScheduleSingle", false, "1f1b", false, false},
    {"PipelineScheduleMulti", true, "interleaved", false, false},
};

bool same_letters(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// generate_llm_fqn_per_model_part: the decoder layers of each of `stages` stages.
std::vector<int64_t> stage_layers(int64_t layers, int64_t stages, int64_t in, int64_t out) {
  if (stages == 1) return {layers};
  const int64_t effective = layers + in + out;
  if (stages > effective) return {};
  const int64_t per_stage = effective / stages, extra = effective % stages;
  if (per_stage == 0 || in > per_stage || out > per_stage) return {};
  std::vector<int64_t> split;
  int64_t left = layers;
  for (int64_t s = 0; s < stages; ++s) {
    int64_t take = per_stage + (s < extra ? 1 : 0);
    if (s == 0) take -= in;
    if (s == stages - 1) take -= out;
    take = std::clamp<int64_t>(take, 0, left);
    split.push_back(take);
    left -= take;
  }
  return split;
}

}  // namespace

const TitanSchedule* find_titan_schedule(std::string_view name) {
  for (const TitanSchedule& s : kSchedules)
    if (same_letters(name, s.name)) return &s;
  return nullptr;
}

std::string titan_schedule_names() {
  std::string out;
  for (const TitanSchedule& s : kSchedules) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

std::vector<int64_t> titan_rank_layers(int64_t layers, int64_t pp, int64_t stages_per_rank,
                                       int64_t input_weight, int64_t output_weight, bool v_shape) {
  if (layers <= 0 || pp <= 0 || stages_per_rank <= 0) return {};
  const int64_t stages = pp * stages_per_rank;
  const std::vector<int64_t> split = stage_layers(layers, stages, input_weight, output_weight);
  if (split.empty()) return {};
  std::vector<int64_t> ranks(static_cast<size_t>(pp), 0);
  for (int64_t s = 0; s < stages; ++s) {
    int64_t rank = s % pp;
    if (v_shape && (s / pp) % 2 == 1) rank = pp - 1 - s % pp;
    ranks[static_cast<size_t>(rank)] += split[static_cast<size_t>(s)];
  }
  return ranks;
}

EveryNth titan_every_nth(const std::vector<int64_t>& rank_layers, int64_t vpp, int64_t every) {
  EveryNth out;
  if (rank_layers.empty() || every <= 0 || vpp <= 0) return out;
  const int64_t most = *std::max_element(rank_layers.begin(), rank_layers.end());
  const int64_t count = most / every;
  if (count == 0) {
    out.exact = std::all_of(rank_layers.begin(), rank_layers.end(),
                            [&](int64_t l) { return l / every == 0; });
    return out;
  }
  // recompute_layers = 0 would mean every layer: at least one per chunk.
  out.layers_per_chunk = std::max<int64_t>(1, count / vpp);
  out.exact = std::all_of(rank_layers.begin(), rank_layers.end(), [&](int64_t l) {
    return std::min(out.layers_per_chunk * vpp, l) == l / every;
  });
  return out;
}

}  // namespace vramplan::interop

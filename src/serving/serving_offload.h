// A serving engine's host memory (docs/offload.md, "Serving"): weights kept in pinned CPU memory
// (vLLM / SGLang --cpu-offload-gb), vLLM V0's swap space, the KV cache offloaded to the host (vLLM
// --kv-offloading-size: its OffloadingConnector or LMCache's local CPU backend) and SGLang's
// hierarchical cache; what each takes off the GPU or adds on the host, and how many KV tokens each
// tier holds.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/term.h"
#include "vramplan/base/error.h"
#include "vramplan/serving/inference.h"

namespace vramplan {

// The offload settings against the engine that has them (errors name the setting).
std::optional<Error> check_serving_offload(const InferenceScenario& s);

struct WeightOffload {
  Wide offloaded = 0;    // bytes moved to the host (the sum of the rows' shares)
  Wide offloadable = 0;  // the decoder layers' weights on this GPU
  int64_t layers = 0;
};

// Takes --cpu-offload-gb from the decoder layers' weight rows (rows[i] for i in layer_rows), each
// in proportion to its bytes, and says in their formulas what left.
WeightOffload offload_layer_weights(const InferenceScenario& s, std::vector<Row>& rows,
                                    const std::vector<size_t>& layer_rows, int64_t layers,
                                    bool explain);

// The rows the weight offload adds: the pinned host copy and, for SGLang, the layer its forward
// copies back to the GPU.
std::vector<Row> weight_offload_rows(const InferenceScenario& s, const WeightOffload& w,
                                     bool explain);

// "more offload than the weights": the largest rank's decoder-layer weights bound
// --cpu-offload-gb.
std::optional<Error> check_offload_fits(const InferenceScenario& s, Wide largest_offloadable);

// The KV cache's tiers on one rank (the GPU pool first) and the host rows of the host pools.
void add_kv_tiers(const InferenceScenario& s, const InferenceRank& r,
                  const std::optional<Capacity>& capacity, Wide kv_cache, int64_t context,
                  bool explain, std::vector<Row>& rows, std::vector<KvTier>& tiers);

// What the user should know: swap space under vLLM V1, a host pool smaller than the GPU's.
void add_offload_warnings(const InferenceScenario& s, InferenceEstimate& e);

}  // namespace vramplan

// Weights one serving GPU holds, by module class, with the shape facts that quantisation scales
// need; and the KV cache one GPU keeps per token and per sequence.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/term.h"
#include "vramplan/model/params.h"
#include "vramplan/model/quantization.h"
#include "vramplan/serving/inference.h"

namespace vramplan {

// The decoder layers and the extra parts one pipeline rank holds.
struct ServingRank {
  std::vector<int64_t> layers;
  bool first = false;  // input embedding
  bool last = false;   // final norm, LM head, sampler
};

// vLLM's split (model_executor/models/utils.py get_pp_indices): L/pp layers each, the remainder
// given one by one to the ranks before the last (which holds the LM head).
std::vector<ServingRank> serving_ranks(int64_t num_layers, int64_t pp);

struct GpuWeights {
  std::array<LinearShape, 5> by_class{};  // indexed by ModuleClass
  Wide other = 0;                         // norms, biases, routers, sinks: base dtype
  Wide rotary = 0;                        // rotary cos/sin cache elements (a buffer)
  Wide vision = 0;  // vision tower + projector on the first rank, split over tp (vLLM's vision
                    // encoders use column/row-parallel linears); the model dtype
};

// Routed experts are split over max(tp, ep) GPUs: whole experts over ep ranks, each expert's
// FFN over the rest of tp (vLLM's EP spans tp·dp; SGLang's moe-tp is tp/ep).
GpuWeights gpu_weights(const InferenceScenario& s, const ParamCounts& counts,
                       const ServingRank& rank);

// KV heads one GPU holds: g/t, or 1 when t > g (vLLM replicates KV heads).
int64_t kv_heads_per_gpu(const ModelConfig& m, int64_t tp);

struct KvLayout {
  Wide per_token = 0;     // one token in every layer of the rank
  Wide per_sequence = 0;  // `context` tokens, sliding layers capped at the window, whole blocks
  std::string token_formula;
  std::string sequence_formula;
  // Mamba-2 and gated-DeltaNet layers keep a constant-size state per sequence instead of a KV
  // cache: the conv window and the SSM / recurrent state (vLLM MambaSpec). It shares the KV pool.
  Wide state_per_sequence = 0;
  std::string state_formula;
};
KvLayout kv_layout(const InferenceScenario& s, const ServingRank& rank, int64_t context,
                   bool explain);

// Bytes one token of one layer takes on one GPU.
Wide kv_bytes_per_layer_token(const InferenceScenario& s);

}  // namespace vramplan

// Exact parameter counts, as the framework instantiates them: tied embeddings once, no buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/model/model.h"

namespace vramplan {

// Parameters of one decoder layer, split by how tensor/expert parallelism shards them.
struct LayerParams {
  int64_t attention = 0;  // TP-sharded: q/k/v/o (or MLA) weights and their sharded biases
  int64_t attention_replicated = 0;  // TP-replicated: o bias, q/k norms, MLA latent norms, low-rank
                                     // down projections, attention sinks
  int64_t norms = 0;                 // the layer's own norms (replicated)
  // Mamba-2 or gated-DeltaNet mixer in place of attention: in/out projections (TP-sharded by
  // head) and ssm_small (conv1d, dt_bias, A_log, D, gated norm: sharded with the heads too).
  int64_t ssm = 0;
  int64_t ssm_small = 0;
  int64_t indexer = 0;  // DeepSeek-V3.2 lightning indexer (replicated, like MLA's down projections)
  int64_t mlp = 0;      // dense MLP, or the shared experts of an MoE layer (TP-sharded)
  int64_t router = 0;   // MoE router weights and biases (replicated)
  int64_t routed_experts = 0;         // all E routed experts (sharded by EP·expert-TP)
  int64_t active_routed_experts = 0;  // the top-k experts a token uses
  // Checkpoint tensors the model class registers as buffers, not parameters: DeepSeek-V3's
  // e_score_correction_bias (transformers' DeepSeek-V3 router: register_buffer). Part of the Hub
  // total; updated by the load balancer, not by gradients, so no gradient or optimizer state;
  // its E values per layer (a few KiB) are left out of the memory rows.
  int64_t buffers = 0;

  // The Hub total: every tensor of the checkpoint, buffers included.
  int64_t total() const {
    return attention + attention_replicated + norms + ssm + ssm_small + indexer + mlp + router +
           routed_experts + buffers;
  }
  // What the model class holds as parameters (model.parameters()).
  int64_t parameters() const { return total() - buffers; }
  int64_t dense() const { return total() - routed_experts; }  // everything but routed experts
};

struct ParamComponent {
  std::string name;  // "embedding", "attention", "mlp", "routed experts", "router", ...
  int64_t count = 0;
};

struct ParamCounts {
  int64_t embedding = 0;           // input token embedding V·h
  int64_t position_embedding = 0;  // learned positions (GPT-2), else 0
  int64_t lm_head = 0;             // output projection V·h; 0 when tied to the embedding
  int64_t final_norm = 0;
  std::vector<LayerParams> layers;  // one per decoder layer
  // Multi-token-prediction modules (DeepSeek-V3): trained, so they cost memory, but not part of
  // the Hub total. mtp_layer holds the transformer block of ONE module; mtp_extra the rest of one
  // module (its norms and eh projection; embedding and head are shared with the main model).
  LayerParams mtp_layer;
  int64_t mtp_extra = 0;
  int64_t mtp_total = 0;  // all MTP modules together

  int64_t vision = 0;   // vision tower and projector of a multimodal checkpoint (ModelConfig)
  int64_t total = 0;    // the Hub total: embedding + positions + lm_head + final norm + layers
                        // + vision
  int64_t buffers = 0;  // of which buffers, not parameters (LayerParams::buffers)
  int64_t active = 0;   // per token: total minus the routed experts a token does not use
                        // (includes the input embedding)
  std::vector<ParamComponent> breakdown;  // sums to total (MTP listed apart)
};

// REQUIRES: the config passed validation (validate_model returns no error).
ParamCounts count_parameters(const ModelConfig& model);

}  // namespace vramplan

// Model states on one GPU: weights, gradients, fp32 master weights and optimizer states, and how
// ZeRO, FSDP and Megatron's distributed optimizer shard them.
#pragma once

#include <algorithm>
#include <string>

#include "base/term.h"
#include "training/pipeline.h"
#include "vramplan/model/params.h"
#include "vramplan/training/scenario.h"

namespace vramplan {

// Parameters one GPU of a pipeline rank holds before ZeRO/FSDP sharding: TP shards matrices and
// the vocabulary, EP·expert-TP shard routed experts, norms and routers are replicated.
struct GpuParams {
  Wide dense = 0;          // everything but routed experts (incl. embedding/head if held)
  Wide expert = 0;         // routed experts
  Wide non_matrix = 0;     // embedding, LM head, norms, biases, routers (Muon runs Adam on them)
  Wide vectors = 0;        // of those, the 1-D norms (Adafactor keeps their second moment whole)
  Wide largest_unit = 0;   // largest FSDP/ZeRO-3 gather unit: one layer, the embedding or the head
  Wide largest_layer = 0;  // largest decoder layer
  Wide root = 0;           // embedding + final norm + LM head held by this rank
  Wide lookup_only = 0;    // of dense: an embedding table no linear uses (not the tied head)
  Wide mtp = 0;            // of dense+expert: multi-token-prediction modules (last rank)
  Wide last_chunk = 0;     // of dense+expert: the rank's last model chunk (all of it at vpp 1)
  // Gradient elements beyond the rank's shares above: the input embedding's whole V·h gradient
  // less its V/t·h shard (Conventions::tp_embedding_grad_whole; not where gradients are sharded).
  Wide whole_embedding_grad = 0;
};
GpuParams gpu_params(const Scenario& s, const ParamCounts& counts, const RankLayout& rank);

// Vocabulary-sized matrices (V/t·h each) the last stage holds beside the final norm: the LM head
// unless it is tied to an embedding on this same stage (Megatron keeps a tied copy on a last
// stage that is not also the first, in sync over the embedding group), plus, for multi-token
// prediction in an untied model, the embedding of the shifted tokens (Megatron GPTModel builds
// it when mtp_process).
// Conventions::tp_embedding_grad_whole: elements the embedding's gradient holds beyond the rank's
// V/t·h shard, where the rank holds an embedding table no linear on it uses.
inline Wide whole_embedding_grad_extra(const Conventions& c, const ModelConfig& m,
                                       const Parallelism& par, Wide padded_vocab,
                                       bool has_embedding, bool has_head) {
  if (!c.tp_embedding_grad_whole || par.tp <= 1 || !has_embedding) return 0;
  if (m.tied_embeddings && has_head) return 0;  // the tied head's sharded gradient takes it in
  return (padded_vocab - ceil_div(padded_vocab, par.tp)) * m.hidden;
}

inline Wide head_vocab_matrices(const ModelConfig& m, bool stage_has_embedding) {
  const bool head = !m.tied_embeddings || !stage_has_embedding;
  const bool mtp_embedding = m.mtp_layers > 0 && !m.tied_embeddings && !stage_has_embedding;
  return Wide{head} + Wide{mtp_embedding};
}

// Parameters a ZeRO-3/FSDP rank holds all-gathered: the unit in use and the prefetched ones,
// or, with a live-parameter budget (Conventions::zero3_live_params, > 0), up to that budget but
// never more than the rank's own unsharded parameters.
inline Wide gathered_params(Wide units, Wide live, Wide rank_params) {
  if (live <= 0) return units;
  return std::min(rank_params, std::max(units, live));
}

// The dtype the gradients row holds: Megatron's fp32 accumulation buffer, else the grad dtype.
inline DType gradient_dtype(const Training& t) {
  return t.fp32_grad_accumulation ? DType::kFp32 : t.grad_dtype;
}

// The dtype FSDP / ZeRO-3 all-gathers parameters in: a mixed-precision policy's compute dtype,
// else the stored one.
inline DType fsdp_gather_dtype(const Conventions& c, const Training& t) {
  return c.fsdp_mixed_precision ? t.activation_dtype : t.param_dtype;
}

// Parameters an FSDP / ZeRO-3 rank holds all-gathered at its forward/backward peak
// (docs/frameworks.md, "FSDP units"). reshard_after_forward=False (FSDP shard_grad_op): every
// unit stays gathered from its forward to its backward. Otherwise the unit in use and the
// prefetched ones (torchtitan and the harness also keep the last layer, whose backward runs
// first, gathered after forward: it is the one in use when the backward starts); with
// Conventions::fsdp_root_unit the root's embedding, final norm and LM head besides them, and
// the layers are the units. A live-parameter budget applies as in gathered_params.
inline Wide fsdp_gathered_params(const Conventions& c, const Parallelism& p, Wide largest_unit,
                                 Wide largest_layer, Wide root, Wide rank_params) {
  if (p.fsdp == FsdpMode::kShardGradOp) return rank_params;
  const Wide units = 1 + p.fsdp_prefetch;
  const bool root_unit = c.fsdp_root_unit && p.fsdp != FsdpMode::kNone;
  const Wide in_flight = root_unit ? root + units * largest_layer : units * largest_unit;
  return gathered_params(std::min(in_flight, rank_params), c.zero3_live_params, rank_params);
}

// Of fsdp_gathered_params, the prefetched layers that exist only inside a layer's backward. With
// Conventions::fsdp_root_unit the loss's backward runs in the root, whose pre-backward "prefetch"
// is the last layer, already gathered; the next layer is all-gathered from the last layer's
// pre-backward hook (FSDP2 FSDPParamGroup.pre_backward -> _backward_prefetch), once the root's
// backward has freed the logits. So these never coexist with the logits and loss
// (estimate_activations.cc hides them under the freed logits, as the unit gradients). 0 where
// every unit stays gathered, without the root unit, or with a live-parameter budget.
inline Wide fsdp_backward_prefetched_params(const Conventions& c, const Parallelism& p,
                                            Wide largest_layer, Wide root, Wide rank_params) {
  if (p.fsdp == FsdpMode::kShardGradOp || p.fsdp == FsdpMode::kNone ||
      p.fsdp == FsdpMode::kNoShard || !c.fsdp_root_unit || c.zero3_live_params > 0)
    return 0;
  const Wide all = std::min(root + (1 + p.fsdp_prefetch) * largest_layer, rank_params);
  return all - std::min(root + largest_layer, rank_params);
}

// Parameters whose all-gather output FSDP2 keeps through the loss's forward: in the forward
// each all-gather's flat output is kept until the next all-gather's copy-in, and the last one
// (the last layer's) until the root's post-forward (FSDPParamGroup.wait_for_unshard ->
// FSDPCommContext.all_gather_state, released by FSDPState._post_forward of the root). With
// Conventions::fsdp_root_unit and transformers' model code the loss runs inside the root's
// forward (ForCausalLM with labels), so that buffer, one layer in the compute dtype, is alive
// beside the forward's logits and loss. 0 otherwise (torchtitan computes the loss outside the
// model; a group of one rank keeps nothing; pipeline stages are not roots of the whole model).
inline Wide fsdp_retained_gather_params(const Conventions& c, const Parallelism& p,
                                        Wide largest_layer, Wide fsdp_group) {
  const bool sharded = p.fsdp == FsdpMode::kFullShard || p.fsdp == FsdpMode::kHybridShard ||
                       p.fsdp == FsdpMode::kShardGradOp;
  if (!sharded || !c.fsdp_root_unit || c.model_code != ModelCode::kTransformers ||
      fsdp_group <= 1 || p.pp > 1)
    return 0;
  return largest_layer;
}

// Parameters the first layer to run its backward has resharded by the unit gradients' moment
// (estimate_activations.cc fsdp_post_backward_freed): with reshard_after_forward=False every
// layer stays gathered to its backward, and FSDP resharded it after (FSDP2 post_backward:
// reshard_after_backward, on by default; FSDP1 SHARD_GRAD_OP likewise). Only with
// Conventions::fsdp_root_unit, where that first layer is the last decoder layer.
inline Wide fsdp_resharded_after_backward_params(const Conventions& c, const Parallelism& p,
                                                 Wide largest_layer) {
  return p.fsdp == FsdpMode::kShardGradOp && c.fsdp_root_unit ? largest_layer : 0;
}

// The unit whose unsharded gradients wait for their reduce-scatter while the activations are
// alive: the largest one. With Conventions::fsdp_root_unit the root's gradients are reduced by
// its post-backward at the very end of the backward, once the activations are freed, so the
// unit then is the largest layer.
inline Wide fsdp_gradient_unit(const Conventions& c, const Parallelism& p, Wide largest_unit,
                               Wide largest_layer, Wide /*root*/) {
  return c.fsdp_root_unit && p.fsdp != FsdpMode::kNone ? largest_layer : largest_unit;
}

// Over how many ranks each kind of state is sharded (1 = not sharded).
struct Sharding {
  Wide dense_group = 1;    // ranks sharing the dense parameters' states (dp·cp, or the FSDP group)
  Wide expert_group = 1;   // expert-data-parallel ranks: tp·cp·dp / (ep·etp)
  bool params = false;     // ZeRO-3, FSDP FULL_SHARD / SHARD_GRAD_OP / HYBRID_SHARD
  bool grads = false;      // ZeRO-2+, FSDP (except NO_SHARD)
  bool optimizer = false;  // ZeRO-1+, FSDP (except NO_SHARD), distributed optimizer
};
Sharding sharding_of(const Parallelism& par);

// Bytes of one optimizer's state for `params` parameters: `non_matrix` of them are not hidden
// matrices (Muon), `vectors` of them are 1-D (Adafactor factors every matrix, the embedding and
// LM head included).
Term optimizer_state_bytes(const Training& tr, Wide params, Wide non_matrix, Wide vectors,
                           Wide hidden, bool explain);

}  // namespace vramplan

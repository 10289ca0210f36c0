// Activation rows of one pipeline rank: stored layers, the recompute working set, stage outputs,
// the embedding, and the last stage's head, logits and loss.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "training/activations.h"
#include "training/estimate_parts.h"
#include "training/finetune/finetune_rows.h"
#include "training/multimodal/vision_activations.h"

namespace vramplan::estimate_parts {
namespace {

constexpr const char* kSourceActivations =
    "Korthikanti et al. 2022 (arXiv 2205.05198) §4, generalised to GQA/MLA/gated MLP/MoE; "
    "Mamba-2: mamba_ssm ops/triton/ssd_combined.py MambaSplitConv1dScanCombinedFn; gated "
    "DeltaNet: flash-linear-attention ops/gated_delta_rule/chunk.py";
constexpr const char* kSourceLogits =
    "Megatron-LM core/tensor_parallel/cross_entropy.py (fp32 vocab-parallel cross entropy)";
constexpr const char* kSourceRecompute =
    "Korthikanti et al. 2022 §5: full recompute keeps each layer's input";
constexpr const char* kSourceMathAttention =
    "PyTorch aten/src/ATen/native/transformers/attention.cpp (_scaled_dot_product_attention_math) "
    "and cuda/sdp_utils.cpp (the memory-efficient kernel takes no grouped-query heads); "
    "transformers integrations/sdpa_attention.py (use_gqa_in_sdpa)";
constexpr const char* kSourceUnitGradients =
    "PyTorch torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py (post_backward: "
    "reduce-scatter of the unit's unsharded gradients, then freed)";
constexpr const char* kSourceStageOutputs =
    "torch.distributed.pipelining / nanotron / DeepSpeed pipeline engines keep each sent "
    "activation until its backward (docs/frameworks.md)";

constexpr const char* kSourceBackwardTransient =
    "PyTorch torch/csrc/autograd/engine.cpp (a node's input gradient lives until it returns; "
    "release_variables after) and functions/accumulate_grad.h (a new gradient added in place to "
    "an existing .grad); transformers' MLP down_proj(act(gate_proj(x)) * up_proj(x))";
constexpr const char* kSourceActivationOffload =
    "torchtune training/_activation_offloading.py (OffloadActivations: saved tensors to pinned "
    "CPU memory in the forward, prefetched back in the backward); Megatron-LM fine-grained "
    "activation offloading (--fine-grained-activation-offloading)";

constexpr const char* kSourceLastOutputs =
    "torch.distributed.pipelining stage.py (PipelineStage.forward_one_chunk appends each "
    "microbatch's output to output_chunks; clear_runtime_states empties it at the next step)";

// The last stage's logits and loss at their peak: every in-flight microbatch's (and MTP head's)
// logits_and_loss, less the backward gradients all but one of them do not hold
// (loss_backward_transient).
Term head_loss(const Context& c, const RankLayout& rank) {
  Term t = logits_and_loss(c.s, c.explain);
  const Wide k = Wide{rank.in_flight_logits} * (1 + c.s.model.mtp_layers);
  const Wide transient = loss_backward_transient(c.s);
  t.bytes = t.bytes * k - (k - 1) * transient;
  if (c.explain && k > 1) {
    const std::string what =
        c.s.model.mtp_layers > 0
            ? fmt::format("{} microbatch(es) × (1 main + {} MTP) heads",
                          static_cast<int64_t>(rank.in_flight_logits), c.s.model.mtp_layers)
            : fmt::format("{} microbatches", static_cast<int64_t>(rank.in_flight_logits));
    t.formula = transient > 0 ? fmt::format("{} × ({}), the backward's gradients ({}) once", what,
                                            t.formula, short_bytes(transient))
                              : fmt::format("{} × ({})", what, t.formula);
  }
  return t;
}

constexpr const char* kSourceVision =
    "transformers' eager ViT layers (modeling_siglip, modeling_clip, modeling_pixtral, "
    "modeling_qwen2_5_vl, modeling_qwen3_vl, modeling_llama4, modeling_mllama) under "
    "Korthikanti et al. 2022 §4's accounting; the image sizing of each processor "
    "(docs/models.md, \"Images\")";
constexpr const char* kSourceCrossAttention =
    "transformers models/mllama/modeling_mllama.py (MllamaTextCrossAttention: k_proj/v_proj of "
    "cross_attention_states, k_norm, SDPA)";

// A per-microbatch term held for every microbatch in flight on the rank (as the embedding's).
Term in_flight(const Context& c, const RankLayout& rank, Term t) {
  const int64_t vpp = c.s.parallel.vpp;
  if (t.bytes == 0) return t;
  t.bytes = t.bytes * rank.in_flight_chunks / vpp;
  if (c.explain && rank.in_flight_chunks / vpp > 1)
    t.formula = fmt::format("{} in-flight microbatches × ({})",
                            static_cast<int64_t>(rank.in_flight_chunks / vpp), t.formula);
  return t;
}

struct LayerMix {
  int64_t dense = 0, moe = 0;  // layers stored in full
  int64_t recomputed = 0;      // layers keeping only their input
  int64_t masked = 0;          // of the stored ones, sliding-window layers given a mask
  // Hybrid models: the stored layers by kind (mixer, MLP), each kind's activations once.
  std::map<std::string, std::pair<int64_t, Term>> kinds;
  Wide hybrid_bytes = 0;
};

std::string kind_name(LayerMixer mixer, bool has_mlp, bool moe, bool mamba1) {
  const char* mixers[] = {"attention", "Mamba-2", "gated-DeltaNet", "", "cross-attention"};
  std::string name =
      mixer == LayerMixer::kMamba2 && mamba1 ? "Mamba-1" : mixers[static_cast<int>(mixer)];
  if (has_mlp) name += std::string(name.empty() ? "" : " + ") + (moe ? "MoE" : "MLP");
  return name + " layers";
}

void add_hybrid_layer(const Context& c, int64_t id, bool moe, LayerMix& mix) {
  const ModelConfig& m = c.s.model;
  const LayerMixer mixer = m.mixer(static_cast<size_t>(id));
  const bool has_mlp = m.has_mlp(static_cast<size_t>(id));
  auto [it, added] =
      mix.kinds.try_emplace(kind_name(mixer, has_mlp, moe, m.mamba.dt_rank > 0), 0, Term{});
  if (added) it->second.second = layer_activations(c.s, moe, c.explain, mixer, has_mlp);
  ++it->second.first;
  mix.hybrid_bytes += it->second.second.bytes;
}

LayerMix layer_mix(const Context& c, const RankLayout& rank) {
  LayerMix mix;
  const Training& tr = c.s.training;
  int64_t recomputed = 0;
  if (tr.recompute == Recompute::kFull) {
    recomputed =
        tr.recompute_layers == 0
            ? static_cast<int64_t>(rank.layers.size())
            : std::min<int64_t>(tr.recompute_layers * c.s.parallel.vpp, rank.layers.size());
  }
  mix.recomputed = recomputed;
  // Megatron's block method recomputes the first layers of each chunk; the rest are stored.
  for (size_t i = static_cast<size_t>(recomputed); i < rank.layers.size(); ++i) {
    const int64_t id = rank.layers[i];
    if (id < layers_without_backward(c.s)) continue;  // frozen, and no backward reaches it
    const bool moe = c.s.model.is_moe() && c.s.model.moe_layers[id];
    if (c.s.model.is_hybrid()) add_hybrid_layer(c, id, moe, mix);
    if (moe)
      ++mix.moe;
    else
      ++mix.dense;
    const std::vector<LayerAttention>& kinds = c.s.model.layer_attention;
    if (sliding_layers_masked(c.s) && static_cast<size_t>(id) < kinds.size() &&
        kinds[static_cast<size_t>(id)] == LayerAttention::kSliding)
      ++mix.masked;
  }
  return mix;
}

// Engines that keep what a stage sent (Conventions::pipeline_keeps_stage_outputs): one hidden
// state per in-flight chunk-microbatch whose output goes to another rank — every chunk except
// the last rank's final one, which feeds the LM head.
void add_stage_outputs(const Context& c, const RankLayout& rank, StageBuilder& out) {
  const int64_t vpp = c.s.parallel.vpp;
  if (!c.s.conventions.pipeline_keeps_stage_outputs || c.s.parallel.pp == 1) return;
  const Wide sent =
      rank.has_head ? Wide{rank.in_flight_chunks} * (vpp - 1) / vpp : Wide{rank.in_flight_chunks};
  Term t{sent * c.layer_input.bytes, ""};
  if (c.explain)
    t.formula = fmt::format("{} in-flight outputs × hidden state n·h·B/t_sp ({})",
                            static_cast<int64_t>(sent), short_bytes(c.layer_input.bytes));
  out.add("pipeline stage outputs", std::move(t), CountsToward::kAllocated, kSourceStageOutputs);
}

// FSDP2 keeps a unit's reduce-scatter input (reduce dtype) until the next unit's post-backward
// (FSDPCommContext.reduce_scatter_states, reduce_scatter_max_input_buffers = 1): the unit
// gradients row (compute-dtype gradients + reduce-dtype input) is whole in the second layer's
// backward, after the first layer to run its backward has freed its stored activations (the
// larger kind on the rank, or a recomputed layer's kept input). In the first layer's backward
// only the compute-dtype gradients exist, beside every activation. So the reduce-dtype part can
// hide under one layer's activations. None where the activations are offloaded or of hybrid
// kinds.
Wide fsdp_post_backward_freed(const Context& c, const LayerMix& mix) {
  if (c.s.parallel.fsdp == FsdpMode::kNone || c.s.offload.activations || c.s.model.is_hybrid())
    return 0;
  Wide stored = 0;
  if (mix.dense > 0) stored = std::max(stored, c.dense_layer.bytes);
  if (mix.moe > 0) stored = std::max(stored, c.moe_layer.bytes);
  if (stored == 0 && mix.recomputed > 0) stored = c.layer_input.bytes;
  return stored;
}

// The gathered bytes of the first layer to run its backward, resharded after it
// (model_states.h fsdp_resharded_after_backward_params).
Wide resharded_first_layer_bytes(const Context& c, const RankLayout& rank) {
  // Whether it applies does not depend on the layer's size: count the rank's only if it does.
  if (fsdp_resharded_after_backward_params(c.s.conventions, c.s.parallel, 1) == 0) return 0;
  const Wide layer = gpu_params(c.s, c.counts, rank).largest_layer;
  return ceil_div(layer * bits_of(fsdp_gather_dtype(c.s.conventions, c.s.training)), 8);
}

// The reduce-dtype part of the unit gradients row (estimate_states.cc add_gathered_params): the
// reduce-scatter input of a mixed-precision policy. Without one the row counts the gradients
// alone.
Wide reduce_scatter_input_part(const Context& c, Wide unit_row) {
  if (!c.s.conventions.fsdp_mixed_precision) return 0;
  const Training& tr = c.s.training;
  const Wide reduce = bytes_of(1, tr.reduce_dtype);
  return unit_row * reduce / (bytes_of(1, tr.activation_dtype) + reduce);
}

}  // namespace

void add_activations(const Context& c, const RankLayout& rank, StageBuilder& out) {
  const LayerMix mix = layer_mix(c, rank);
  const int64_t vpp = c.s.parallel.vpp;
  const Term masked = masked_layer_extra(c.s, c.explain);
  const bool hybrid = c.s.model.is_hybrid();
  const Wide stored =
      hybrid ? mix.hybrid_bytes
             : Wide{mix.dense} * c.dense_layer.bytes + Wide{mix.moe} * c.moe_layer.bytes;
  // LoRA: the first trained layer, stored in full on this rank, keeps less (activations.h).
  const int64_t first = layers_without_backward(c.s);
  bool holds_first = false;
  for (size_t i = static_cast<size_t>(mix.recomputed); i < rank.layers.size(); ++i)
    holds_first = holds_first || rank.layers[i] == first;
  const Term first_saving = holds_first ? first_trained_layer_saving(c.s, c.explain) : Term{};
  const Wide per_microbatch = stored + Wide{mix.recomputed} * c.layer_input.bytes +
                              Wide{mix.masked} * masked.bytes - first_saving.bytes;
  // The rank's layers at the peak, as a share of all it holds: in_flight_chunks / vpp with even
  // chunks; with uneven ones, what the interleaved order leaves alive (pipeline.h).
  // The last rank counts those alive when its loss runs, after a forward of its last chunk; the
  // moment with more alive holds no loss (below).
  const auto held = static_cast<int64_t>(rank.layers.size());
  const InFlightLayers& alive = rank.in_flight_layers;
  const int64_t counted = rank.has_head ? alive.at_last_chunk : alive.peak;
  const bool uneven = held > 0 && counted * vpp != rank.in_flight_chunks * held;
  Term acts{uneven ? per_microbatch * counted / held : per_microbatch * rank.in_flight_chunks / vpp,
            ""};
  const Wide more_alive_elsewhere =
      uneven && alive.peak > counted ? per_microbatch * alive.peak / held - acts.bytes : 0;
  if (c.explain) {
    std::string layers;
    auto part = [&](int64_t count, const Term& t, const char* kind) {
      if (count == 0) return;
      if (!layers.empty()) layers += " + ";
      layers += fmt::format("{} {} × {}", count, kind, short_bytes(t.bytes));
    };
    std::string per_layer =
        mix.moe > 0 && mix.dense == 0 ? c.moe_layer.formula : c.dense_layer.formula;
    if (hybrid) {
      per_layer.clear();
      for (const auto& [name, entry] : mix.kinds) {
        part(entry.first, entry.second, name.c_str());
        per_layer += (per_layer.empty() ? "" : "; ") + name + ": " + entry.second.formula;
      }
    } else {
      part(mix.dense, c.dense_layer, mix.moe > 0 ? "dense layers" : "layers");
      part(mix.moe, c.moe_layer, "MoE layers");
    }
    part(mix.recomputed, c.layer_input, "recomputed layers");
    part(mix.masked, masked, "masked sliding-window layers, extra");
    if (first_saving.bytes > 0)
      layers += fmt::format(" − first trained layer under LoRA {} ({})",
                            short_bytes(first_saving.bytes), first_saving.formula);
    if (uneven)
      acts.formula = fmt::format(
          "{} in-flight chunk-microbatches holding {} layer-microbatches (the rank's chunks hold "
          "unequal layers; the interleaved order) × ({}) / {} layers; per layer: {}",
          rank.in_flight_chunks, counted, layers, held, per_layer);
    else
      acts.formula = fmt::format("{} in-flight {} × ({}){}; per layer: {}", rank.in_flight_chunks,
                                 vpp > 1 ? "chunk-microbatches" : "microbatches", layers,
                                 vpp > 1 ? fmt::format(" / vpp {}", vpp) : "", per_layer);
  }
  if (c.s.offload.activations) {
    // Activation offloading (torchtune OffloadActivations, Megatron fine-grained activation
    // offloading): each layer's saved tensors are copied to pinned host memory as the forward
    // leaves it and brought back one layer ahead of the backward. The GPU holds two layers' worth
    // at a time: the layer computing and the one in transfer.
    Wide per_layer = 0;
    if (mix.dense > 0) per_layer = std::max(per_layer, c.dense_layer.bytes);
    if (mix.moe > 0) per_layer = std::max(per_layer, c.moe_layer.bytes);
    if (mix.recomputed > 0) per_layer = std::max(per_layer, c.layer_input.bytes);
    for (const auto& [name, entry] : mix.kinds)  // hybrid models: each layer kind's own bytes
      if (entry.first > 0) per_layer = std::max(per_layer, entry.second.bytes);
    const Wide kept = std::min(acts.bytes, 2 * per_layer);
    Term host{acts.bytes - kept, c.explain ? fmt::format("({}) - 2 layers kept on the GPU ({})",
                                                         acts.formula, short_bytes(kept))
                                           : ""};
    Term gpu{kept, c.explain ? fmt::format("2 layers × {} (the layer computing and the one in "
                                           "transfer)",
                                           short_bytes(per_layer))
                             : ""};
    out.add("activations", std::move(gpu), CountsToward::kAllocated, kSourceActivationOffload);
    out.add("activations (offloaded)", std::move(host), CountsToward::kHost,
            kSourceActivationOffload);
  } else {
    out.add("activations", std::move(acts), CountsToward::kAllocated, kSourceActivations);
  }

  // The logits and loss are freed before the layers' backward: what the backward's working sets
  // (recompute, the math kernel's scratch) take of that memory adds nothing allocated.
  Wide freed_loss = rank.has_head ? head_loss(c, rank).bytes : 0;
  // FSDP2's last forward all-gather output lives through the forward's loss, not its backward:
  // the loss moment is the larger of the two (add_head_terms takes the backward-only part off
  // the logits where the forward is larger). Either way it is gone by the layers' backward.
  if (const Wide kept = out.row_bytes_of(kRetainedGatherRow); kept > 0) {
    const Wide backward_only = rank.has_head ? loss_backward_only(c.s) : 0;
    if (kept <= backward_only) {
      out.shrink(kRetainedGatherRow, kept,
                 fmt::format("freed before the loss's backward, which holds more ({})",
                             short_bytes(backward_only)));
      out.add(kRetainedGatherReservedRow,
              Term{kept, c.explain ? "the kept all-gather output's segments" : ""},
              CountsToward::kReserved, kSourceRetainedGather);
    } else {
      freed_loss += kept - backward_only;
    }
  }
  // Interleaved chunks of unequal layers: the last rank's peak of alive layers comes after a
  // forward of an earlier chunk, with no loss computing; the loss's transients hide that much.
  if (more_alive_elsewhere > 0) {
    const Wide hidden = std::min(more_alive_elsewhere, freed_loss);
    freed_loss -= hidden;
    Term t{more_alive_elsewhere - hidden, ""};
    if (c.explain)
      t.formula = fmt::format(
          "{} layer-microbatches alive after a forward of an earlier chunk, {} more than at the "
          "loss ({}), less the loss's transients not alive then ({})",
          alive.peak, alive.peak - counted, short_bytes(more_alive_elsewhere), short_bytes(hidden));
    out.add(kEarlierChunkRow, std::move(t), CountsToward::kAllocated, kSourceActivations);
  }
  const Wide layer_freed = fsdp_post_backward_freed(c, mix);
  if (mix.recomputed > 0) {
    // Backward re-runs one layer forward at a time; its full activations are alive meanwhile.
    // On the last stage the loss's backward and the LM head's have run by then and freed the
    // logits: the two transients never coexist in allocated memory, so only what the working
    // set holds beyond the logits and loss adds to the allocated peak. The caching allocator
    // keeps the freed logits' segments reserved, though, and the layer's smaller tensors land
    // in new ones: the rest counts toward reserved memory.
    const Wide working = std::max(c.dense_layer.bytes, c.s.model.is_moe() ? c.moe_layer.bytes : 0);
    const Wide loss = freed_loss;
    const Wide hidden = std::min(working, loss);
    freed_loss -= hidden;
    Term t{working - hidden, ""};
    if (c.explain)
      t.formula = loss > 0 ? fmt::format(
                                 "one layer's full activations ({}), re-created during its "
                                 "backward, less the logits and loss ({}) freed before it",
                                 short_bytes(working), short_bytes(loss))
                           : "one layer's full activations, re-created during its backward";
    out.add("recompute working set", std::move(t), CountsToward::kAllocated, kSourceRecompute);
    Term pool{hidden, c.explain ? "the working set's part that the freed logits' reserved "
                                  "segments do not take"
                                : ""};
    out.add(kRecomputeReservedRow, std::move(pool), CountsToward::kReserved, kSourceRecompute);
  }
  // The gradients the rank's last layer holds as its backward starts (layer_backward_transient).
  // Its weights' .grad exist by then unless gradients are created lazily and this is the step's
  // only microbatch; FSDP2 hands a unit's unsharded gradients to its reduce-scatter and leaves
  // .grad empty after every backward. The logits freed before it hide what they can; the SDPA
  // math kernel's scratch comes later in the layer, once the MLP's tensors are freed, so the two
  // do not add.
  const Term scratch = math_attention_backward_scratch(c.s, c.explain);
  // What the transients took of the freed logits: the unit gradients' moment, beside the second
  // layer's backward, comes after them and has it back.
  Wide transient_hidden = 0;
  Wide transient_full = 0;  // the backward transient before the logits hide any of it
  if (layers_without_backward(c.s) < c.s.model.num_layers) {
    const bool grads_exist = c.s.parallel.fsdp == FsdpMode::kNone &&
                             (!c.s.conventions.lazy_gradients || c.microbatches > 1);
    const Term transient = layer_backward_transient(c.s, grads_exist, c.explain);
    transient_full = transient.bytes;
    const Wide beyond_scratch = std::max<Wide>(transient.bytes - scratch.bytes, 0);
    const Wide hidden = std::min(beyond_scratch, freed_loss);
    freed_loss -= hidden;
    transient_hidden = hidden;
    Term t{beyond_scratch - hidden, ""};
    if (c.explain && t.bytes > 0) {
      t.formula = transient.formula;
      if (scratch.bytes > 0)
        t.formula += fmt::format(", less the math kernel's scratch it never meets ({})",
                                 short_bytes(scratch.bytes));
      if (hidden > 0)
        t.formula +=
            fmt::format(", less the logits and loss freed before it ({})", short_bytes(hidden));
    }
    out.add(kBackwardTransientRow, std::move(t), CountsToward::kAllocated,
            kSourceBackwardTransient);
  }
  if (scratch.bytes > 0 && layers_without_backward(c.s) < c.s.model.num_layers) {
    const Wide hidden = std::min(scratch.bytes, freed_loss);
    Term t{scratch.bytes - hidden, c.explain && hidden > 0
                                       ? fmt::format("{}, less the logits and loss ({}) freed "
                                                     "before it",
                                                     scratch.formula, short_bytes(hidden))
                                       : scratch.formula};
    out.add(kMathScratchRow, std::move(t), CountsToward::kAllocated, kSourceMathAttention);
    freed_loss -= hidden;
  }
  // QLoRA dequantises one linear at a time inside a layer's forward or backward, never at the
  // loss, and not while the layer's first backward gradients are alive (the down projection's
  // dequantised weight comes before its input gradient): the larger of the two counts. Beside
  // the recompute working set (which took its share of the freed logits above), the logits hide
  // what they can of the rest.
  // Either way the caching allocator keeps the buffer's segments beside the others: what is
  // taken off counts toward reserved.
  Wide dequant_reserved = 0;
  if (transient_full > 0 && out.row_bytes_of(kDequantizedWeightRow) > 0)
    dequant_reserved +=
        out.shrink(kDequantizedWeightRow, transient_full,
                   fmt::format("less the layer backward's gradients ({}), never alive with it",
                               short_bytes(transient_full)));
  if (freed_loss > 0 && out.row_bytes_of(kDequantizedWeightRow) > 0) {
    const Wide hidden = out.shrink(
        kDequantizedWeightRow, freed_loss,
        fmt::format("less the logits and loss ({}) freed before it", short_bytes(freed_loss)));
    freed_loss -= hidden;
    dequant_reserved += hidden;
  }
  if (dequant_reserved > 0)
    out.add(kDequantReservedRow,
            Term{dequant_reserved, c.explain ? "the buffer's part alive at another moment than "
                                               "the peak's: its segments stay reserved"
                                             : ""},
            CountsToward::kReserved, kSourceRecompute);
  // With two layers on the rank the second one's backward prefetches nothing: the unit gradients'
  // moment (fsdp_post_backward_freed) holds no prefetched buffers either.
  const Wide prefetch_of_first =
      rank.layers.size() == 2 ? out.row_bytes_of(kPrefetchedRow) : Wide{0};
  // The layers FSDP prefetches in the backward (fsdp_backward_prefetched_params) are
  // all-gathered from the last layer's pre-backward, after the loss's backward has freed the
  // logits; what that memory takes of them is reserved, as for the recompute working set.
  if (freed_loss > 0) {
    const Wide hidden = out.shrink(
        kPrefetchedRow, freed_loss,
        fmt::format("less the logits and loss ({}) freed before them", short_bytes(freed_loss)));
    freed_loss -= hidden;
    Term pool{hidden, c.explain ? "the prefetched buffers' part that the freed logits' reserved "
                                  "segments do not take"
                                : ""};
    out.add(kPrefetchedReservedRow, std::move(pool), CountsToward::kReserved, kSourcePrefetch);
  }
  // FSDP creates a unit's unsharded gradients in that unit's backward and copies them into the
  // reduce-scatter input at its post-backward (FSDP2 foreach_reduce), once the loss's backward
  // has freed the logits; the input is whole beside the next layer's backward, once the first
  // layer's activations are freed (fsdp_post_backward_freed). What the freed memory takes of them
  // is reserved.
  // With lazily created gradients and one microbatch the forward/backward holds no sharded
  // gradients, but at that moment the first layer's (its reduce-scatter output) exist.
  const Wide reduce_part = reduce_scatter_input_part(c, out.row_bytes_of(kUnitGradientsRow));
  const Wide first_sharded = c.s.conventions.lazy_gradients && c.microbatches == 1
                                 ? ceil_div(reduce_part, c.sharding.dense_group)
                                 : 0;
  const Wide resharded = resharded_first_layer_bytes(c, rank);
  const Wide under_layer = std::min(
      std::max<Wide>(layer_freed + prefetch_of_first + resharded - first_sharded, 0), reduce_part);
  freed_loss += transient_hidden;
  if (c.s.parallel.fsdp != FsdpMode::kNone && freed_loss + under_layer > 0) {
    const Wide hidden = out.shrink(
        kUnitGradientsRow, freed_loss + under_layer,
        under_layer > 0
            ? fmt::format("less the logits and loss ({}) and what the first layer's backward "
                          "freed ({}: its activations, its gathered or prefetch buffers) before "
                          "them",
                          short_bytes(freed_loss), short_bytes(under_layer))
            : fmt::format("less the logits and loss ({}) freed before them",
                          short_bytes(freed_loss)));
    Term pool{hidden, c.explain ? "the unit gradients' part that the freed logits' and "
                                  "activations' reserved segments do not take"
                                : ""};
    out.add(kUnitGradientsReservedRow, std::move(pool), CountsToward::kReserved,
            kSourceUnitGradients);
  }
  add_stage_outputs(c, rank, out);
  if (rank.has_embedding) {
    Term emb = embedding_activations(c.s, c.explain);
    emb.bytes = emb.bytes * rank.in_flight_chunks / vpp;
    out.add("embedding activations", std::move(emb), CountsToward::kAllocated, kSourceActivations);
    out.add("vision encoder activations",
            in_flight(c, rank, vision_encoder_activations(c.s, c.explain)),
            CountsToward::kAllocated, kSourceVision);
  }
  int64_t cross_layers = 0;
  for (int64_t id : rank.layers)
    cross_layers += c.s.model.mixer(static_cast<size_t>(id)) == LayerMixer::kCrossAttention;
  out.add("cross-attention K/V of the image tokens",
          in_flight(c, rank, cross_attention_image_kv(c.s, cross_layers, c.explain)),
          CountsToward::kAllocated, kSourceCrossAttention);
}

void add_head_terms(const Context& c, const RankLayout& rank, StageBuilder& out) {
  if (!rank.has_head) return;
  const Wide mbs = rank.in_flight_logits;
  // Scales a per-microbatch term by `k`, saying what k counts.
  auto times = [&](Term t, Wide k, const std::string& what) {
    t.bytes *= k;
    if (c.explain && k > 1) t.formula = fmt::format("{} × ({})", what, t.formula);
    return t;
  };
  const std::string microbatches = fmt::format("{} microbatches", static_cast<int64_t>(mbs));
  out.add("final norm + LM head inputs", times(head_activations(c.s, c.explain), mbs, microbatches),
          CountsToward::kAllocated, kSourceActivations);
  const int64_t mtp = c.s.model.mtp_layers;
  out.add("logits + loss", head_loss(c, rank), CountsToward::kAllocated, kSourceLogits);
  // The forward's loss with FSDP2's kept all-gather output is the larger loss moment
  // (add_activations): the loss's backward-only part is not allocated then.
  if (out.row_bytes_of(kRetainedGatherRow) > 0) {
    const Wide backward_only = loss_backward_only(c.s);
    const Wide taken = out.shrink("logits + loss", backward_only,
                                  fmt::format("less the backward's part ({}): the forward's loss "
                                              "with the kept all-gather output is the peak",
                                              short_bytes(backward_only)));
    out.add(kLossBackwardReservedRow, Term{taken, c.explain ? "the loss's backward-only part" : ""},
            CountsToward::kReserved, kSourceLogits);
  }
  if (c.s.conventions.pipeline_keeps_last_outputs && c.s.parallel.pp > 1) {
    Term kept{Wide{c.microbatches} * last_stage_output_bytes(c.s), ""};
    if (c.explain)
      kept.formula =
          fmt::format("{} microbatches × logits {}·B ({})", static_cast<int64_t>(c.microbatches),
                      c.s.parallel.loss_parallel ? "n·⌈V/t⌉" : "n·V",
                      short_bytes(last_stage_output_bytes(c.s)));
    out.add(kKeptOutputsRow, std::move(kept), CountsToward::kAllocated, kSourceLastOutputs);
  }
  if (mtp > 0) {
    Term layer = c.s.model.is_moe() ? c.moe_layer : c.dense_layer;
    out.add("MTP activations",
            times(std::move(layer), mbs * mtp,
                  fmt::format("{} microbatch(es) × {} MTP layers", static_cast<int64_t>(mbs), mtp)),
            CountsToward::kAllocated, kSourceActivations);
  }
}

}  // namespace vramplan::estimate_parts

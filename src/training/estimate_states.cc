// Model-state rows of one pipeline rank: weights (fp8 casts too), gradients, framework copies,
// master weights, optimizer states, and the buffers FSDP / ZeRO-3 gather.
#include <fmt/format.h>

#include <string>

#include "training/activations.h"
#include "training/estimate_parts.h"
#include "training/framework_layouts.h"
#include "vramplan/model/precision.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::estimate_parts {
namespace {

constexpr const char* kSourceStates =
    "Rajbhandari et al. 2020, ZeRO (arXiv 1910.02054) §3; Megatron-LM distributed optimizer "
    "(docs/source/api-guide/dist_optimizer.md)";
constexpr const char* kSourceGather =
    "PyTorch FSDP (Zhao et al. 2023, arXiv 2304.11277) §3.3: unsharded unit + prefetch";
constexpr const char* kSourceGatherRoot =
    "PyTorch FSDP (Zhao et al. 2023, arXiv 2304.11277) §3.3: unsharded unit + prefetch; FSDP2 "
    "_fsdp_state.py FSDPState._lazy_init (the root is never resharded after forward)";
constexpr const char* kSourceDdpBuckets =
    "torch DDP gradient buckets without gradient_as_bucket_view (docs/frameworks.md)";
constexpr const char* kSourceAutocast =
    "torch.autocast weight-cast cache, kept until backward (docs/frameworks.md)";
constexpr const char* kSourceFp8Weights =
    "Transformer Engine Linear is_first_microbatch (fp8 weight casts cached across "
    "microbatches, row- and column-wise) and fp8_model_init (fp8 primary weights); docs/fp8.md";
constexpr const char* kSourceUnshardedStage =
    "torchtitan parallelize_llama.py apply_fsdp (reshard_after_forward=False with PP); "
    "torch.distributed.pipelining stage.py backward_maybe_with_nosync "
    "(set_requires_gradient_sync(False) until the last backward); FSDP2 fsdp_param.py "
    "to_accumulated_grad_if_needed (reduce-dtype accumulation)";

std::string sharded_text(Wide group, bool sharded) {
  return sharded && group > 1 ? fmt::format(" / {}", static_cast<int64_t>(group)) : "";
}

// Parameter counts this GPU keeps state for after sharding over `group` ranks.
struct Shard {
  Wide dense, expert;
  std::string text;  // "(dense 1,050,673,152 / 8 + experts ...)"
};

Shard shard_of(const GpuParams& g, const Sharding& sh, bool sharded, bool explain) {
  Shard out;
  const Wide dense_group = sharded ? sh.dense_group : 1;
  const Wide expert_group = sharded ? sh.expert_group : 1;
  out.dense = ceil_div(g.dense, dense_group);
  out.expert = ceil_div(g.expert, expert_group);
  if (explain) {
    out.text = fmt::format("{}{}", group_digits(g.dense), sharded_text(dense_group, sharded));
    if (g.expert > 0)
      out.text = fmt::format("({} dense + {}{} expert)", out.text, group_digits(g.expert),
                             sharded_text(expert_group, sharded));
  }
  return out;
}

Term bytes_per_param(Wide bytes_each_x8, const Shard& shard, const char* what, bool explain) {
  // bytes_each_x8 is bytes per parameter times 8, so 4-bit formats stay exact.
  Term t{ceil_div((shard.dense + shard.expert) * bytes_each_x8, 8), ""};
  if (explain)
    t.formula = fmt::format("{} B/param ({}) × {} params", static_cast<double>(bytes_each_x8) / 8,
                            what, shard.text);
  return t;
}

// Copies some frameworks keep beside the weights and gradients (Conventions, frameworks.h).
void add_framework_copies(const Context& c, const GpuParams& g, StageBuilder& out) {
  const Conventions& conv = c.s.conventions;
  const Training& tr = c.s.training;
  const Sharding& sh = c.sharding;
  const bool data_parallel = c.s.parallel.dp * c.s.parallel.cp > 1;
  if (conv.ddp_bucket_copy && data_parallel && !sh.grads && c.s.parallel.fsdp == FsdpMode::kNone) {
    const DType bucket = tr.fp32_grad_accumulation ? DType::kFp32 : tr.grad_dtype;
    out.add("DDP gradient buckets",
            bytes_per_param(bits_of(bucket), shard_of(g, sh, false, c.explain),
                            "bucket copy of each gradient", c.explain),
            CountsToward::kAllocated, kSourceDdpBuckets);
  }
  if (conv.autocast_weight_cache && tr.param_dtype != tr.activation_dtype)
    out.add("autocast weight copies",
            bytes_per_param(bits_of(tr.activation_dtype), shard_of(g, sh, sh.params, c.explain),
                            "cast copy kept for backward", c.explain),
            CountsToward::kAllocated, kSourceAutocast);
}

// Weights, and with fp8 training the casts Transformer Engine keeps of the decoder layers'
// linear weights (scenario_checks.cc: fp8 needs unsharded parameters). Non-fp8 weights: a row-wise
// and a column-wise (transposed) fp8 cast of each linear weight, cached across microbatches. fp8
// primary weights: the linear weights themselves are fp8, plus their column-wise copy.
void add_weights(const Context& c, const GpuParams& g, StageBuilder& out) {
  const Training& tr = c.s.training;
  const Sharding& sh = c.sharding;
  const Wide param_bits = bits_of(tr.param_dtype);
  const Wide linear = g.dense + g.expert - g.non_matrix;
  if (!tr.fp8_params) {
    out.add("weights",
            bytes_per_param(param_bits, shard_of(g, sh, sh.params, c.explain),
                            std::string(dtype_name(tr.param_dtype)).c_str(), c.explain),
            CountsToward::kAllocated, kSourceStates);
  } else {
    const Wide other = ceil_div(g.non_matrix * param_bits, 8);
    Term t{other + fp8_weight_bytes(linear, tr.fp8), ""};
    if (c.explain)
      t.formula =
          fmt::format("{} B/param ({}) × {} non-linear params + fp8 ({}) × {} linear params",
                      static_cast<double>(param_bits) / 8, dtype_name(tr.param_dtype),
                      group_digits(g.non_matrix), fp8_recipe_name(tr.fp8), group_digits(linear));
    out.add("weights", std::move(t), CountsToward::kAllocated, kSourceFp8Weights);
  }
  if (tr.fp8 == Fp8Recipe::kNone) return;
  const Wide copies = tr.fp8_params ? 1 : 2;
  Term cast{copies * fp8_weight_bytes(linear, tr.fp8), ""};
  if (c.explain)
    cast.formula = fmt::format(
        "{} × fp8 ({}) × {} linear params ({})", copies, fp8_recipe_name(tr.fp8),
        group_digits(linear),
        tr.fp8_params ? "column-wise copy of the fp8 weights" : "row- and column-wise casts");
  out.add("fp8 weight copies", std::move(cast), CountsToward::kAllocated, kSourceFp8Weights);
}

// Conventions::pipeline_fsdp_unsharded: the stage's parameters stay gathered in the compute
// dtype, and its gradients accumulate unsharded in the reduce dtype, beside the gradient of the
// unit being computed, until the last microbatch's backward. When a rank with virtual stages
// runs the backward chunk by chunk (backward_chunk_by_chunk), each chunk reduce-scatters before
// the next starts: only the rank's last chunk, the first to run backward while every
// activation is still alive, holds unsharded gradients at the peak.
void add_unsharded_stage(const Context& c, const GpuParams& g, StageBuilder& out) {
  const Training& tr = c.s.training;
  const Parallelism& par = c.s.parallel;
  const bool mixed = c.s.conventions.fsdp_mixed_precision;
  const Wide params = g.dense + g.expert;
  const bool chunk_by_chunk = backward_chunk_by_chunk(par, c.microbatches);
  const Wide grads = chunk_by_chunk ? g.last_chunk : params;
  const DType gather = mixed ? tr.activation_dtype : tr.param_dtype;
  const DType accumulate = mixed ? tr.reduce_dtype : tr.grad_dtype;
  const Wide compute_grad = bytes_of(1, mixed ? tr.activation_dtype : tr.grad_dtype);
  Term t{ceil_div(params * bits_of(gather), 8) + ceil_div(grads * bits_of(accumulate), 8) +
             compute_grad * g.largest_unit,
         ""};
  if (c.explain)
    t.formula = fmt::format(
        "{} params × {} B ({}) + {} × {} B accumulated gradients ({}) + {}·{} B gradient of the "
        "unit computing",
        group_digits(params), bytes_of(1, gather), dtype_name(gather),
        chunk_by_chunk ? fmt::format("last chunk {}", group_digits(grads)) : group_digits(grads),
        bytes_of(1, accumulate), dtype_name(accumulate), group_digits(g.largest_unit),
        static_cast<int64_t>(compute_grad));
  out.add(kUnshardedStageRow, std::move(t), CountsToward::kAllocated, kSourceUnshardedStage);
}

}  // namespace

// One unit being computed plus those prefetched are all-gathered in full (fsdp_gathered_params:
// with reshard_after_forward=False every unit, with Conventions::fsdp_root_unit the root's
// embedding and head besides), and one unit's unsharded gradients wait for their
// reduce-scatter. A
// mixed-precision policy gathers the compute-dtype cast and reduces a reduce-dtype copy of the
// compute-dtype gradients. With a live-parameter budget (DeepSpeed) up to that many stay gathered,
// never more than the rank holds.
void add_gathered_params(const Context& c, const GpuParams& g, bool gradients, StageBuilder& out) {
  const Training& tr = c.s.training;
  const Parallelism& par = c.s.parallel;
  const Conventions& conv = c.s.conventions;
  const bool mixed = conv.fsdp_mixed_precision;
  const Wide rank_params = g.dense + g.expert;
  const Wide gathered =
      fsdp_gathered_params(conv, par, g.largest_unit, g.largest_layer, g.root, rank_params);
  const Wide grad_unit =
      gradients ? fsdp_gradient_unit(conv, par, g.largest_unit, g.largest_layer, g.root) : 0;
  const Wide gather_bits = mixed ? bits_of(tr.activation_dtype) : bits_of(tr.param_dtype);
  const Wide grad_bytes = mixed ? bytes_of(1, tr.activation_dtype) + bytes_of(1, tr.reduce_dtype)
                                : bytes_of(1, tr.grad_dtype);
  Term gather{ceil_div(gathered * gather_bits, 8) + grad_bytes * grad_unit, ""};
  if (c.explain) {
    const Wide live = conv.zero3_live_params;
    std::string params;
    if (par.fsdp == FsdpMode::kShardGradOp)
      params = fmt::format("all {} (reshard_after_forward=False)", group_digits(rank_params));
    else if (conv.fsdp_root_unit && par.fsdp != FsdpMode::kNone)
      params = fmt::format("(root {} + (1 + prefetch {})·largest layer {})", group_digits(g.root),
                           par.fsdp_prefetch, group_digits(g.largest_layer));
    else
      params = fmt::format("(1 + prefetch {})·largest unit {}", par.fsdp_prefetch,
                           group_digits(g.largest_unit));
    if (live > 0)
      params = fmt::format("min(rank {}, max({}, live {}))", group_digits(rank_params), params,
                           group_digits(live));
    gather.formula =
        fmt::format("{}·{} B{} + {}·{} B gradients{} of one unit ({})", params,
                    static_cast<double>(gather_bits) / 8, mixed ? " (compute dtype)" : "",
                    group_digits(grad_unit), static_cast<int64_t>(grad_bytes),
                    mixed ? " (compute + reduce dtype)" : "",
                    conv.fsdp_root_unit && par.fsdp != FsdpMode::kNone ? "the largest layer"
                                                                       : "the largest unit");
  }
  const char* source = conv.fsdp_root_unit ? kSourceGatherRoot : kSourceGather;
  out.add(kGatheredRow, std::move(gather), CountsToward::kAllocated, source);
}

void add_model_states(const Context& c, const GpuParams& g, StageBuilder& out) {
  const Training& tr = c.s.training;
  const Sharding& sh = c.sharding;
  add_weights(c, g, out);

  const bool fp32_grads = tr.fp32_grad_accumulation;
  const DType grad_type = fp32_grads ? DType::kFp32 : tr.grad_dtype;
  std::string grad_what =
      fp32_grads ? "fp32 accumulation buffer" : std::string(dtype_name(grad_type));
  out.add("gradients",
          bytes_per_param(bits_of(grad_type), shard_of(g, sh, sh.grads, c.explain),
                          grad_what.c_str(), c.explain),
          CountsToward::kAllocated, kSourceStates);

  add_framework_copies(c, g, out);

  const Shard opt_shard = shard_of(g, sh, sh.optimizer, c.explain);
  if (tr.master_weights && tr.param_dtype != DType::kFp32)
    out.add("master weights", bytes_per_param(32, opt_shard, "fp32 copy", c.explain),
            CountsToward::kAllocated, kSourceStates);

  const Wide non_matrix = ceil_div(g.non_matrix, sh.optimizer ? sh.dense_group : 1);
  const Wide vectors = ceil_div(g.vectors, sh.optimizer ? sh.dense_group : 1);
  Term opt = optimizer_state_bytes(tr, opt_shard.dense + opt_shard.expert, non_matrix, vectors,
                                   c.s.model.hidden, c.explain);
  if (c.explain) opt.formula += fmt::format(", P = {}", opt_shard.text);
  out.add("optimizer states", std::move(opt), CountsToward::kAllocated, kSourceStates);

  if (keeps_stage_unsharded(c.s.conventions, c.s.parallel, sh.params)) {
    add_unsharded_stage(c, g, out);
  } else if (sh.params) {
    add_gathered_params(c, g, /*gradients=*/true, out);
  }
}

}  // namespace vramplan::estimate_parts

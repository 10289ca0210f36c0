// Model-state rows of one pipeline rank: weights (fp8 casts too), gradients, framework copies,
// master weights, optimizer states, and the buffers FSDP / ZeRO-3 gather.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

constexpr const char* kSourceZeroOffload =
    "DeepSpeed ZeRO-Offload (Ren et al. 2021, arXiv 2101.06840): fp32 master weights, Adam "
    "states and the fp32 gradient partition in pinned host memory; deepspeed/runtime/zero/"
    "stage_1_and_2.py (single_partition_of_fp32_groups on the CPU), stage3.py "
    "(fp32_partitioned_groups_flat); ZeRO-Infinity (arXiv 2104.07857) swaps them to NVMe";
constexpr const char* kSourceZeroStaging =
    "deepspeed/runtime/zero/stage_1_and_2.py (cpu_offload: temp_grad_buffer_for_gpu_offload and "
    "the pinned temp_grad_buffer_for_cpu_offload, largest_param_numel each); stage3.py "
    "(offload_optimizer: temp_grad_buffer_for_gpu_offload + temp_grad_gpu_buffer, "
    "largest_partitioned_param_numel each)";
constexpr const char* kSourceNvmeBuffers =
    "DeepSpeed offload_param (buffer_count 5 × buffer_size 1e8 pinned elements) and "
    "offload_optimizer nvme (buffer_count 4 swap buffers; deepspeed/runtime/swap_tensor/"
    "partitioned_optimizer_swapper.py), docs: deepspeed.ai/docs/config-json";
constexpr const char* kSourceFsdpOffload =
    "torch.distributed.fsdp CPUOffload(offload_params=True) / FSDP2 CPUOffloadPolicy: sharded "
    "parameters and gradients live on the CPU and the optimizer steps there";
constexpr const char* kSourceMegatronOffload =
    "Megatron-LM megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py "
    "(HybridDeviceOptimizer: --optimizer-offload-fraction of the parameters get a CPU fp32 copy, "
    "CPU gradients and a CPU Adam; the rest stay on the GPU)";

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

CountsToward toward_of(OffloadTier t) {
  return t == OffloadTier::kNvme ? CountsToward::kDisk : CountsToward::kHost;
}

// Splits an optimizer-side row by the offloaded fraction: the GPU keeps 1 - f of it, the host
// (or NVMe) f. Returns the part offloaded; `t` keeps the GPU part.
Term split_off(Term& t, double fraction, bool explain) {
  const Wide whole = t.bytes;
  const auto off =
      static_cast<Wide>(std::llround(static_cast<double>(whole) * fraction));  // f of the row
  Term moved{off, ""};
  t.bytes = whole - off;
  if (explain) {
    if (fraction < 1.0) {
      moved.formula = fmt::format("{} × ({})", fraction, t.formula);
      t.formula = fmt::format("{} × ({})", 1.0 - fraction, t.formula);
    } else {
      moved.formula = t.formula;
    }
  }
  return moved;
}

// The largest single parameter tensor one GPU holds (DeepSpeed's largest_param_numel): the
// vocabulary matrix V/t·h, a dense MLP matrix f/t·h or an expert's f_e·h.
Wide largest_param_tensor(const Scenario& s) {
  const ModelConfig& m = s.model;
  const Wide tp = s.parallel.tp;
  Wide largest = ceil_div(Wide{m.vocab} * m.hidden, tp);
  largest = std::max(largest, ceil_div(Wide{m.ffn} * m.hidden, tp));
  largest = std::max(largest, Wide{m.moe.expert_ffn} * m.hidden);
  return largest;
}

// Which framework's offload the scenario runs: DeepSpeed (zero), FSDP, or Megatron's
// distributed optimizer (scenario_checks.cc check_offload allows no other).
enum class OffloadKind { kZero, kFsdp, kMegatron };
OffloadKind offload_kind(const Parallelism& p) {
  if (p.zero > 0) return OffloadKind::kZero;
  if (p.fsdp != FsdpMode::kNone) return OffloadKind::kFsdp;
  return OffloadKind::kMegatron;
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
  if (conv.autocast_weight_cache && tr.param_dtype != tr.activation_dtype) {
    // Autocast casts the weights of the ops on its lower-precision list (linear, matmul): not an
    // embedding table looked up (F.embedding), not the norms' weights (multiplied), and not
    // transformers' stacked experts, whose grouped_mm is on no list and runs in fp32.
    GpuParams cast = g;
    cast.dense -= g.lookup_only + g.vectors;
    if (autocast_keeps_experts_in_param_dtype(c.s)) cast.expert = 0;
    out.add("autocast weight copies",
            bytes_per_param(bits_of(tr.activation_dtype), shard_of(cast, sh, sh.params, c.explain),
                            "cast copy of each linear weight, kept for backward", c.explain),
            CountsToward::kAllocated, kSourceAutocast);
  }
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
  const DType gather = fsdp_gather_dtype(c.s.conventions, tr);
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

// The staging buffers an offload keeps beside the states it moved (kSourceZeroStaging,
// kSourceNvmeBuffers). FSDP stages through its unsharded parameter buffers, Megatron through
// the gradient buffer it already has: neither adds one.
void add_offload_buffers(const Context& c, const GpuParams& g, StageBuilder& out) {
  const Offload& off = c.s.offload;
  const Training& tr = c.s.training;
  const Parallelism& par = c.s.parallel;
  if (offload_kind(par) != OffloadKind::kZero) return;
  const Wide grad_bytes = bytes_of(1, tr.grad_dtype);
  if (off.optimizer != OffloadTier::kNone) {
    const Wide largest = largest_param_tensor(c.s);
    if (par.zero == 3) {
      const Wide part = ceil_div(largest, c.sharding.dense_group);
      Term t{2 * part * grad_bytes, ""};
      if (c.explain)
        t.formula = fmt::format("2 buffers × ⌈{} / {}⌉ largest partitioned parameter × {} B",
                                group_digits(largest), static_cast<int64_t>(c.sharding.dense_group),
                                static_cast<int64_t>(grad_bytes));
      out.add("offload gradient staging", std::move(t), CountsToward::kAllocated,
              kSourceZeroStaging);
    } else {
      Term gpu{largest * grad_bytes, ""};
      Term host{largest * grad_bytes, ""};
      if (c.explain)
        gpu.formula = host.formula = fmt::format(
            "{} largest parameter × {} B", group_digits(largest), static_cast<int64_t>(grad_bytes));
      out.add("offload gradient staging", std::move(gpu), CountsToward::kAllocated,
              kSourceZeroStaging);
      out.add("offload gradient staging (pinned host)", std::move(host), CountsToward::kHost,
              kSourceZeroStaging);
    }
  }
  if (off.params == OffloadTier::kNvme) {
    // offload_param: buffer_count 5 × buffer_size 1e8 elements of the parameter dtype, pinned.
    constexpr Wide kParamBuffers = 5, kParamBufferElements = 100'000'000;
    Term t{kParamBuffers * kParamBufferElements * bytes_of(1, tr.param_dtype), ""};
    if (c.explain)
      t.formula = fmt::format("buffer_count 5 × buffer_size 1e8 × {} B",
                              static_cast<int64_t>(bytes_of(1, tr.param_dtype)));
    out.add("NVMe parameter swap buffers (pinned host)", std::move(t), CountsToward::kHost,
            kSourceNvmeBuffers);
  }
  if (off.optimizer == OffloadTier::kNvme) {
    // offload_optimizer nvme: buffer_count 4 swap buffers, each one sub-group's fp32 parameters
    // (sub_group_size 1e9 elements, at most the rank's partition).
    constexpr Wide kOptBuffers = 4, kSubGroup = 1'000'000'000;
    const Wide part = ceil_div(g.dense + g.expert, c.sharding.dense_group);
    const Wide elements = std::min(kSubGroup, part);
    Term t{kOptBuffers * elements * 4, ""};
    if (c.explain)
      t.formula = fmt::format("buffer_count 4 × min(sub_group_size 1e9, partition {}) × 4 B",
                              group_digits(part));
    out.add("NVMe optimizer swap buffers (pinned host)", std::move(t), CountsToward::kHost,
            kSourceNvmeBuffers);
  }
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
  const Wide prefetched =
      fsdp_backward_prefetched_params(conv, par, g.largest_layer, g.root, rank_params);
  const Wide retained =
      fsdp_retained_gather_params(conv, par, g.largest_layer, c.sharding.dense_group);
  const Wide grad_unit =
      gradients ? fsdp_gradient_unit(conv, par, g.largest_unit, g.largest_layer, g.root) : 0;
  const Wide gather_bits = bits_of(fsdp_gather_dtype(conv, tr));
  const Wide grad_bytes = mixed ? bytes_of(1, tr.activation_dtype) + bytes_of(1, tr.reduce_dtype)
                                : bytes_of(1, tr.grad_dtype);
  Term gather{ceil_div((gathered - prefetched) * gather_bits, 8), ""};
  Term ahead{ceil_div(prefetched * gather_bits, 8), ""};
  Term kept{ceil_div(retained * gather_bits, 8), ""};
  Term unit_grads{grad_bytes * grad_unit, ""};
  if (c.explain) {
    const Wide live = conv.zero3_live_params;
    std::string params;
    if (par.fsdp == FsdpMode::kShardGradOp)
      params = fmt::format("all {} (reshard_after_forward=False)", group_digits(rank_params));
    else if (prefetched > 0)
      params = fmt::format("(root {} + the layer in use {})", group_digits(g.root),
                           group_digits(g.largest_layer));
    else if (conv.fsdp_root_unit && par.fsdp != FsdpMode::kNone)
      params = fmt::format("(root {} + (1 + prefetch {})·largest layer {})", group_digits(g.root),
                           par.fsdp_prefetch, group_digits(g.largest_layer));
    else
      params = fmt::format("(1 + prefetch {})·largest unit {}", par.fsdp_prefetch,
                           group_digits(g.largest_unit));
    if (live > 0)
      params = fmt::format("min(rank {}, max({}, live {}))", group_digits(rank_params), params,
                           group_digits(live));
    gather.formula = fmt::format("{}·{} B{}", params, static_cast<double>(gather_bits) / 8,
                                 mixed ? " (compute dtype)" : "");
    kept.formula = fmt::format(
        "the last layer's flat all-gather output {}·{} B, kept to the "
        "root's post-forward",
        group_digits(g.largest_layer), static_cast<double>(gather_bits) / 8);
    ahead.formula = fmt::format(
        "prefetch {}·largest layer {}·{} B{}, all-gathered from the "
        "next layer's pre-backward",
        par.fsdp_prefetch, group_digits(g.largest_layer), static_cast<double>(gather_bits) / 8,
        mixed ? " (compute dtype)" : "");
    unit_grads.formula = fmt::format(
        "{}·{} B gradients{} of one unit ({}) until its reduce-scatter", group_digits(grad_unit),
        static_cast<int64_t>(grad_bytes), mixed ? " (compute + reduce dtype)" : "",
        conv.fsdp_root_unit && par.fsdp != FsdpMode::kNone ? "the largest layer"
                                                           : "the largest unit");
  }
  const char* source = conv.fsdp_root_unit ? kSourceGatherRoot : kSourceGather;
  out.add(kGatheredRow, std::move(gather), CountsToward::kAllocated, source);
  out.add(kPrefetchedRow, std::move(ahead), CountsToward::kAllocated, kSourcePrefetch);
  out.add(kRetainedGatherRow, std::move(kept), CountsToward::kAllocated, kSourceRetainedGather);
  out.add(kUnitGradientsRow, std::move(unit_grads), CountsToward::kAllocated, source);
}

void add_rope_cache(const Context& c, int64_t stage_layers, StageBuilder& out) {
  const ModelConfig& m = c.s.model;
  if (c.s.conventions.model_code != ModelCode::kTorchtune || stage_layers == 0 ||
      m.max_position_embeddings <= 0 || m.head_dim <= 0)
    return;
  // build_rope_cache: cos and sin (max_seq_len, d/2, 2) and theta (d/2), fp32; Qwen2's and
  // Phi-3's modules concatenate cos and sin of the duplicated frequencies, (max_seq_len, 2d).
  const std::string& type = m.model_type;
  const Wide width = (type == "qwen2" || type == "phi3") ? 2 : 1;
  // The full builders, and Llama 3.1 / 3.2's LoRA builders, share one module; the LoRA
  // builders' lora_<family>_self_attention of Qwen2, Mistral, Phi-3 and Gemma build one per layer.
  const bool per_layer = c.s.finetune.method != FinetuneMethod::kNone &&
                         (type == "qwen2" || type == "mistral" || type == "phi3" ||
                          type == "gemma" || type == "gemma2");
  const Wide modules = per_layer ? stage_layers : 1;
  const Wide positions = m.max_position_embeddings, d = m.head_dim;
  Term t{modules * (positions * d * 4 * width + d / 2 * 4), ""};
  if (c.explain)
    t.formula = fmt::format(
        "{} module{} × (max positions·{}d·4 + d/2·4) = {} × ({}·{}·{}·4 + {}·4) (fp32 cos and "
        "sin{})",
        static_cast<int64_t>(modules), modules == 1 ? "" : "s", width == 2 ? "2" : "",
        static_cast<int64_t>(modules), group_digits(positions), static_cast<int64_t>(width),
        static_cast<int64_t>(d), static_cast<int64_t>(d / 2),
        per_layer ? "; the LoRA builder makes one per layer" : "; one shared by the layers");
  out.add(kRopeCacheRow, std::move(t), CountsToward::kAllocated,
          "torchtune 0.6 modules/position_embeddings.py RotaryPositionalEmbeddings."
          "build_rope_cache (Llama3ScaledRoPE alike; models/qwen2, phi3: cat of cos and sin); "
          "models/<family>/_component_builders.py: one module per model, or per layer in "
          "lora_<family>_self_attention");
}

void add_model_states(const Context& c, const GpuParams& g, StageBuilder& out) {
  const Training& tr = c.s.training;
  const Sharding& sh = c.sharding;
  const Offload& off = c.s.offload;
  const OffloadKind kind = offload_kind(c.s.parallel);
  const bool opt_off = off.optimizer != OffloadTier::kNone;
  const bool params_off = off.params != OffloadTier::kNone;
  const double f = off.optimizer_fraction;
  if (params_off) {
    // The parameter shard lives off the GPU; the GPU gathers each unit from it (the unsharded
    // parameter buffers below).
    Term w = bytes_per_param(bits_of(tr.param_dtype), shard_of(g, sh, true, c.explain),
                             std::string(dtype_name(tr.param_dtype)).c_str(), c.explain);
    out.add("weights (offloaded)", std::move(w), toward_of(off.params),
            kind == OffloadKind::kFsdp ? kSourceFsdpOffload : kSourceZeroOffload);
  } else {
    add_weights(c, g, out);
  }

  const bool fp32_grads = tr.fp32_grad_accumulation;
  const DType grad_type = fp32_grads ? DType::kFp32 : tr.grad_dtype;
  std::string grad_what =
      fp32_grads ? "fp32 accumulation buffer" : std::string(dtype_name(grad_type));
  Shard grad_shard = shard_of(g, sh, sh.grads, c.explain);
  if (!sh.grads && g.whole_embedding_grad > 0) {  // Conventions::tp_embedding_grad_whole
    grad_shard.dense += g.whole_embedding_grad;
    if (c.explain)
      grad_shard.text = fmt::format(
          "({} + {} of the input embedding's gradient, whole V·h on each "
          "TP rank: DTensor)",
          grad_shard.text, group_digits(g.whole_embedding_grad));
  }
  Term grads = bytes_per_param(bits_of(grad_type), grad_shard, grad_what.c_str(), c.explain);
  if (opt_off && kind == OffloadKind::kFsdp) {
    // FSDP CPU offload: the sharded gradients are copied to the CPU after the reduce-scatter.
    out.add("gradients (offloaded)", std::move(grads), CountsToward::kHost, kSourceFsdpOffload);
  } else if (opt_off && kind == OffloadKind::kZero && c.s.parallel.zero >= 2) {
    // ZeRO-2/3 offload: each reduced gradient partition goes straight to the host's fp32
    // partition (below); the GPU keeps only the (1 - ratio) share ZeRO-3 steps on the GPU.
    split_off(grads, f, c.explain);  // that share is the host fp32 copy added below
    out.add("gradients", std::move(grads), CountsToward::kAllocated, kSourceStates);
  } else {
    out.add("gradients", std::move(grads), CountsToward::kAllocated, kSourceStates);
  }

  add_framework_copies(c, g, out);

  const Shard opt_shard = shard_of(g, sh, sh.optimizer, c.explain);
  const char* off_source = kind == OffloadKind::kFsdp       ? kSourceFsdpOffload
                           : kind == OffloadKind::kMegatron ? kSourceMegatronOffload
                                                            : kSourceZeroOffload;
  // The fp32 master copy (parameters below fp32) moves with the optimizer that steps it.
  if (keeps_master_weights(tr)) {
    Term master = bytes_per_param(32, opt_shard, "fp32 copy", c.explain);
    if (opt_off) {
      Term moved = split_off(master, f, c.explain);
      out.add("master weights (offloaded)", std::move(moved), toward_of(off.optimizer), off_source);
    }
    out.add("master weights", std::move(master), CountsToward::kAllocated, kSourceStates);
  }
  if (opt_off && kind != OffloadKind::kFsdp) {
    // The fp32 gradients the CPU optimizer reads: DeepSpeed's fp32 gradient partition,
    // Megatron's CPU copies of the offloaded parameters' main_grad. With NVMe optimizer
    // swapping, DeepSpeed keeps them in host memory too.
    Term host_grads = bytes_per_param(32, opt_shard, "fp32 gradients for the CPU step", c.explain);
    Term moved = split_off(host_grads, f, c.explain);
    out.add("gradients (host fp32 copy)", std::move(moved), CountsToward::kHost, off_source);
  }

  const Wide non_matrix = ceil_div(g.non_matrix, sh.optimizer ? sh.dense_group : 1);
  const Wide vectors = ceil_div(g.vectors, sh.optimizer ? sh.dense_group : 1);
  Term opt = optimizer_state_bytes(tr, opt_shard.dense + opt_shard.expert, non_matrix, vectors,
                                   c.s.model.hidden, c.explain);
  if (c.explain) opt.formula += fmt::format(", P = {}", opt_shard.text);
  if (opt_off) {
    Term moved = split_off(opt, f, c.explain);
    out.add("optimizer states (offloaded)", std::move(moved), toward_of(off.optimizer), off_source);
  }
  out.add("optimizer states", std::move(opt), CountsToward::kAllocated, kSourceStates);
  add_offload_buffers(c, g, out);

  if (keeps_stage_unsharded(c.s.conventions, c.s.parallel, sh.params)) {
    add_unsharded_stage(c, g, out);
  } else if (sh.params) {
    add_gathered_params(c, g, /*gradients=*/true, out);
  }
}

}  // namespace vramplan::estimate_parts

#include "vramplan/estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/activations.h"
#include "core/finetune_rows.h"
#include "core/framework_layouts.h"
#include "core/model_states.h"
#include "core/pipeline.h"
#include "core/term.h"
#include "core/validate.h"
#include "vramplan/frameworks.h"
#include "vramplan/precision.h"
#include "vramplan/uncertainty.h"

namespace vramplan {
namespace {

constexpr const char* kSourceStates =
    "Rajbhandari et al. 2020, ZeRO (arXiv 1910.02054) §3; Megatron-LM distributed optimizer "
    "(docs/source/api-guide/dist_optimizer.md)";
constexpr const char* kSourceGather =
    "PyTorch FSDP (Zhao et al. 2023, arXiv 2304.11277) §3.3: unsharded unit + prefetch";
constexpr const char* kSourceActivations =
    "Korthikanti et al. 2022 (arXiv 2205.05198) §4, generalised to GQA/MLA/gated MLP/MoE";
constexpr const char* kSourceSchedule =
    "Megatron-LM core/pipeline_parallel/schedules.py (warm-up microbatches per rank)";
constexpr const char* kSourceLogits =
    "Megatron-LM core/tensor_parallel/cross_entropy.py (fp32 vocab-parallel cross entropy)";
constexpr const char* kSourceRecompute =
    "Korthikanti et al. 2022 §5: full recompute keeps each layer's input";
constexpr const char* kSourceWorkspace =
    "PyTorch aten/src/ATen/cuda/CublasHandlePool.cpp (cuBLAS and cuBLASLt workspaces, 32 MiB "
    "each on Hopper); Transformer Engine adds 32 MiB of its own";
constexpr const char* kSourceGroupedWorkspace =
    "PyTorch aten/src/ATen/cuda/CublasHandlePool.cpp (cuBLAS and cuBLASLt workspaces); "
    "Transformer Engine transformer_engine/pytorch/module/base.py (get_workspace, and "
    "get_multi_stream_cublas_workspace for GroupedLinear: one per stream)";
constexpr const char* kSourceAllgatherBuffer =
    "nanotron parallel/tensor_parallel/functional.py (column_linear with tp_recompute_allgather) "
    "and parallel/utils.py (MemoryBuffer: grows, never freed)";
constexpr const char* kSourceScoresBuffer =
    "Megatron-LM megatron/core/transformer/dot_product_attention.py (local attention: baddbmm "
    "into get_global_memory_buffer().get_tensor(..., \"mpu\")) and megatron/core/utils.py "
    "(GlobalMemoryBuffer: grows, never freed)";
constexpr const char* kSourceGradCopy =
    "Megatron-LM megatron/core/optimizer/optimizer.py _copy_model_grads_to_main_grads "
    "(main_param.grad = main_grad.float(); distrib_optimizer.py: the rank's shard), freed by "
    "the next step's zero_grad";
constexpr const char* kSourceDdpBuckets =
    "torch DDP gradient buckets without gradient_as_bucket_view (docs/frameworks.md)";
constexpr const char* kSourceAutocast =
    "torch.autocast weight-cast cache, kept until backward (docs/frameworks.md)";
constexpr const char* kSourceBuckets =
    "DeepSpeed ZeRO reduce_bucket_size / allgather_bucket_size (docs/frameworks.md)";
constexpr const char* kSourceOptimizerStep =
    "torch.optim foreach Adam/AdamW (_multi_tensor_adam: sqrt of the second moment)";
constexpr const char* kSourceStageOutputs =
    "torch.distributed.pipelining / nanotron / DeepSpeed pipeline engines keep each sent "
    "activation until its backward (docs/frameworks.md)";
constexpr const char* kSourceFp8Weights =
    "Transformer Engine Linear is_first_microbatch (fp8 weight casts cached across "
    "microbatches, row- and column-wise) and fp8_model_init (fp8 primary weights); docs/fp8.md";
constexpr const char* kSourceCudaGraphs =
    "NeMo docs/source/features/optimizations/cudagraphs.md (Megatron CudaGraphManager): per-layer "
    "graphs keep forward temporaries, ~20% more activation memory";
constexpr const char* kSourceUnshardedStage =
    "torchtitan parallelize_llama.py apply_fsdp (reshard_after_forward=False with PP); "
    "torch.distributed.pipelining stage.py backward_maybe_with_nosync "
    "(set_requires_gradient_sync(False) until the last backward); FSDP2 fsdp_param.py "
    "to_accumulated_grad_if_needed (reduce-dtype accumulation)";
constexpr const char* kUnshardedStageRow = "unsharded params + grads";
constexpr const char* kSourceContext = "CUDA context and kernels (FORMULAS.md §5: 0.3–1.3 GiB)";
constexpr const char* kSourceNccl =
    "Fujii et al. 2024 (arXiv 2411.06465): ~0.5 GB of NCCL buffers per parallel dimension";
constexpr const char* kSourceAllocator =
    "PyTorch caching allocator: reserved above allocated (torchtitan measured 20–36%)";

// Collects one pipeline rank's rows.
class StageBuilder {
 public:
  StageBuilder(StageEstimate& stage, bool explain) : stage_(stage), explain_(explain) {}

  void add(const char* component, Term term, CountsToward toward, const char* source) {
    total_ += std::min(term.bytes, kMaxBytes);
    if (term.bytes > kMaxBytes || total_ > kMaxBytes) overflow_ = true;
    if (term.bytes <= 0 || overflow_) return;
    stage_.rows.push_back(Row{component, static_cast<int64_t>(std::min(term.bytes, kMaxBytes)),
                              toward, std::move(term.formula), explain_ ? source : ""});
  }
  bool overflow() const { return overflow_; }

 private:
  StageEstimate& stage_;
  bool explain_;
  Wide total_ = 0;  // all rows so far; an overflow is reported before any int64 sum is taken
  bool overflow_ = false;
};

// Everything computed once per scenario and shared by all ranks.
struct Context {
  const Scenario& s;
  const ParamCounts& counts;
  Sharding sharding;
  Term dense_layer;  // activations of one dense layer, one microbatch
  Term moe_layer;    // ... of one MoE layer
  Term layer_input;  // what a fully recomputed layer keeps
  int64_t microbatches;
  bool explain;
};

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

bool is_activation_row(const Row& r) {
  static constexpr std::string_view kActivationRows[] = {
      "activations",           "recompute working set",
      "embedding activations", "final norm + LM head inputs",
      "logits + loss",         "MTP activations",
      "adapter activations",   "pipeline stage outputs"};
  for (std::string_view name : kActivationRows)
    if (r.component == name) return true;
  return false;
}

int64_t row_bytes(const StageEstimate& stage, std::string_view component) {
  for (const Row& r : stage.rows)
    if (r.component == component) return r.bytes;
  return 0;
}

struct PhaseTotals {
  int64_t forward_backward = 0, optimizer_step = 0, first_step = 0;  // tensors only
  int64_t layer_activations = 0;  // the "activations" row, whatever phase peaks
};

// Picks the phase with the most allocated tensors and leaves in stage.rows what is alive then.
// torch's foreach Adam (torch/optim/adam.py _multi_tensor_adam) materialises sqrt(v) for every
// parameter it updates: one state-sized temporary; fused implementations keep none.
// With lazily allocated gradients and one microbatch per step, no gradient exists yet when the
// activations peak at the start of the backward; the backward then frees activations as it
// creates gradients, so both are counted in full only at the optimizer step.
PhaseTotals settle_peak_phase(const Context& c, int64_t microbatches, StageEstimate& stage,
                              StageBuilder& out) {
  PhaseTotals t;
  int64_t activations = 0;
  for (const Row& r : stage.rows) {
    t.forward_backward += r.bytes;
    if (is_activation_row(r)) activations += r.bytes;
  }
  t.layer_activations = row_bytes(stage, "activations");
  const int64_t all_tensors = t.forward_backward;
  // A stage kept unsharded (add_unsharded_stage) creates its sharded gradients only with the
  // reduce-scatter after the last backward, and frees its gathered parameters and unsharded
  // gradients there: the former are absent from the forward/backward, the latter from the step.
  const bool unsharded_stage =
      keeps_stage_unsharded(c.s.conventions, c.s.parallel, c.sharding.params);
  const bool grads_absent =
      c.s.conventions.lazy_gradients && (microbatches == 1 || unsharded_stage);
  if (grads_absent) t.forward_backward -= row_bytes(stage, "gradients");
  const bool adam = c.s.training.optimizer == Optimizer::kAdamW;
  const int64_t temporaries = c.s.conventions.optimizer_foreach_temporaries && adam
                                  ? row_bytes(stage, "optimizer states") / 2
                                  : 0;
  const int64_t grad_copy = has_fp32_grad_copy(c.s) ? row_bytes(stage, "master weights") : 0;
  t.optimizer_step =
      all_tensors - activations - row_bytes(stage, kUnshardedStageRow) + temporaries + grad_copy;
  t.first_step = t.forward_backward - row_bytes(stage, "optimizer states");
  stage.peak_phase = "forward/backward";
  if (t.optimizer_step <= t.forward_backward && grads_absent) {
    std::erase_if(stage.rows, [](const Row& r) { return r.component == "gradients"; });
  }
  if (t.optimizer_step > t.forward_backward) {
    std::erase_if(stage.rows, [](const Row& r) {
      return is_activation_row(r) || r.component == kUnshardedStageRow;
    });
    Term temp{temporaries, c.explain
                               ? fmt::format("Adam's sqrt(v) copy: optimizer states {} / 2",
                                             short_bytes(row_bytes(stage, "optimizer states")))
                               : ""};
    out.add("optimizer step temporaries", std::move(temp), CountsToward::kAllocated,
            kSourceOptimizerStep);
    Term copy{grad_copy, c.explain ? fmt::format("4 B × {} parameters the rank updates",
                                                 group_digits(grad_copy / 4))
                                   : ""};
    if (grad_copy > 0)
      out.add("fp32 gradient copy", std::move(copy), CountsToward::kAllocated, kSourceGradCopy);
    stage.peak_phase = "optimizer step";
  }
  return t;
}

// Phase totals as allocated bytes: tensors plus what every phase shares (workspaces, buckets).
void record_phases(const PhaseTotals& t, size_t first_shared_row, StageEstimate& stage) {
  int64_t shared = 0;
  for (size_t i = first_shared_row; i < stage.rows.size(); ++i)
    if (stage.rows[i].counts_toward == CountsToward::kAllocated) shared += stage.rows[i].bytes;
  stage.phases = {{"forward/backward", t.forward_backward + shared},
                  {"optimizer step", t.optimizer_step + shared},
                  {"first step forward/backward", t.first_step + shared}};
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
// linear weights (validate.cc: fp8 needs unsharded parameters). Non-fp8 weights: a row-wise and
// a column-wise (transposed) fp8 cast of each linear weight, cached across microbatches. fp8
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
  Term opt = optimizer_state_bytes(tr, opt_shard.dense + opt_shard.expert, non_matrix,
                                   c.s.model.hidden, c.explain);
  if (c.explain) opt.formula += fmt::format(", P = {}", opt_shard.text);
  out.add("optimizer states", std::move(opt), CountsToward::kAllocated, kSourceStates);

  if (keeps_stage_unsharded(c.s.conventions, c.s.parallel, sh.params)) {
    add_unsharded_stage(c, g, out);
  } else if (sh.params) {
    // One unit being computed plus those prefetched are all-gathered in full, and one unit's
    // unsharded gradients wait for their reduce-scatter. A mixed-precision policy gathers the
    // compute-dtype cast and reduces a reduce-dtype copy of the compute-dtype gradients.
    // With a live-parameter budget (DeepSpeed) up to that many stay gathered, never more than
    // the rank holds.
    const bool mixed = c.s.conventions.fsdp_mixed_precision;
    const Wide units = 1 + c.s.parallel.fsdp_prefetch;
    const Wide live = c.s.conventions.zero3_live_params;
    const Wide gathered = gathered_params(units * g.largest_unit, live, g.dense + g.expert);
    const Wide gather_bits = mixed ? bits_of(tr.activation_dtype) : bits_of(tr.param_dtype);
    const Wide grad_bytes = mixed ? bytes_of(1, tr.activation_dtype) + bytes_of(1, tr.reduce_dtype)
                                  : bytes_of(1, tr.grad_dtype);
    Term gather{ceil_div(gathered * gather_bits, 8) + grad_bytes * g.largest_unit, ""};
    if (c.explain) {
      const std::string params =
          live > 0 ? fmt::format("min(rank {}, max((1 + prefetch {})·{}, live {}))",
                                 group_digits(g.dense + g.expert), c.s.parallel.fsdp_prefetch,
                                 group_digits(g.largest_unit), group_digits(live))
                   : fmt::format("(1 + prefetch {})·{}", c.s.parallel.fsdp_prefetch,
                                 group_digits(g.largest_unit));
      gather.formula =
          fmt::format("{}·{} B{} + {}·{} B gradients{}, largest unit", params,
                      static_cast<double>(gather_bits) / 8, mixed ? " (compute dtype)" : "",
                      group_digits(g.largest_unit), static_cast<int64_t>(grad_bytes),
                      mixed ? " (compute + reduce dtype)" : "");
    }
    out.add("unsharded parameter buffers", std::move(gather), CountsToward::kAllocated,
            kSourceGather);
  }
}

struct LayerMix {
  int64_t dense = 0, moe = 0;  // layers stored in full
  int64_t recomputed = 0;      // layers keeping only their input
};

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
    if (c.s.model.is_moe() && c.s.model.moe_layers[id])
      ++mix.moe;
    else
      ++mix.dense;
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

void add_activations(const Context& c, const RankLayout& rank, StageBuilder& out) {
  const LayerMix mix = layer_mix(c, rank);
  const int64_t vpp = c.s.parallel.vpp;
  const Wide per_microbatch = Wide{mix.dense} * c.dense_layer.bytes +
                              Wide{mix.moe} * c.moe_layer.bytes +
                              Wide{mix.recomputed} * c.layer_input.bytes;
  Term acts{per_microbatch * rank.in_flight_chunks / vpp, ""};
  if (c.explain) {
    std::string layers;
    auto part = [&](int64_t count, const Term& t, const char* kind) {
      if (count == 0) return;
      if (!layers.empty()) layers += " + ";
      layers += fmt::format("{} {} × {}", count, kind, short_bytes(t.bytes));
    };
    part(mix.dense, c.dense_layer, mix.moe > 0 ? "dense layers" : "layers");
    part(mix.moe, c.moe_layer, "MoE layers");
    part(mix.recomputed, c.layer_input, "recomputed layers");
    acts.formula =
        fmt::format("{} in-flight {} × ({}){}; per layer: {}", rank.in_flight_chunks,
                    vpp > 1 ? "chunk-microbatches" : "microbatches", layers,
                    vpp > 1 ? fmt::format(" / vpp {}", vpp) : "",
                    mix.moe > 0 && mix.dense == 0 ? c.moe_layer.formula : c.dense_layer.formula);
  }
  out.add("activations", std::move(acts), CountsToward::kAllocated, kSourceActivations);

  if (mix.recomputed > 0) {
    // Backward re-runs one layer forward at a time; its full activations are alive meanwhile.
    const Wide working = std::max(c.dense_layer.bytes, c.s.model.is_moe() ? c.moe_layer.bytes : 0);
    Term t{working,
           c.explain ? "one layer's full activations, re-created during its backward" : ""};
    out.add("recompute working set", std::move(t), CountsToward::kAllocated, kSourceRecompute);
  }
  add_stage_outputs(c, rank, out);
  if (rank.has_embedding) {
    Term emb = embedding_activations(c.s, c.explain);
    emb.bytes = emb.bytes * rank.in_flight_chunks / vpp;
    out.add("embedding activations", std::move(emb), CountsToward::kAllocated, kSourceActivations);
  }
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
  const std::string heads = mtp > 0 ? fmt::format("{} microbatch(es) × (1 main + {} MTP) heads",
                                                  static_cast<int64_t>(mbs), mtp)
                                    : microbatches;
  out.add("logits + loss", times(logits_and_loss(c.s, c.explain), mbs * (1 + mtp), heads),
          CountsToward::kAllocated, kSourceLogits);
  if (mtp > 0) {
    Term layer = c.s.model.is_moe() ? c.moe_layer : c.dense_layer;
    out.add("MTP activations",
            times(std::move(layer), mbs * mtp,
                  fmt::format("{} microbatch(es) × {} MTP layers", static_cast<int64_t>(mbs), mtp)),
            CountsToward::kAllocated, kSourceActivations);
  }
}

int64_t nccl_groups(const Parallelism& p, std::string* names) {
  const std::pair<const char*, int64_t> dims[] = {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp},
                                                  {"cp", p.cp}, {"ep", p.ep}, {"etp", p.etp}};
  int64_t count = 0;
  for (const auto& [name, degree] : dims) {
    if (degree <= 1) continue;
    ++count;
    if (names) *names += (names->empty() ? "" : ", ") + std::string(name);
  }
  return count;
}

bool holds_moe_layer(const Context& c, const StageEstimate& stage) {
  const ModelConfig& m = c.s.model;
  return m.is_moe() && std::any_of(stage.layer_ids.begin(), stage.layer_ids.end(),
                                   [&](int64_t id) { return m.moe_layers[id]; });
}

void add_beyond_tensors(const Context& c, const PhaseTotals& phases, StageEstimate& stage,
                        StageBuilder& out) {
  const int64_t base_workspaces = c.s.overheads.gemm_workspace_bytes;
  const int64_t grouped = grouped_gemm_workspace_bytes(c.s.training, holds_moe_layer(c, stage));
  Term workspace{Wide{base_workspaces} + grouped, ""};
  if (c.explain)
    workspace.formula = grouped == 0
                            ? "configurable (--gemm-workspace-mib)"
                            : fmt::format(
                                  "{} (--gemm-workspace-mib) + {} streams × {} MiB (grouped GEMM, "
                                  "--moe-grouped-gemm)",
                                  short_bytes(base_workspaces), kGroupedGemmStreams,
                                  kGroupedGemmWorkspaceBytes >> 20);
  out.add("GEMM workspaces", std::move(workspace), CountsToward::kAllocated,
          grouped == 0 ? kSourceWorkspace : kSourceGroupedWorkspace);
  if (has_tp_allgather_buffer(c.s)) {
    const Wide n = tokens_per_rank(c.s), h = c.s.model.hidden;
    const Wide b = bytes_of(1, c.s.training.activation_dtype);
    Term t{n * h * b, ""};
    if (c.explain)
      t.formula = fmt::format("n·h·B = {}·{}·{} (one microbatch's gathered input, kept)",
                              group_digits(n), group_digits(h), static_cast<int64_t>(b));
    out.add("TP all-gather buffer", std::move(t), CountsToward::kAllocated, kSourceAllgatherBuffer);
  }
  if (has_attention_scores_buffer(c.s) && stage.layers > 0) {
    const Parallelism& p = c.s.parallel;
    const Wide b = c.s.training.micro_batch, heads = c.s.model.num_heads / p.tp;
    const Wide s = c.s.training.seq_len / p.cp;
    const Wide bytes = bytes_of(1, c.s.training.activation_dtype);
    Term t{b * heads * s * s * bytes, ""};
    if (c.explain)
      t.formula = fmt::format("b·(a/t)·s²·B = {}·{}·{}²·{} (one layer's scores, kept)",
                              static_cast<int64_t>(b), static_cast<int64_t>(heads), group_digits(s),
                              static_cast<int64_t>(bytes));
    out.add("attention scores buffer", std::move(t), CountsToward::kAllocated, kSourceScoresBuffer);
  }
  const int64_t bucket = c.s.conventions.comm_bucket_elements;
  if (bucket > 0 && c.s.parallel.dp * c.s.parallel.cp > 1 && c.s.parallel.zero > 0) {
    const Wide grad_bytes = bytes_of(1, c.s.training.grad_dtype);
    Term t{Wide{bucket} * grad_bytes, ""};
    if (c.explain)
      t.formula = fmt::format("{} elements × {} B (reduce/all-gather bucket)", group_digits(bucket),
                              static_cast<int64_t>(grad_bytes));
    out.add("communication buckets", std::move(t), CountsToward::kAllocated, kSourceBuckets);
  }
  int64_t allocated = 0;
  for (const Row& r : stage.rows) allocated += r.bytes;
  const Overheads& o = c.s.overheads;
  Term pool{static_cast<Wide>(static_cast<double>(allocated) * o.allocator_fraction), ""};
  if (c.explain)
    pool.formula =
        fmt::format("{:.0f}% × allocated {}", o.allocator_fraction * 100, short_bytes(allocated));
  out.add("allocator pool overhead", std::move(pool), CountsToward::kReserved, kSourceAllocator);
  if (o.per_layer_cuda_graphs) {
    // Reserved, not allocated: the pools stay with their graphs through every phase.
    Term graphs{static_cast<Wide>(static_cast<double>(phases.layer_activations) *
                                  kCudaGraphActivationShare),
                ""};
    if (c.explain)
      graphs.formula =
          fmt::format("{:.0f}% × layer activations {} (forward temporaries kept)",
                      kCudaGraphActivationShare * 100, short_bytes(phases.layer_activations));
    out.add("CUDA-graph pools", std::move(graphs), CountsToward::kReserved, kSourceCudaGraphs);
  }
  Term context{o.cuda_context_bytes, c.explain ? "configurable (--cuda-context-gib)" : ""};
  out.add("CUDA context", std::move(context), CountsToward::kDevice, kSourceContext);
  std::string names;
  const int64_t groups = nccl_groups(c.s.parallel, c.explain ? &names : nullptr);
  Term nccl{Wide{groups} * o.nccl_bytes_per_group, ""};
  if (c.explain)
    nccl.formula =
        fmt::format("{} groups ({}) × {}", groups, names, short_bytes(o.nccl_bytes_per_group));
  out.add("NCCL buffers", std::move(nccl), CountsToward::kDevice, kSourceNccl);
}

// Fine-tuning's rows (finetune_rows.h) in place of, or beside, the full-training ones.
void add_finetune_rows(std::vector<FinetuneRow> rows, StageBuilder& out) {
  for (FinetuneRow& r : rows) out.add(r.component.c_str(), std::move(r.term), r.toward, r.source);
}

void total_up(StageEstimate& stage) {
  stage.allocated_bytes = stage.reserved_bytes = stage.device_bytes = 0;
  for (const Row& r : stage.rows) {
    if (r.counts_toward == CountsToward::kAllocated) stage.allocated_bytes += r.bytes;
    if (r.counts_toward != CountsToward::kDevice) stage.reserved_bytes += r.bytes;
    stage.device_bytes += r.bytes;
  }
}

// Bands from the validation spread (uncertainty.h): allocated rows by class, the reserved total
// from the reserved spread (the pool row takes up the difference), device rows their own range.
void add_bands(StageEstimate& stage, const UncertaintyBands& bands) {
  int64_t alloc_low = 0, alloc_high = 0, device_low = 0, device_high = 0;
  for (Row& r : stage.rows) {
    if (r.counts_toward == CountsToward::kReserved) continue;
    const ErrorSpread& spread = r.counts_toward == CountsToward::kDevice ? bands.device
                                : is_activation_row(r)                   ? bands.activations
                                                                         : bands.model_states;
    r.bytes_low = band_low(r.bytes, spread);
    r.bytes_high = band_high(r.bytes, spread);
    (r.counts_toward == CountsToward::kDevice ? device_low : alloc_low) += r.bytes_low;
    (r.counts_toward == CountsToward::kDevice ? device_high : alloc_high) += r.bytes_high;
  }
  stage.allocated_bytes_low = alloc_low;
  stage.allocated_bytes_high = alloc_high;
  stage.reserved_bytes_low = std::max(alloc_low, band_low(stage.reserved_bytes, bands.reserved));
  stage.reserved_bytes_high = std::max(alloc_high, band_high(stage.reserved_bytes, bands.reserved));
  // The reserved rows (allocator pool, CUDA-graph pools) share the band of reserved above
  // allocated in proportion to their bytes.
  int64_t reserved_rows = 0;
  for (const Row& r : stage.rows)
    if (r.counts_toward == CountsToward::kReserved) reserved_rows += r.bytes;
  for (Row& r : stage.rows) {
    if (r.counts_toward != CountsToward::kReserved) continue;
    const double share = static_cast<double>(r.bytes) / static_cast<double>(reserved_rows);
    r.bytes_low = std::llround(share * static_cast<double>(stage.reserved_bytes_low - alloc_low));
    r.bytes_high =
        std::llround(share * static_cast<double>(stage.reserved_bytes_high - alloc_high));
  }
  stage.device_bytes_low = stage.reserved_bytes_low + device_low;
  stage.device_bytes_high = stage.reserved_bytes_high + device_high;
}

bool same_breakdown(const StageEstimate& a, const StageEstimate& b) {
  if (a.layers != b.layers || a.rows.size() != b.rows.size()) return false;
  for (size_t i = 0; i < a.rows.size(); ++i)
    if (a.rows[i].component != b.rows[i].component || a.rows[i].bytes != b.rows[i].bytes)
      return false;
  return true;
}

std::string stage_name(const StageEstimate& st, int64_t pp) {
  if (pp == 1) return "all layers";
  const int64_t first = st.ranks.front() + 1, last = st.ranks.back() + 1;
  std::string name = first == last ? fmt::format("stage {} of {}", first, pp)
                                   : fmt::format("stages {}-{} of {}", first, last, pp);
  if (st.ranks.front() == 0) name += " (first)";
  if (st.ranks.back() == pp - 1) name += " (last)";
  return name;
}

// Consecutive ranks with identical rows are reported once.
std::vector<StageEstimate> merge_identical(std::vector<StageEstimate> ranks, int64_t pp) {
  std::vector<StageEstimate> merged;
  for (StageEstimate& st : ranks) {
    if (!merged.empty() && same_breakdown(merged.back(), st)) {
      merged.back().ranks.push_back(st.ranks.front());
      continue;
    }
    merged.push_back(std::move(st));
  }
  for (StageEstimate& st : merged) st.name = stage_name(st, pp);
  return merged;
}

void add_warnings(const Scenario& s, int64_t m, Estimate& est) {
  const Parallelism& p = s.parallel;
  if (p.pp > 1 && m < p.pp)
    est.warnings.push_back(fmt::format(
        "only {} microbatches for {} pipeline stages: most of each step is pipeline bubble", m,
        p.pp));
  if (p.schedule == Schedule::kInterleaved && m % p.pp != 0)
    est.warnings.push_back(fmt::format(
        "the interleaved schedule wants microbatches ({}) divisible by pp ({})", m, p.pp));
  if (p.tp > 1 && !p.sequence_parallel)
    est.warnings.push_back(
        "tp > 1 without sequence parallelism: norm and dropout activations are "
        "replicated on every TP rank");
  if (s.conventions.lazy_gradients && m == 1)
    est.warnings.push_back(
        "gradients are allocated by the backward and set to None after each step, and there is "
        "one microbatch per step: the forward/backward peak holds no gradients; the optimizer "
        "step holds them all");
  if (!s.training.flash_attention && s.training.seq_len >= 8192)
    est.warnings.push_back(
        "materialised attention at this sequence length stores s² scores per "
        "head; flash attention avoids them");
  if (s.training.fp8 != Fp8Recipe::kNone)
    est.warnings.push_back(
        "fp8 follows Transformer Engine as Megatron runs it (fp8 casts of linear inputs, weight "
        "casts cached across microbatches); other fp8 stacks such as torchao differ "
        "(docs/fp8.md)");
  if (s.training.moe_grouped_gemm && !s.model.is_moe())
    est.warnings.push_back(
        "moe_grouped_gemm has no effect: the model has no experts (no grouped-GEMM workspaces "
        "counted)");
  const std::vector<std::string> outside = layout_outside_framework(s);
  if (!outside.empty())
    est.warnings.push_back(fmt::format(
        "{} does not run this layout: {}; estimated as given ({})",
        framework_name(static_cast<Framework>(s.framework_id)), fmt::join(outside, "; "),
        framework_layouts(static_cast<Framework>(s.framework_id)).source));
  if (s.overheads.per_layer_cuda_graphs)
    est.warnings.push_back(
        "CUDA-graph pools are NeMo's measured ~20% of the layer activations, not a mechanism: "
        "graphs of parts of a layer keep less, and no measurement here checks it");
}

}  // namespace

Result<Estimate> estimate(const Scenario& s, const EstimateOptions& options) {
  if (auto error = validate_scenario(s)) return *error;
  if (auto error = validate_finetune(s)) return *error;
  Estimate est;
  est.parameters = count_parameters(s.model);
  est.world_size = s.parallel.world_size();
  est.microbatches = microbatches_of(s);
  const bool explain = options.explain;
  const Context c{s,
                  est.parameters,
                  sharding_of(s.parallel),
                  layer_activations(s, false, explain),
                  s.model.is_moe() ? layer_activations(s, true, explain) : Term{},
                  recomputed_layer_input(s, explain),
                  est.microbatches,
                  explain};

  std::vector<StageEstimate> ranks;
  bool overflow = false;
  const std::vector<RankLayout> layout = layout_pipeline(s.model, s.parallel, est.microbatches);
  for (size_t r = 0; r < layout.size(); ++r) {
    StageEstimate stage;
    stage.ranks = {static_cast<int64_t>(r)};
    stage.layer_ids = layout[r].layers;
    stage.layers = static_cast<int64_t>(layout[r].layers.size());
    stage.in_flight_microbatches = layout[r].in_flight_chunks;
    StageBuilder out(stage, explain);
    if (finetune_active(s.finetune))
      add_finetune_rows(finetune_model_states(s, est.parameters, layout[r], c.sharding, explain),
                        out);
    else
      add_model_states(c, gpu_params(s, est.parameters, layout[r]), out);
    add_activations(c, layout[r], out);
    add_finetune_rows(finetune_activations(s, layout[r], explain), out);
    add_head_terms(c, layout[r], out);
    if (out.overflow()) {
      overflow = true;
      break;
    }
    const PhaseTotals phases = settle_peak_phase(c, est.microbatches, stage, out);
    const size_t before_beyond = stage.rows.size();
    add_beyond_tensors(c, phases, stage, out);
    if (out.overflow()) {
      overflow = true;
      break;
    }
    record_phases(phases, before_beyond, stage);
    total_up(stage);
    add_bands(stage, builtin_bands());
    ranks.push_back(std::move(stage));
  }
  if (overflow)
    return Error{"seq_len", std::to_string(s.training.seq_len),
                 "sizes whose per-GPU memory stays below 4 EiB",
                 "the memory of this scenario overflows 64-bit byte counts (check seq_len, "
                 "micro_batch and the model sizes)"};
  est.stages = merge_identical(std::move(ranks), s.parallel.pp);
  for (size_t i = 0; i < est.stages.size(); ++i) {
    const StageEstimate& st = est.stages[i];
    if (st.device_bytes > est.peak.device_bytes ||
        (st.device_bytes == est.peak.device_bytes && st.allocated_bytes > est.peak.allocated_bytes))
      est.peak = Peak{i,
                      st.allocated_bytes,
                      st.reserved_bytes,
                      st.device_bytes,
                      st.allocated_bytes_low,
                      st.allocated_bytes_high,
                      st.reserved_bytes_low,
                      st.reserved_bytes_high,
                      st.device_bytes_low,
                      st.device_bytes_high};
  }
  add_warnings(s, est.microbatches, est);
  return est;
}

}  // namespace vramplan

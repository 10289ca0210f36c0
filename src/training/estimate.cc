#include "vramplan/training/estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "base/term.h"
#include "training/activations.h"
#include "training/estimate_parts.h"
#include "training/finetune/finetune_rows.h"
#include "training/framework_layouts.h"
#include "training/model_states.h"
#include "training/multimodal/vision_activations.h"
#include "training/pipeline.h"
#include "training/scenario_checks.h"
#include "vramplan/model/precision.h"
#include "vramplan/training/frameworks.h"
#include "vramplan/training/uncertainty.h"

namespace vramplan {
namespace {

using namespace estimate_parts;

constexpr const char* kSourceGradCopy =
    "Megatron-LM megatron/core/optimizer/optimizer.py _copy_model_grads_to_main_grads "
    "(main_param.grad = main_grad.float(); distrib_optimizer.py: the rank's shard), freed by "
    "the next step's zero_grad";
constexpr const char* kSourceMergedOutputs =
    "PyTorch torch/distributed/pipelining/schedules.py (PipelineScheduleSingle.step returns "
    "self._merge_outputs(self._stage.output_chunks), a torch.cat)";
constexpr const char* kSourceFirstLayerBackward =
    "PyTorch autograd engine.cpp (gradients made as the backward reaches each weight; saved "
    "tensors released after their node), read from the PyTorch reference's live tensors at the "
    "peak (docs/frameworks.md, Model code)";
constexpr const char* kSourceOptimizerStep =
    "torch.optim foreach Adam/AdamW (_multi_tensor_adam: sqrt of the second moment) and "
    "Adafactor (_adafactor.py _multi_tensor_adafactor: row_var @ col_var per matrix)";

// Rows that live from the forward to the backward, gone at the optimizer step. The autocast
// weight copies are among them: torch.autocast clears its cast cache when the forward's autocast
// region exits, and the casts then live only as the linears' saved tensors.
constexpr std::string_view kActivationRows[] = {"activations",
                                                "recompute working set",
                                                "embedding activations",
                                                "final norm + LM head inputs",
                                                "logits + loss",
                                                "MTP activations",
                                                "adapter activations",
                                                "merged expert weights",
                                                "pipeline stage outputs",
                                                "autocast weight copies",
                                                kRecomputeReservedRow,
                                                kMathScratchRow,
                                                kBackwardTransientRow,
                                                kEarlierChunkRow,
                                                kFirstLayerBackwardRow};

bool is_activation_row(const Row& r) {
  for (std::string_view name : kActivationRows)
    if (r.component == name) return true;
  return false;
}

int64_t row_bytes(const StageEstimate& stage, std::string_view component) {
  for (const Row& r : stage.rows)
    if (r.component == component) return r.bytes;
  return 0;
}

// Whether GPipe's first backward frees a microbatch as the lazily created gradients appear
// (settle_peak_phase; FastMemoryModel::rank_peak mirrors it).
bool gpipe_frees_before_gradients(const Scenario& s, int64_t microbatches) {
  return s.conventions.lazy_gradients && s.parallel.schedule == Schedule::kGPipe &&
         s.parallel.pp > 1 && microbatches > 1;
}

// Removes what is gone once the backward is over: activations, a stage kept unsharded, QLoRA's
// dequantized weight, FSDP's gathered units and unit gradients.
void erase_outside_step(const Context& c, StageEstimate& stage) {
  const bool fsdp = c.s.parallel.fsdp != FsdpMode::kNone;
  std::erase_if(stage.rows, [fsdp](const Row& r) {
    return is_activation_row(r) || r.component == kUnshardedStageRow ||
           r.component == kDequantizedWeightRow ||
           (fsdp &&
            (r.component == kGatheredRow || r.component == kPrefetchedRow ||
             r.component == kRetainedGatherRow || r.component == kRetainedGatherReservedRow ||
             r.component == kLossBackwardReservedRow || r.component == kPrefetchedReservedRow ||
             r.component == kUnitGradientsRow || r.component == kUnitGradientsReservedRow));
  });
}

// Picks the phase with the most allocated tensors (or the one `rows_at` names) and leaves in
// stage.rows what is alive then.
// torch's foreach Adam (torch/optim/adam.py _multi_tensor_adam) materialises sqrt(v) for every
// parameter it updates: one state-sized temporary; fused implementations keep none.
// With lazily allocated gradients and one microbatch per step, no gradient exists yet when the
// activations peak at the start of the backward; the backward then frees activations as it
// creates gradients, so both are counted in full only at the optimizer step.
PhaseTotals settle_peak_phase(const Context& c, int64_t microbatches, RowsAt rows_at,
                              StageEstimate& stage, StageBuilder& out) {
  PhaseTotals t;
  int64_t activations = 0;
  for (const Row& r : stage.rows) {
    if (r.counts_toward != CountsToward::kAllocated) continue;  // reserved: not in a phase
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
  int64_t gpipe_one_microbatch = 0;
  // LoRA's adapter gradients are created lazily too, as the backward reaches each adapter.
  const auto is_gradient_row = [](const Row& r) {
    return r.component == "gradients" || r.component == "adapter gradients";
  };
  if (grads_absent) {
    t.forward_backward -= row_bytes(stage, "gradients") + row_bytes(stage, "adapter gradients");
  } else if (gpipe_frees_before_gradients(c.s, microbatches)) {
    // GPipe runs every forward before the first backward: the lazily created gradients appear
    // in that backward, which frees one microbatch's activations (torch.distributed.pipelining
    // ScheduleGPipe); the peak is the larger of all microbatches without gradients and one
    // microbatch fewer with them.
    gpipe_one_microbatch = activations / std::max<int64_t>(stage.in_flight_microbatches, 1);
    t.forward_backward -= std::min(row_bytes(stage, "gradients"), gpipe_one_microbatch);
  }
  // Late in the backward, most gradients beside the first layer's tensors can outweigh every
  // activation beside none (first_layer_backward_moment).
  std::optional<FirstLayerMoment> late;
  if (grads_absent && !unsharded_stage)
    late = first_layer_backward_moment(c, row_bytes(stage, "activations"));
  if (late) {
    const int64_t grads = row_bytes(stage, "gradients") + row_bytes(stage, "adapter gradients");
    const int64_t at_late =
        t.forward_backward - activations + grads - late->pending_gradients + late->alive;
    if (at_late > t.forward_backward)
      t.forward_backward = at_late;
    else
      late.reset();
  }
  const bool adam = c.s.training.optimizer == Optimizer::kAdamW;
  const bool adafactor = c.s.training.optimizer == Optimizer::kAdafactor;
  const bool foreach = c.s.conventions.optimizer_foreach_temporaries;
  // torch's foreach Adafactor (_multi_tensor_adafactor) builds the variance estimate
  // row_var @ col_var of every matrix at once, gradient-sized in the gradients' dtype (the 1-D
  // group's estimates come after and are far smaller).
  const int64_t temporaries = !foreach    ? 0
                              : adam      ? row_bytes(stage, "optimizer states") / 2
                              : adafactor ? row_bytes(stage, "gradients")
                                          : 0;
  const int64_t grad_copy = has_fp32_grad_copy(c.s) ? row_bytes(stage, "master weights") : 0;
  // FSDP reshards every unit after its backward (FSDP2 post_backward): its gathered buffers are
  // gone by the optimizer step. DeepSpeed's ZeRO-3 live parameters are not modelled as freed.
  const int64_t gathered = c.s.parallel.fsdp != FsdpMode::kNone
                               ? row_bytes(stage, kGatheredRow) + row_bytes(stage, kPrefetchedRow) +
                                     row_bytes(stage, kRetainedGatherRow) +
                                     row_bytes(stage, kUnitGradientsRow)
                               : 0;
  // QLoRA dequantizes one linear at a time in its forward and backward; none at the step.
  const int64_t dequantized = row_bytes(stage, kDequantizedWeightRow);
  t.optimizer_step = all_tensors - activations - row_bytes(stage, kUnshardedStageRow) - gathered -
                     dequantized + temporaries + grad_copy;
  t.first_step = t.forward_backward - row_bytes(stage, "optimizer states");
  stage.peak_phase = "forward/backward";
  // torch.distributed.pipelining's last stage returns its outputs merged once the last backward
  // has run (PipelineScheduleSingle.step: _merge_outputs, a torch.cat of output_chunks): a
  // second copy of the kept logits beside them, with every gradient made and the activations
  // gone. It can be the step's peak when many microbatches keep large logits.
  const int64_t kept = row_bytes(stage, kKeptOutputsRow);
  const int64_t merged = kept > 0 ? t.optimizer_step - temporaries - grad_copy + kept : 0;
  const bool optimizer_shown = rows_at == RowsAt::kPeak
                                   ? std::max(merged, t.forward_backward) < t.optimizer_step
                                   : rows_at == RowsAt::kOptimizerStep;
  if (merged > t.forward_backward && !optimizer_shown) {
    t.forward_backward = merged;
    erase_outside_step(c, stage);
    Term copy{kept, c.explain ? fmt::format("torch.cat of the kept outputs ({})", short_bytes(kept))
                              : ""};
    out.add(kMergedOutputsRow, std::move(copy), CountsToward::kAllocated, kSourceMergedOutputs);
    return t;
  }
  if (!optimizer_shown && late) {
    out.shrink("gradients", late->pending_gradients, late->gradients_note);
    std::erase_if(stage.rows, is_activation_row);
    out.add(kFirstLayerBackwardRow, Term{late->alive, late->formula}, CountsToward::kAllocated,
            kSourceFirstLayerBackward);
  } else if (!optimizer_shown && grads_absent) {
    std::erase_if(stage.rows, is_gradient_row);
  } else if (!optimizer_shown && gpipe_one_microbatch > 0) {
    if (row_bytes(stage, "gradients") <= gpipe_one_microbatch) {
      std::erase_if(stage.rows, [](const Row& r) { return r.component == "gradients"; });
    } else {  // the first microbatch's activations are gone, its rows first to last
      int64_t left = gpipe_one_microbatch;
      for (std::string_view name : kActivationRows)
        if (name != kRecomputeReservedRow)  // reserved, not among the allocated bytes
          left -= out.shrink(name, left, "less one microbatch freed by GPipe's first backward");
    }
  }
  if (optimizer_shown) {
    erase_outside_step(c, stage);
    Term temp{temporaries, !c.explain ? ""
                           : adafactor
                               ? fmt::format("Adafactor's variance estimates (row_var @ col_var) "
                                             "of every matrix: gradients {}",
                                             short_bytes(row_bytes(stage, "gradients")))
                               : fmt::format("Adam's sqrt(v) copy: optimizer states {} / 2",
                                             short_bytes(row_bytes(stage, "optimizer states")))};
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

// Fine-tuning's rows (finetune_rows.h) in place of, or beside, the full-training ones.
void add_finetune_rows(std::vector<FinetuneRow> rows, StageBuilder& out) {
  for (FinetuneRow& r : rows) out.add(r.component.c_str(), std::move(r.term), r.toward, r.source);
}

void total_up(StageEstimate& stage) {
  stage.allocated_bytes = stage.reserved_bytes = stage.device_bytes = 0;
  stage.host_bytes = stage.disk_bytes = 0;
  for (const Row& r : stage.rows) {
    if (r.counts_toward == CountsToward::kHost) stage.host_bytes += r.bytes;
    if (r.counts_toward == CountsToward::kDisk) stage.disk_bytes += r.bytes;
    if (!on_gpu(r.counts_toward)) continue;
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
    if (!on_gpu(r.counts_toward)) {  // off the GPU: no measurement to spread them by
      r.bytes_low = r.bytes_high = r.bytes;
      continue;
    }
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
  if (std::string note = unmatched_lora_targets_note(s); !note.empty())
    est.warnings.push_back(std::move(note));
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
        "one microbatch per step: the forward/backward peak holds every activation and no "
        "gradient, or (transformers' layers on one GPU) most gradients beside the first layer's "
        "tensors, late in the backward; the optimizer step holds them all");
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
  if (const std::string images = images_note(s); !images.empty()) est.warnings.push_back(images);
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
    if (finetune_active(s.finetune)) {
      add_finetune_rows(finetune_model_states(s, est.parameters, layout[r], c.sharding, explain),
                        out);
      // FSDP gathers the frozen base unit by unit as in full training; the adapters' gradients
      // are too small to count. QLoRA's NF4 gathers are not modelled yet.
      if (c.sharding.params && s.finetune.method != FinetuneMethod::kQlora &&
          !keeps_stage_unsharded(s.conventions, s.parallel, true))
        add_gathered_params(c, gpu_params(s, est.parameters, layout[r]), false, out);
    } else
      add_model_states(c, gpu_params(s, est.parameters, layout[r]), out);
    add_rope_cache(c, stage.layers, out);
    add_activations(c, layout[r], out);
    add_finetune_rows(finetune_activations(s, layout[r], explain), out);
    add_head_terms(c, layout[r], out);
    if (out.overflow()) {
      overflow = true;
      break;
    }
    const PhaseTotals phases = settle_peak_phase(c, est.microbatches, options.rows_at, stage, out);
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
                      st.device_bytes_high,
                      0,
                      0};
  }
  for (const StageEstimate& st : est.stages) {
    est.peak.host_bytes = std::max(est.peak.host_bytes, st.host_bytes);
    est.peak.disk_bytes = std::max(est.peak.disk_bytes, st.disk_bytes);
  }
  add_warnings(s, est.microbatches, est);
  return est;
}

}  // namespace vramplan

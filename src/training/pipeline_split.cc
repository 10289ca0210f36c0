#include "vramplan/training/pipeline_split.h"

namespace vramplan {

const char* split_name(SplitKind k) {
  switch (k) {
    case SplitKind::kEven:
      return "even";
    case SplitKind::kEmbeddingAndLoss:
      return "embedding+loss";
    case SplitKind::kEmbedding:
      return "embedding";
    case SplitKind::kLoss:
      return "loss";
    case SplitKind::kLighterEnds:
      return "lighter-ends";
    case SplitKind::kBalanced:
      return "balanced";
    case SplitKind::kBalancedEmbeddingAndLoss:
      return "balanced+embedding+loss";
    case SplitKind::kCompute:
      return "compute";
  }
  return "";
}

void set_split(const PipelineSplit& split, Parallelism& p) {
  p.first_stage_layers = split.first_stage_layers;
  p.last_stage_layers = split.last_stage_layers;
  const SplitKind k = split.kind;
  const bool torchtitan = k == SplitKind::kBalancedEmbeddingAndLoss;
  p.embedding_as_stage =
      k == SplitKind::kEmbeddingAndLoss || k == SplitKind::kEmbedding || torchtitan;
  p.loss_as_stage = k == SplitKind::kEmbeddingAndLoss || k == SplitKind::kLoss || torchtitan;
  p.balanced_split = k == SplitKind::kBalanced || torchtitan;
  p.compute_balanced_split = k == SplitKind::kCompute;
}

std::optional<SplitKind> split_kind_of(const Parallelism& p) {
  if (p.compute_balanced_split) return SplitKind::kCompute;
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0) return SplitKind::kLighterEnds;
  if (p.balanced_split) {
    if (p.embedding_as_stage != p.loss_as_stage) return std::nullopt;
    return p.embedding_as_stage ? SplitKind::kBalancedEmbeddingAndLoss : SplitKind::kBalanced;
  }
  if (p.embedding_as_stage && p.loss_as_stage) return SplitKind::kEmbeddingAndLoss;
  if (p.embedding_as_stage) return SplitKind::kEmbedding;
  if (p.loss_as_stage) return SplitKind::kLoss;
  return SplitKind::kEven;
}

std::optional<PipelineSplit> split_of(SplitKind kind, int64_t layers, int64_t pp, int64_t vpp) {
  const int64_t chunks = pp * vpp;
  switch (kind) {
    case SplitKind::kEven:
      if (layers % chunks == 0) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kEmbeddingAndLoss:
      if ((layers + 2) % chunks == 0) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kEmbedding:
    case SplitKind::kLoss:
      if ((layers + 1) % chunks == 0) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kLighterEnds:
      if (pp < 3) return std::nullopt;
      // The most layers the two ends can keep while staying lighter than every middle stage;
      // with virtual stages each rank's chunks share its layers evenly, so the ends hold a
      // multiple of vpp and the middle a multiple of (pp−2)·vpp (Megatron's
      // --decoder-first/last-pipeline-num-layers, transformer_block.py get_num_layers_to_build).
      for (int64_t ends = (layers - 1) / 2 / vpp * vpp; ends >= vpp; ends -= vpp) {
        const int64_t rest = layers - 2 * ends;
        const int64_t middle = (pp - 2) * vpp;
        if (rest >= middle && rest % middle == 0 && ends < rest / (pp - 2))
          return PipelineSplit{kind, ends, ends};
      }
      return std::nullopt;
    case SplitKind::kBalanced:
      if (chunks <= layers) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kBalancedEmbeddingAndLoss:
      if (chunks <= layers + 2) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
    case SplitKind::kCompute:
      if (vpp == 1 && pp <= layers) return PipelineSplit{kind, 0, 0};
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace vramplan

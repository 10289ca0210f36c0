// Memory beyond the model's tensors on one pipeline rank: GEMM workspaces, persistent buffers,
// communication buckets, the allocator pool, CUDA graphs, the CUDA context and NCCL buffers.
#include <fmt/format.h>

#include <string>
#include <utility>

#include "training/activations.h"
#include "training/estimate_parts.h"
#include "vramplan/training/frameworks.h"

namespace vramplan::estimate_parts {
namespace {

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
constexpr const char* kSourceBuckets =
    "DeepSpeed ZeRO reduce_bucket_size / allgather_bucket_size (docs/frameworks.md)";
constexpr const char* kSourceCudaGraphs =
    "NeMo docs/source/features/optimizations/cudagraphs.md (Megatron CudaGraphManager): per-layer "
    "graphs keep forward temporaries, ~20% more activation memory";
constexpr const char* kSourceContext = "CUDA context and kernels (FORMULAS.md §5: 0.3–1.3 GiB)";
constexpr const char* kSourceNccl =
    "Fujii et al. 2024 (arXiv 2411.06465): ~0.5 GB of NCCL buffers per parallel dimension";
constexpr const char* kSourceAllocator =
    "PyTorch caching allocator: reserved above allocated (torchtitan measured 20–36%)";

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

}  // namespace

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
  // The pool grows with what the caching allocator holds: rows on the GPU only, never the
  // offloaded rows that live in host memory or on NVMe.
  int64_t allocated = 0;
  for (const Row& r : stage.rows)
    if (on_gpu(r.counts_toward)) allocated += r.bytes;
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

}  // namespace vramplan::estimate_parts

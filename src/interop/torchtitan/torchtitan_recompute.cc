// A torchtitan job's activation checkpointing (torchtitan/distributed/activation_checkpoint.py
// apply_ac): "full" wraps every transformer block; "selective" with selective_ac_option "op"
// is the op-level policy (vramplan's selective-op); with an integer N it wraps every N-th block a
// rank builds (_apply_layer_sac; N = 0 or 1: every block). The defaults are torchtitan's
// (ActivationCheckpoint: mode "selective", selective_ac_option "2").
#include <fmt/format.h>

#include <algorithm>

#include "interop/torchtitan/torchtitan_job.h"
#include "interop/torchtitan/torchtitan_layout.h"

namespace vramplan::interop {
namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 10 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether the model mixes dense and MoE layers: vramplan recomputes the first layers of a
// chunk, torchtitan every N-th, so the kinds of the layers kept differ.
bool mixed_layers(const TitanFlavor& f) {
  const std::vector<bool> moe = titan_moe_layers(f);
  return !moe.empty() && std::find(moe.begin(), moe.end(), !moe.front()) != moe.end();
}

void every_nth(TitanJob& job, const TitanJob::Read& option, int64_t every) {
  const EveryNth n = titan_every_nth(job.rank_layers, job.vpp, every);
  if (n.layers_per_chunk == 0) {
    job.out.set(option.key, option.text, "recompute", "none");
    job.recompute = "none";
    return;
  }
  job.out.set(option.key, option.text, "recompute", "full");
  job.out.set(option.key, option.text, "recompute_layers", n.layers_per_chunk);
  job.recompute = "full";
  std::string ranks;
  for (int64_t l : job.rank_layers) ranks += (ranks.empty() ? "" : ", ") + std::to_string(l);
  if (!n.exact)
    job.out.warn(fmt::format(
        "{} = {}: each pipeline rank checkpoints every {}-th of its layers ({} layers per rank); "
        "vramplan recomputes {} per chunk on every rank, so ranks with other counts are "
        "approximated",
        option.key, option.text, every, ranks, n.layers_per_chunk));
  if (mixed_layers(*job.flavor))
    job.out.warn(fmt::format(
        "{} = {}: torchtitan checkpoints every {}-th layer, vramplan the first {} of each chunk; "
        "{} mixes dense and MoE layers, so the layers kept differ in kind",
        option.key, option.text, every, n.layers_per_chunk, job.flavor->flavor));
}

}  // namespace

std::optional<Error> read_titan_recompute(TitanJob& job) {
  TitanJob::Read mode = job.read("activation_checkpoint.mode", "selective");
  TitanJob::Read option = job.read("activation_checkpoint.selective_ac_option", "2");
  const TitanValue* mm =
      job.keys.take("activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns");
  if (mode.text == "none" || mode.text == "full") {
    job.out.set(mode.key, mode.text, "recompute", mode.text);
    job.recompute = mode.text;
    if (option.given) job.out.ignore(option.key, option.text, "read in selective mode only");
  } else if (mode.text == "selective") {
    job.out.understood(mode.key, mode.text, "selective: see selective_ac_option");
    if (option.text == "op") {
      job.out.set(option.key, option.text, "recompute", "selective-op");
      job.recompute = "selective-op";
    } else if (all_digits(option.text)) {
      const int64_t every = std::stoll(option.text);
      if (every <= 1) {
        job.out.set(option.key, option.text, "recompute", "full");
        job.recompute = "full";
      } else {
        every_nth(job, option, every);
      }
    } else {
      return Error{option.key, option.text,
                   "op, or a positive integer N (every N-th layer checkpointed)", ""};
    }
  } else if (mode.text == "memory_budget") {
    job.out.unsupported(mode.key, mode.text,
                        "the compiler's memory-budget partitioner (estimated without "
                        "recomputation)");
    if (option.given) job.out.ignore(option.key, option.text, "read in selective mode only");
  } else {
    return Error{mode.key, mode.text, "none, selective, full or memory_budget", ""};
  }
  if (mm != nullptr)
    job.out.ignore(mm->written, mm->text,
                   job.recompute == "selective-op"
                       ? "no effect on memory: the MoE router's small matmuls are recomputed"
                       : "read by the op-level policy only");
  return std::nullopt;
}

}  // namespace vramplan::interop

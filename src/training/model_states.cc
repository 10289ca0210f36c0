#include "training/model_states.h"

#include <fmt/format.h>

#include <algorithm>

#include "vramplan/model/precision.h"

namespace vramplan {
namespace {

struct LayerShare {
  Wide dense, expert, non_matrix;
};

LayerShare share_of(const LayerParams& p, const Parallelism& par) {
  const Wide sharded = ceil_div(Wide{p.attention} + p.mlp, par.tp);
  const Wide replicated = Wide{p.attention_replicated} + p.norms + p.router;
  return {sharded + replicated, Wide{p.routed_experts} / (par.ep * par.etp),
          Wide{p.norms} + p.router};
}

}  // namespace

GpuParams gpu_params(const Scenario& s, const ParamCounts& counts, const RankLayout& rank) {
  const Parallelism& par = s.parallel;
  const ModelConfig& m = s.model;
  GpuParams g;
  const size_t tail_start = rank.layers.size() - static_cast<size_t>(rank.last_chunk_layers);
  for (size_t i = 0; i < rank.layers.size(); ++i) {
    const LayerShare share = share_of(counts.layers[rank.layers[i]], par);
    g.dense += share.dense;
    g.expert += share.expert;
    g.non_matrix += share.non_matrix;
    g.vectors += counts.layers[rank.layers[i]].norms;
    g.largest_unit = std::max(g.largest_unit, share.dense + share.expert);
    g.largest_layer = std::max(g.largest_layer, share.dense + share.expert);
    if (i >= tail_start) g.last_chunk += share.dense + share.expert;
  }
  const Wide vocab_shard = ceil_div(padded_vocab(s), par.tp) * m.hidden;
  if (rank.has_embedding) {
    const Wide embedding = vocab_shard + counts.position_embedding;
    g.dense += embedding;
    g.non_matrix += embedding;
    g.largest_unit = std::max(g.largest_unit, embedding);
    g.root += embedding;
    g.lookup_only = embedding;
    // A multimodal checkpoint's vision tower and projector run whole on the first stage
    // (transformers builds them beside the embedding; no tensor-parallel plan splits them).
    g.dense += counts.vision;
  }
  g.whole_embedding_grad = whole_embedding_grad_extra(s.conventions, m, par, padded_vocab(s),
                                                      rank.has_embedding, rank.has_head);
  const Wide before_head = g.dense + g.expert;
  if (rank.has_head) {
    const Wide head = head_vocab_matrices(m, rank.has_embedding) * vocab_shard + counts.final_norm;
    // A head tied to the embedding on this rank is a linear over the embedding's table.
    if (rank.has_embedding && m.tied_embeddings) g.lookup_only -= vocab_shard;
    g.dense += head;
    g.non_matrix += head;
    g.vectors += counts.final_norm;
    g.largest_unit = std::max(g.largest_unit, head);
    g.root += head;
    if (m.mtp_layers > 0) {
      const LayerShare share = share_of(counts.mtp_layer, par);
      const Wide extra = ceil_div(counts.mtp_extra, par.tp);
      g.dense += m.mtp_layers * (share.dense + extra);
      g.expert += m.mtp_layers * share.expert;
      g.non_matrix += m.mtp_layers * share.non_matrix;
      g.vectors += m.mtp_layers * counts.mtp_layer.norms;
      g.mtp = m.mtp_layers * (share.dense + extra + share.expert);
    }
  }
  // The embedding is on the first chunk, the head and MTP modules on the last.
  if (par.vpp == 1)
    g.last_chunk = g.dense + g.expert;
  else
    g.last_chunk += g.dense + g.expert - before_head;
  return g;
}

Sharding sharding_of(const Parallelism& par) {
  Sharding sh;
  const Wide data_ranks = Wide{par.dp} * par.cp;
  sh.dense_group = data_ranks;
  sh.expert_group = std::max<Wide>(1, Wide{par.tp} * par.cp * par.dp / (par.ep * par.etp));
  switch (par.fsdp) {
    case FsdpMode::kFullShard:
      sh.params = sh.grads = sh.optimizer = true;
      break;
    case FsdpMode::kShardGradOp:
      // The parameters are sharded too; reshard_after_forward=False only keeps them gathered
      // from forward to backward (fsdp_gathered_params).
      sh.params = sh.grads = sh.optimizer = true;
      break;
    case FsdpMode::kHybridShard: {
      sh.params = sh.grads = sh.optimizer = true;
      const Wide group = par.fsdp_shard_group > 0 ? par.fsdp_shard_group : data_ranks;
      // Replicas of the shard group: experts shard over their group divided the same way.
      const Wide replicas = data_ranks / group;
      sh.dense_group = group;
      sh.expert_group = std::max<Wide>(1, sh.expert_group / replicas);
      break;
    }
    case FsdpMode::kNoShard:
      break;
    case FsdpMode::kNone:
      sh.optimizer = par.zero >= 1 || par.distributed_optimizer;
      sh.grads = par.zero >= 2;
      sh.params = par.zero >= 3;
      break;
  }
  if (!sh.optimizer) sh.dense_group = sh.expert_group = 1;
  return sh;
}

Term optimizer_state_bytes(const Training& tr, Wide params, Wide non_matrix, Wide vectors,
                           Wide hidden, bool explain) {
  const Wide sb = bytes_of(1, tr.optimizer_state_dtype);
  const std::string p = group_digits(params);
  Term t;
  switch (tr.optimizer) {
    case Optimizer::kAdamW:
      t.bytes = 2 * params * sb;
      if (explain) t.formula = fmt::format("Adam m and v: 2·{}·P = 2·{}·{}", (int)sb, (int)sb, p);
      break;
    case Optimizer::kAdam8bit: {
      // bitsandbytes block-wise quantisation: 1 byte per state plus an fp32 absmax per 2048.
      const Wide blocks = ceil_div(params, 2048);
      t.bytes = 2 * params + 2 * blocks * 4;
      if (explain) t.formula = fmt::format("8-bit m and v: 2·1·{} + absmax 2·4·⌈P/2048⌉", p);
      break;
    }
    case Optimizer::kSgd:
      if (explain) t.formula = "plain SGD keeps no state";
      break;
    case Optimizer::kSgdMomentum:
    case Optimizer::kLion:
      t.bytes = params * sb;
      if (explain) t.formula = fmt::format("momentum: {}·P = {}·{}", (int)sb, (int)sb, p);
      break;
    case Optimizer::kAdafactor: {
      // Factored second moment (torch.optim.Adafactor: row_var and col_var of every tensor with
      // two or more dimensions, the embedding and LM head too): a row and a column vector per
      // h-wide matrix, ≈ 2·P/h values; the 1-D norms keep a whole one. No first moment.
      const Wide values = ceil_div(2 * (params - vectors), hidden) + vectors;
      t.bytes = values * sb;
      if (explain)
        t.formula = fmt::format("factored v: {}·(2·(P−P_vec)/h + P_vec) = {}·(2·({}−{})/{} + {})",
                                (int)sb, (int)sb, p, group_digits(vectors), group_digits(hidden),
                                group_digits(vectors));
      break;
    }
    case Optimizer::kMuon: {
      // Muon's momentum for matrices; the embedding, head and vectors run AdamW (m and v).
      t.bytes = (params - non_matrix) * sb + 2 * non_matrix * sb;
      if (explain)
        t.formula =
            fmt::format("Muon momentum {}·(P−P_adam) + AdamW 2·{}·P_adam, P = {}, P_adam = {}",
                        (int)sb, (int)sb, p, group_digits(non_matrix));
      break;
    }
  }
  return t;
}

}  // namespace vramplan

// A planner layout: its name, how it is written into a Scenario, and the families it belongs to.
#include <fmt/format.h>

#include "plan/planner_search.h"
#include "vramplan/plan/planner.h"

namespace vramplan {

void apply_layout(const PlanLayout& l, Scenario& s) {
  Parallelism& p = s.parallel;
  p.tp = l.tp;
  p.sequence_parallel = l.sequence_parallel;
  p.pp = l.pp;
  p.vpp = l.vpp;
  p.schedule = l.schedule;
  p.dp = l.dp;
  p.cp = l.cp;
  p.ep = l.ep;
  p.etp = l.etp;
  p.zero = l.sharding.zero;
  p.fsdp = l.sharding.fsdp;
  p.fsdp_shard_group = l.sharding.fsdp_shard_group;
  p.distributed_optimizer = l.sharding.distributed_optimizer;
  set_split(l.split, p);
  s.training.micro_batch = l.micro_batch;
  s.training.recompute = l.recompute;
  s.offload = l.offload;
}

namespace {

std::string split_text(const PipelineSplit& split) {
  switch (split.kind) {
    case SplitKind::kEven:
      return "";
    case SplitKind::kEmbeddingAndLoss:
      return " split=embedding+loss";
    case SplitKind::kEmbedding:
      return " split=embedding";
    case SplitKind::kLoss:
      return " split=loss";
    case SplitKind::kLighterEnds:
      return fmt::format(" split=first{}/last{}", split.first_stage_layers,
                         split.last_stage_layers);
    case SplitKind::kBalanced:
      return " split=balanced";
    case SplitKind::kBalancedEmbeddingAndLoss:
      return " split=balanced+embedding+loss";
    case SplitKind::kCompute:
      return " split=compute";
  }
  return "";
}

std::string offload_text(const Offload& o) { return o.any() ? " offload=" + offload_name(o) : ""; }

}  // namespace

std::string sharding_name(const ShardingChoice& c) {
  if (c.fsdp == FsdpMode::kHybridShard)
    return fmt::format("fsdp=hybrid_shard/{}", c.fsdp_shard_group);
  if (c.fsdp != FsdpMode::kNone) return fmt::format("fsdp={}", fsdp_name(c.fsdp));
  if (c.distributed_optimizer) return "distopt";
  return fmt::format("zero{}", c.zero);
}

std::string offload_name(const Offload& o) {
  std::string parts;
  auto add = [&](const std::string& part) { parts += (parts.empty() ? "" : ",") + part; };
  if (o.optimizer != OffloadTier::kNone) {
    add(fmt::format("optimizer:{}", offload_tier_name(o.optimizer)));
    if (o.optimizer_fraction < 1.0) parts += fmt::format("/{:g}", o.optimizer_fraction);
  }
  if (o.params != OffloadTier::kNone) add(fmt::format("params:{}", offload_tier_name(o.params)));
  if (o.activations) add("activations");
  return parts;
}

std::string layout_name(const PlanLayout& l) {
  std::string text = fmt::format("tp{}{} pp{}", l.tp, l.sequence_parallel ? " sp" : "", l.pp);
  if (l.vpp > 1) text += fmt::format(" vpp{}", l.vpp);
  if (l.pp > 1) text += fmt::format(" {}{}", schedule_name(l.schedule), split_text(l.split));
  text += fmt::format(" cp{}", l.cp);
  if (l.ep > 1 || l.etp > 1) text += fmt::format(" ep{} etp{}", l.ep, l.etp);
  text += fmt::format(" dp{} mb{} recompute={} {}", l.dp, l.micro_batch,
                      recompute_name(l.recompute), sharding_name(l.sharding));
  return text + offload_text(l.offload);
}

const char* family_name(Family f) {
  switch (f) {
    case Family::kDataParallel:
      return "pure data parallel (DP, ZeRO, FSDP)";
    case Family::kTensorInNode:
      return "tensor parallel, no pipeline";
    case Family::kTensorPipeline:
      return "pipeline parallel (with or without TP)";
    case Family::kContext:
      return "context parallel";
    case Family::kFullRecompute:
      return "full recomputation";
    case Family::kExpert:
      return "expert parallel";
  }
  return "";
}

bool in_family(const PlanLayout& l, Family f) {
  switch (f) {
    case Family::kDataParallel:
      return l.tp == 1 && l.pp == 1 && l.cp == 1 && l.ep == 1;
    case Family::kTensorInNode:
      return l.tp > 1 && l.pp == 1 && l.cp == 1;
    case Family::kTensorPipeline:
      return l.pp > 1 && l.cp == 1;
    case Family::kContext:
      return l.cp > 1;
    case Family::kFullRecompute:
      return l.recompute == Recompute::kFull;
    case Family::kExpert:
      return l.ep > 1;
  }
  return false;
}

}  // namespace vramplan

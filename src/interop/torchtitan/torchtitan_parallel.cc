// The parallel degrees, FSDP / HSDP / DDP, the pipeline and the batch of a torchtitan job config
// (torchtitan/distributed/parallel_dims.py, models/llama3/infra/parallelize.py,
// distributed/pipeline_parallel.py).
#include <fmt/format.h>

#include "interop/torchtitan/torchtitan_job.h"
#include "interop/torchtitan/torchtitan_layout.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

Result<int64_t> degree(TitanJob& job, const std::string& key, int64_t& out, bool rest_allowed) {
  TitanJob::Read r = job.read(key, out);
  Result<int64_t> n = integer_value(r.key, r.value);
  if (!n) return n.error();
  if (*n < 1 && !(rest_allowed && *n == -1))
    return Error{
        r.key, r.text,
        rest_allowed ? "an integer ≥ 1, or -1 for the remaining ranks" : "an integer ≥ 1 (1 = off)",
        ""};
  out = *n;
  return *n;
}

// ParallelDims: dp_shard -1 takes the ranks the other degrees leave; the degrees' product must be
// the world size.
std::optional<Error> world_and_shard(TitanJob& job) {
  const std::string shard_key = titan_key(job, "parallelism.data_parallel_shard_degree");
  const int64_t others = job.replicate * job.tp * job.pp * job.cp;
  if (job.shard == -1 && job.world > 0) {
    if (job.world % others != 0)
      return Error{shard_key, "-1",
                   fmt::format("degrees whose product divides the world size {} ({})", job.world,
                               job.world_from),
                   fmt::format("replicate·tp·pp·cp = {}", others)};
    job.shard = job.world / others;
    job.out.understood(shard_key, "-1",
                       fmt::format("dp_shard = {} (the remaining ranks)", job.shard));
  } else if (job.shard > 0 && job.world > 0 && job.shard * others != job.world) {
    return Error{
        shard_key, std::to_string(job.shard),
        fmt::format("degrees whose product is the world size {} ({})", job.world, job.world_from),
        fmt::format("replicate·shard·tp·pp·cp = {}", job.shard * others)};
  }
  if (job.world > 0)
    job.out.set(job.world_from, std::to_string(job.world), "gpus", job.world);
  else if (job.shard > 0)
    job.out.set("(the product of the parallelism degrees)", std::to_string(job.shard * others),
                "gpus", job.shard * others);
  return std::nullopt;
}

// FSDP2 over dp_shard·cp when either is above 1 (parallel_dims.fsdp_enabled); with
// dp_replicate > 1 too it is HSDP, shard groups of dp_shard·cp ranks; dp_replicate alone is DDP.
std::optional<Error> data_parallel(TitanJob& job) {
  const std::string shard_key = titan_key(job, "parallelism.data_parallel_shard_degree");
  const std::string replicate_key = titan_key(job, "parallelism.data_parallel_replicate_degree");
  job.fsdp = job.shard != 1 || job.cp > 1;
  if (job.fsdp && job.replicate > 1) {
    if (job.shard == -1)
      return Error{
          job.keys.peek("parallelism.data_parallel_shard_degree") ? shard_key : replicate_key,
          job.keys.peek("parallelism.data_parallel_shard_degree") ? "-1"
                                                                  : std::to_string(job.replicate),
          "a degree, or a launcher line giving the world size (torchrun "
          "--nproc_per_node ...)",
          "with data_parallel_replicate_degree above 1 the shard group is the world "
          "over the other degrees, and the world size is unknown"};
    job.out.set(replicate_key, std::to_string(job.replicate), "fsdp", "hybrid_shard");
    job.out.set(shard_key, std::to_string(job.shard), "fsdp_shard_group", job.shard * job.cp);
  } else if (job.fsdp) {
    job.out.set(shard_key, std::to_string(job.shard), "fsdp", "full_shard");
    if (job.keys.peek("parallelism.data_parallel_replicate_degree"))
      job.out.understood(replicate_key, "1", "no replicas: FSDP over every data-parallel rank");
  } else {
    job.out.set(job.replicate > 1 ? replicate_key : shard_key,
                std::to_string(job.replicate > 1 ? job.replicate : job.shard), "fsdp", "none");
    const bool ddp = job.replicate > 1;
    if (job.keys.peek(ddp ? "parallelism.data_parallel_shard_degree"
                          : "parallelism.data_parallel_replicate_degree"))
      job.out.understood(ddp ? shard_key : replicate_key, "1",
                         ddp ? "no sharding: DDP (apply_ddp)" : "no data parallelism");
  }
  return std::nullopt;
}

// Expert parallelism borrows data-parallel (and, with etp 1, tensor-parallel) ranks; with ep 1
// the experts are tensor-parallel over tp (apply_moe_ep_tp). Only etp 1 or tp is accepted.
std::optional<Error> experts(TitanJob& job) {
  const TitanValue* ep = job.keys.take("parallelism.expert_parallel_degree");
  const TitanValue* etp = job.keys.take("parallelism.expert_tensor_parallel_degree");
  // The all-to-all backend (expert_parallel.py; "standard" is torch's all_to_all_single).
  const TitanValue* backend = job.keys.take("parallelism.expert_parallel_comm_backend");
  if (job.flavor->num_experts == 0) {
    for (const TitanValue* v : {ep, etp, backend})
      if (v) job.out.ignore(v->written, v->text, "the model has no experts: no effect");
    return std::nullopt;
  }
  if (backend)
    job.out.set(backend->written, backend->text, "moe_dispatcher",
                backend->text == "standard" ? "alltoall" : backend->text);
  int64_t e = 1, et = 1;
  if (ep) {
    Result<int64_t> n = job.keys.integer(*ep);
    if (!n) return n.error();
    if (*n < 1) return Error{ep->written, ep->text, "an integer ≥ 1 (1 = off)", ""};
    e = *n;
    job.out.set(ep->written, ep->text, "ep", e);
  }
  if (etp) {
    Result<int64_t> n = job.keys.integer(*etp);
    if (!n) return n.error();
    if (*n != 1 && *n != job.tp)
      return Error{etp->written, etp->text,
                   fmt::format("1 or the tensor-parallel degree ({})", job.tp), ""};
    et = *n;
  }
  if (e == 1 && job.tp > 1) {
    job.out.set(etp ? etp->written : "(expert_parallel_degree 1: experts tensor-parallel over tp)",
                std::to_string(job.tp), "etp", job.tp);
  } else if (etp) {
    job.out.set(etp->written, etp->text, "etp", et);
  }
  return std::nullopt;
}

std::optional<Error> tensor_parallel_options(TitanJob& job) {
  // Loss parallelism keeps the logits sharded over the vocabulary; without it every TP rank
  // holds the full-vocabulary logits (parallelize_llama.py apply_tp).
  bool loss_parallel = true;
  const TitanValue* disable = job.keys.take("parallelism.disable_loss_parallel");
  const TitanValue* enable = job.keys.take("training.enable_loss_parallel");  // 2024
  for (const TitanValue* v : {disable, enable}) {
    if (v == nullptr) continue;
    Result<bool> on = job.keys.boolean(*v);
    if (!on) return on.error();
    loss_parallel = v == disable ? !*on : *on;
    if (job.tp > 1)
      job.out.set(v->written, v->text, "loss_parallel", loss_parallel);
    else
      job.out.ignore(v->written, v->text, "no effect without TP");
  }
  if (const TitanValue* v = job.keys.take("parallelism.enable_async_tensor_parallel")) {
    Result<bool> on = job.keys.boolean(*v);
    if (!on) return on.error();
    if (*on && job.tp > 1) {
      // The step time overlaps the TP collectives with the GEMMs; the memory side lacks the
      // symmetric-memory buffers async TP allocates, and says so.
      job.out.set(v->written, v->text, "tp_comm_overlap", true);
      job.out.warn(std::string(v->written) +
                   ": async TP's symmetric-memory buffers are not counted in the memory estimate");
    } else
      job.out.ignore(v->written, v->text, job.tp > 1 ? kNoMemoryEffect : "no effect without TP");
  }
  if (job.tp > 1)
    job.out.set(titan_key(job, "parallelism.tensor_parallel_degree"), std::to_string(job.tp),
                "sequence_parallel", true);
  return std::nullopt;
}

// fsdp_reshard_after_forward (parallelize_llama.py apply_fsdp): "default" reshards after the
// forward unless PP is on; "never" keeps the gathered parameters to the backward (ZeRO-2's
// shard_grad_op); "always" reshards under PP too, which vramplan does not model.
std::optional<Error> reshard_policy(TitanJob& job) {
  const TitanValue* v = job.keys.take("parallelism.fsdp_reshard_after_forward");
  if (v == nullptr) return std::nullopt;
  if (v->text != "default" && v->text != "always" && v->text != "never")
    return Error{v->written, v->text, "default, always or never", ""};
  if (!job.fsdp) {
    job.out.ignore(v->written, v->text, "no effect without FSDP");
  } else if (v->text == "never" && job.pp == 1 && job.replicate == 1) {
    job.out.set(v->written, v->text, "fsdp", "shard_grad_op");
  } else if (v->text == "never" && job.pp == 1) {
    job.out.unsupported(v->written, v->text, "HSDP keeping gathered parameters to the backward");
  } else if (v->text == "always" && job.pp > 1) {
    job.out.unsupported(v->written, v->text,
                        "resharding after each forward under PP (vramplan keeps each stage "
                        "gathered, as torchtitan's default)");
  } else {
    job.out.understood(v->written, v->text, "torchtitan's default resharding");
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> read_titan_parallelism(TitanJob& job) {
  const std::pair<const char*, int64_t*> degrees[] = {
      {"parallelism.data_parallel_replicate_degree", &job.replicate},
      {"parallelism.tensor_parallel_degree", &job.tp},
      {"parallelism.pipeline_parallel_degree", &job.pp},
      {"parallelism.context_parallel_degree", &job.cp}};
  for (const auto& [key, target] : degrees)
    if (Result<int64_t> d = degree(job, key, *target, false); !d) return d.error();
  if (Result<int64_t> d = degree(job, "parallelism.data_parallel_shard_degree", job.shard, true);
      !d)
    return d.error();
  for (const auto& [key, setting, value] :
       {std::tuple{"parallelism.tensor_parallel_degree", "tp", job.tp},
        std::tuple{"parallelism.pipeline_parallel_degree", "pp", job.pp},
        std::tuple{"parallelism.context_parallel_degree", "cp", job.cp}})
    if (const TitanValue* v = job.keys.peek(key)) job.out.set(v->written, v->text, setting, value);
  if (auto e = world_and_shard(job)) return e;
  if (auto e = data_parallel(job)) return e;
  if (auto e = experts(job)) return e;
  if (auto e = tensor_parallel_options(job)) return e;
  return reshard_policy(job);
}

}  // namespace vramplan::interop

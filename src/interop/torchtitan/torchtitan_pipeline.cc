// A torchtitan job's pipeline (schedule, stages per rank, their layers, microbatches) and its
// batch (torchtitan/distributed/pipeline_parallel.py pipeline_llm and build_pipeline_schedule,
// train.py's gradient accumulation).
#include <fmt/format.h>

#include "interop/torchtitan/torchtitan_job.h"
#include "interop/torchtitan/torchtitan_layout.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

constexpr const char* kPipelineKeys[] = {
    "parallelism.pipeline_parallel_schedule",
    "parallelism.pipeline_parallel_schedule_csv",
    "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_microbatches",
    "parallelism.pipeline_parallel_layers_per_stage",
    "parallelism.pipeline_parallel_first_stage_less_layers",
    "parallelism.pipeline_parallel_last_stage_less_layers",
    "parallelism.pipeline_parallel_split_points",
    "parallelism.module_fqns_per_model_part",
};

Result<int64_t> positive(const TitanJob::Read& r) {
  Result<int64_t> n = integer_value(r.key, r.value);
  if (!n) return n;
  if (*n < 1) return Error{r.key, r.text, "an integer ≥ 1", ""};
  return n;
}

// Stages per rank: from pipeline_parallel_layers_per_stage, else 1 for a single-stage schedule
// and 2 for a looped one.
Result<int64_t> stages_per_rank(TitanJob& job, const TitanSchedule& schedule,
                                const std::string& schedule_text, int64_t in, int64_t out) {
  const TitanValue* v = job.keys.take("parallelism.pipeline_parallel_layers_per_stage");
  if (v == nullptr) return schedule.multi_stage ? 2 : 1;
  Result<int64_t> per_stage = positive({v->value, v->written, v->text, true});
  if (!per_stage) return per_stage.error();
  const int64_t effective = job.flavor->n_layers + in + out;
  const int64_t stages = (effective + *per_stage - 1) / *per_stage;
  const int64_t spr = stages / job.pp;
  if (stages % job.pp != 0 || (!schedule.multi_stage && spr != 1) ||
      (schedule.multi_stage && spr < 2))
    return Error{v->written, v->text,
                 fmt::format("layers per stage giving {} per rank ({} stages over {} ranks)",
                             schedule.multi_stage ? "2 or more stages" : "one stage",
                             job.pp * (schedule.multi_stage ? 2 : 1), job.pp),
                 fmt::format("{} layers (with the embedding and output) make {} stages for the "
                             "{} schedule",
                             effective, stages, schedule_text)};
  job.out.understood(v->written, v->text, fmt::format("{} stages per rank", spr));
  return spr;
}

// Microbatches: local_batch_size / pipeline_parallel_microbatch_size (or, in 2024,
// pipeline_parallel_microbatches of them).
Result<int64_t> microbatch_size(TitanJob& job) {
  const TitanValue* count = job.keys.take("parallelism.pipeline_parallel_microbatches");
  const TitanValue* size = job.keys.peek("parallelism.pipeline_parallel_microbatch_size");
  if (count != nullptr && size == nullptr) {
    Result<int64_t> n = positive({count->value, count->written, count->text, true});
    if (!n) return n.error();
    if (job.local_batch % *n != 0)
      return Error{count->written, count->text,
                   fmt::format("a divisor of {} = {}", job.local_batch_key, job.local_batch), ""};
    job.out.understood(count->written, count->text,
                       fmt::format("microbatches of {}", job.local_batch / *n));
    return job.local_batch / *n;
  }
  if (count != nullptr)
    job.out.ignore(count->written, count->text, "pipeline_parallel_microbatch_size is given");
  TitanJob::Read r = job.read("parallelism.pipeline_parallel_microbatch_size", 1);
  Result<int64_t> n = positive(r);
  if (!n) return n.error();
  if (job.local_batch % *n != 0)
    return Error{r.key, r.text,
                 fmt::format("a divisor of {} = {}", job.local_batch_key, job.local_batch), ""};
  return *n;
}

std::optional<Error> pipeline(TitanJob& job, int64_t& micro) {
  TitanJob::Read sched = job.read("parallelism.pipeline_parallel_schedule", "1F1B");
  const TitanSchedule* schedule = find_titan_schedule(sched.text);
  if (schedule == nullptr)
    return Error{sched.key, sched.text, titan_schedule_names(), "not a pipeline schedule"};
  if (const TitanValue* v = job.keys.take("parallelism.pipeline_parallel_schedule_csv")) {
    if (v->text.empty())
      job.out.ignore(v->written, v->text, "no CSV schedule: no effect");
    else
      job.out.unsupported(v->written, v->text, "a pipeline schedule read from a CSV file");
  }
  TitanJob::Read in = job.read("parallelism.pipeline_parallel_first_stage_less_layers", 1);
  TitanJob::Read out = job.read("parallelism.pipeline_parallel_last_stage_less_layers", 1);
  Result<int64_t> in_weight = integer_value(in.key, in.value);
  Result<int64_t> out_weight = integer_value(out.key, out.value);
  if (!in_weight) return in_weight.error();
  if (!out_weight) return out_weight.error();
  for (const TitanJob::Read* r : {&in, &out})
    if (r->given && r->text != "1")
      job.out.unsupported(r->key, r->text,
                          "a split weighing the embedding or output other than one layer "
                          "(estimated as one)");
    else if (r->given)
      job.out.understood(r->key, r->text, "counted as one layer of the split");
  for (const char* key :
       {"parallelism.module_fqns_per_model_part", "parallelism.pipeline_parallel_split_points"})
    if (const TitanValue* v = job.keys.take(key))
      job.out.unsupported(v->written, v->text,
                          "stage boundaries given by name (estimated with torchtitan's "
                          "generated split)");
  Result<int64_t> spr = stages_per_rank(job, *schedule, sched.text, *in_weight, *out_weight);
  if (!spr) return spr.error();
  job.vpp = *spr;
  job.rank_layers = titan_rank_layers(job.flavor->n_layers, job.pp, job.vpp, *in_weight,
                                      *out_weight, schedule->v_shape);
  if (job.rank_layers.empty())
    return Error{titan_key(job, "parallelism.pipeline_parallel_degree"), std::to_string(job.pp),
                 fmt::format("a split torchtitan makes of {} layers", job.flavor->n_layers),
                 fmt::format("{} stages cannot each hold a layer", job.pp * job.vpp)};
  job.out.set(sched.key, sched.text, "schedule", schedule->vramplan);
  if (job.vpp > 1) job.out.set(sched.key, sched.text, "vpp", job.vpp);
  if (!schedule->modelled)
    job.out.unsupported(sched.key, sched.text,
                        fmt::format("the memory of the {} schedule (estimated as {})", sched.text,
                                    schedule->vramplan));
  Result<int64_t> size = microbatch_size(job);
  if (!size) return size.error();
  micro = *size;
  return std::nullopt;
}

}  // namespace

std::optional<Error> read_titan_pipeline(TitanJob& job) {
  int64_t micro = job.local_batch;
  std::string micro_key = job.local_batch_key;
  if (job.pp > 1) {
    if (auto e = pipeline(job, micro)) return e;
    if (const TitanValue* v = job.keys.peek("parallelism.pipeline_parallel_microbatch_size"))
      micro_key = v->written;
  } else {
    job.rank_layers = {job.flavor->n_layers};
    for (const char* key : kPipelineKeys)
      if (const TitanValue* v = job.keys.take(key))
        job.out.ignore(v->written, v->text, "pipeline_parallel_degree is 1: no pipeline");
  }
  job.out.set(micro_key, std::to_string(micro), "micro_batch", micro);
  if (micro_key != job.local_batch_key)
    job.out.understood(job.local_batch_key, std::to_string(job.local_batch),
                       fmt::format("{} microbatches of {} per data-parallel rank and step",
                                   job.local_batch / micro, micro));
  // A step is local_batch_size per data-parallel rank, or global_batch_size by gradient
  // accumulation (a multiple of local_batch_size · dp).
  const TitanJob::Read global = job.read("training.global_batch_size", -1);
  Result<int64_t> g = integer_value(global.key, global.value);
  if (!g) return g.error();
  const int64_t dp = job.shard > 0 ? job.replicate * job.shard : 0;
  if (*g > 0) {
    if (dp > 0 && *g % (job.local_batch * dp) != 0)
      return Error{global.key, global.text,
                   fmt::format("a multiple of local_batch_size · dp = {}", job.local_batch * dp),
                   ""};
    job.out.set(global.key, global.text, "global_batch", *g);
    return std::nullopt;
  }
  if (global.given)
    job.out.understood(global.key, global.text, "local_batch_size × dp (no accumulation)");
  if (dp > 0) {
    job.out.set(job.local_batch_key, std::to_string(job.local_batch), "global_batch",
                job.local_batch * dp);
  } else if (job.pp > 1) {
    job.out.warn(fmt::format(
        "a step runs {} / {} = {} microbatches per data-parallel rank, but the world size is "
        "unknown (data_parallel_shard_degree = -1 and no launcher line): give --global-batch "
        "(local batch × dp) for vramplan to count them",
        job.local_batch, micro, job.local_batch / micro));
  }
  return std::nullopt;
}

}  // namespace vramplan::interop

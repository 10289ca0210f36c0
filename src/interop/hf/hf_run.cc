#include "interop/hf/hf_run.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/text.h"

namespace vramplan::interop::hf {
namespace {

using nlohmann::json;

bool names_deepspeed(const json* trainer) {
  if (trainer == nullptr) return false;
  for (const char* key : {"deepspeed", "deepspeed_config"}) {
    const json* v = trainer->contains(key) ? &(*trainer)[key] : nullptr;
    if (v != nullptr && !v->is_null() && value_text(*v) != "false") return true;
  }
  return false;
}

bool uses_deepspeed(const HfDocs& d) {
  if (d.deepspeed != nullptr || names_deepspeed(d.trainer)) return true;
  if (d.accelerate == nullptr || !d.accelerate->contains("distributed_type")) return false;
  return to_lower(value_text((*d.accelerate)["distributed_type"])) == "deepspeed";
}

struct Chosen {
  std::optional<Precision> precision;
  std::string key, value;
  // Other keys that say the same precision: listed as understood.
  std::vector<std::pair<std::string, std::string>> agreeing;
};

// The precision the run trains in: what DeepSpeed's config (or, for "auto", the Trainer) says
// under DeepSpeed, else the Trainer's --bf16 / --fp16, else accelerate's mixed_precision. A
// Trainer flag and accelerate's setting that disagree are an error.
Result<Chosen> choose_precision(const TrainerArgs& ta, const AccelerateFacts& acc,
                                const DeepspeedFacts* ds) {
  Chosen c;
  if (ds != nullptr) {
    if (!ds->precision) return c;  // "auto" without TrainingArguments: warned
    c = {ds->precision, ds->precision_key, ds->precision_value, {}};
    if (ta.given && !ta.precision_key.empty()) c.agreeing.push_back({ta.precision_key, "true"});
  } else if (ta.given) {
    c.precision = ta.bf16 ? Precision::kBf16 : ta.fp16 ? Precision::kFp16 : Precision::kFp32;
    c.key = ta.precision_key.empty() ? "(neither bf16 nor fp16 in the TrainingArguments)"
                                     : ta.precision_key;
    c.value = ta.precision_key.empty() ? "" : "true";
  }
  if (!acc.precision) return c;
  const bool trainer_says = ds == nullptr && ta.given && !ta.precision_key.empty();
  if ((ds != nullptr || trainer_says) && *c.precision != *acc.precision)
    return Error{acc.precision_key, acc.precision_value,
                 fmt::format("{} (as {} says)", precision_name(*c.precision), c.key),
                 "the run's precision is set twice, differently"};
  if (ds == nullptr && !trainer_says) {
    c = {acc.precision, acc.precision_key, acc.precision_value, {}};
    if (ta.given && ta.precision_key.empty())
      c.agreeing.push_back({"(neither bf16 nor fp16 in the TrainingArguments)", ""});
  } else {
    c.agreeing.push_back({acc.precision_key, acc.precision_value});
  }
  return c;
}

bool shards_parameters(const ImportBuilder& out) {
  if (!out.has("fsdp")) return false;
  const std::string mode = value_text(out.get("fsdp"));
  return mode != "none" && mode != "no_shard";
}

// Without DeepSpeed: fp32 weights under autocast (HF Trainer), or the dtype the script loads the
// weights in (torch_dtype); FSDP under a mixed-precision policy gathers and reduces in the
// compute dtype (accelerate's FullyShardedDataParallelPlugin.set_mixed_precision:
// param_dtype = reduce_dtype = the mixed-precision dtype).
void set_plain_precision(const Chosen& c, const TrainerArgs& ta, ImportBuilder& out) {
  if (ta.weights_dtype) {
    set_precision(out, ta.weights_dtype_key, precision_name(*ta.weights_dtype), *ta.weights_dtype,
                  Weights::kPure);
    if (c.precision && c.precision != ta.weights_dtype && !c.value.empty())
      out.understood(
          c.key, c.value,
          "autocast over weights loaded in " + std::string(precision_name(*ta.weights_dtype)));
    return;
  }
  if (!c.precision) return;
  set_precision(out, c.key, c.value, *c.precision, Weights::kAutocast);
  if (shards_parameters(out) && *c.precision != Precision::kFp32) {
    const std::string dtype(dtype_name(precision_dtype(*c.precision)));
    out.put("fsdp_mixed_precision", true, c.key);
    out.put("reduce_dtype", dtype, c.key);
    out.understood(c.key, c.value,
                   "FSDP mixed precision: all-gathers and reduce-scatters in " + dtype +
                       " (fsdp_mixed_precision, reduce_dtype = " + dtype + ")");
  }
}

// PEFT keeps LoRA adapters in fp32 (get_peft_model autocast_adapter_dtype); DeepSpeed casts the
// whole module, adapters included, to its compute dtype (engine: module.bfloat16()).
void set_adapters(bool deepspeed, const TrainerArgs& ta, ImportBuilder& out) {
  if (!out.has("finetune")) return;
  const std::string key = out.key_of("finetune");
  if (deepspeed) {
    const std::string dtype = out.has("param_dtype") ? value_text(out.get("param_dtype")) : "bf16";
    out.put("adapter_dtype", dtype, key);
    out.understood(key, "", "adapter_dtype = " + dtype + " (DeepSpeed casts the adapters)");
    return;
  }
  out.put("adapter_dtype", "fp32", key);
  std::string what = "adapter_dtype = fp32 (PEFT keeps adapters in fp32)";
  // Optimizer states follow the trainable adapters, not the frozen base.
  if (ta.weights_dtype && out.key_of("optimizer_dtype") == ta.weights_dtype_key) {
    out.put("optimizer_dtype", "fp32", key);
    what += ", optimizer_dtype = fp32 (the adapters' states)";
  }
  out.understood(key, "", what);
}

void set_shard_group(const HfDocs& d, const AccelerateFacts& acc, ImportBuilder& out) {
  if (!out.has("fsdp") || value_text(out.get("fsdp")) != "hybrid_shard") return;
  const int64_t per_node =
      acc.machines > 0 && acc.processes > 0 ? acc.processes / acc.machines : d.per_node;
  if (per_node > 0)
    out.put("fsdp_shard_group", per_node, out.key_of("fsdp"));
  else
    out.warn(
        "hybrid_shard shards within a node, whose GPU count the text does not say: give "
        "--fsdp-shard-group (vramplan shards over all ranks)");
}

}  // namespace

Result<Imported> import_hf_run(const HfDocs& d, ImportBuilder out) {
  const bool deepspeed = uses_deepspeed(d);
  out.set(deepspeed ? "(DeepSpeed runs the model)" : "(HF Trainer / accelerate)", "", "framework",
          deepspeed ? kDeepspeedFramework : kHfTrainerFramework);
  if (d.world > 0) out.set(d.world_from, std::to_string(d.world), "gpus", d.world);
  TrainerArgs ta;
  if (d.trainer != nullptr) {
    DocKeys keys(*d.trainer, d.trainer_prefix);
    Result<TrainerArgs> read = read_training_args(keys, out);
    if (!read) return read.error();
    ta = *read;
  }
  AccelerateFacts acc;
  if (d.accelerate != nullptr) {
    DocKeys keys(*d.accelerate);
    for (const auto& [path, shown] : d.accelerate_shown_as) keys.show_as(path, shown);
    Result<AccelerateFacts> read = read_accelerate_config(keys, out);
    if (!read) return read.error();
    acc = *read;
  }
  if (ta.given) {  // TrainingArguments' defaults
    if (!out.has("micro_batch"))
      out.set("(per_device_train_batch_size: the Trainer's default)", "8", "micro_batch", 8);
    if (!out.has("grad_accum"))
      out.set("(gradient_accumulation_steps: the Trainer's default)", "1", "grad_accum", 1);
  }
  DeepspeedFacts ds;
  const json* ds_doc = d.deepspeed != nullptr ? d.deepspeed : ta.deepspeed_inline;
  if (ds_doc != nullptr) {
    DocKeys keys(*ds_doc, d.deepspeed != nullptr ? d.deepspeed_prefix : ta.deepspeed_key + ".");
    const DeepspeedContext ctx{&ta, d.beside};
    Result<DeepspeedFacts> read = read_deepspeed_config(keys, ctx, out);
    if (!read) return read.error();
    ds = *read;
  }
  if (ta.deepspeed_inline != nullptr)
    out.understood(ta.deepspeed_key, "{...}", "the DeepSpeed config, given inline");
  else if (!ta.deepspeed_key.empty() && d.deepspeed != nullptr)
    out.understood(ta.deepspeed_key, ta.deepspeed_path, "the DeepSpeed config it names");
  else if (!ta.deepspeed_path.empty() &&
           std::none_of(d.missing.begin(), d.missing.end(),
                        [&](const auto& m) { return m.first == ta.deepspeed_key; }))
    out.unsupported(ta.deepspeed_key, ta.deepspeed_path,
                    "a DeepSpeed config this text names but does not hold (its ZeRO stage, "
                    "buckets and precision are unknown: vramplan keeps DeepSpeed's ZeRO-2 and "
                    "bf16; give the file with the text: the CLI reads it beside the --from file, "
                    "the API takes it in from_files)");
  for (const auto& [key, path] : d.missing)
    out.unsupported(key, path,
                    "a config file this text names but does not hold (the CLI reads it beside "
                    "the --from file, the API takes it in from_files, or the script writes it "
                    "as a here-document)");
  Result<Chosen> chosen = choose_precision(ta, acc, ds_doc != nullptr ? &ds : nullptr);
  if (!chosen) return chosen.error();
  for (const auto& [key, value] : chosen->agreeing)
    out.understood(
        key, value,
        fmt::format("{}, as {} {}", chosen->precision ? precision_name(*chosen->precision) : "",
                    chosen->key, chosen->value));
  if (deepspeed) {
    if (chosen->precision)
      set_precision(out, chosen->key, chosen->value, *chosen->precision, Weights::kMaster);
    if (ds.fp32_grad_accum)
      out.set(ds.fp32_grad_accum_key, ds.fp32_grad_accum_value, "fp32_grad_accum",
              *ds.fp32_grad_accum);
  } else {
    set_plain_precision(*chosen, ta, out);
  }
  set_adapters(deepspeed, ta, out);
  set_shard_group(d, acc, out);
  if (deepspeed && shards_parameters(out))
    return Error{out.key_of("fsdp"), value_text(out.get("fsdp")), "FSDP or DeepSpeed, not both",
                 "the run names both"};
  return out.finish();
}

}  // namespace vramplan::interop::hf

// The model (model.name and model.flavor), training lengths and dtypes, mixed precision, the
// float8 / MX converters, torch.compile and the optimizer of a torchtitan job config.
#include <fmt/format.h>

#include <algorithm>

#include "interop/torchtitan/torchtitan_job.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

std::string default_key(const std::string& key, const std::string& text) {
  return fmt::format("(default {} = {})", key, text);
}

// torchao keeps the high-precision input and weight for the backward of its float8 and MX
// linears (torchao/float8/float8_linear.py and prototype/moe_training/mxfp8_linear.py:
// ctx.save_for_backward(input_hp, weight_hp)) and casts per matmul, keeping no fp8 weight copy:
// what such a layer keeps is what a bf16 one keeps. vramplan's fp8 setting is Transformer
// Engine's (fp8 saved inputs, cached fp8 weights), so it is not set.
constexpr const char* kTorchaoKeeps =
    "torchao keeps the bf16 input and weight for the backward and casts per matmul "
    "(torchao/float8/float8_linear.py): estimated as bf16";

struct Converters {
  bool float8 = false, mx = false, grouped = false;
};

std::optional<Error> read_converters(TitanJob& job, Converters& c) {
  const std::string accepted =
      "float8, mx, quantize.linear.float8, quantize.linear.mx, quantize.grouped_mm.float8, "
      "quantize.grouped_mm.mx";
  if (const TitanValue* v = job.keys.take("model.converters")) {
    json list = v->value;
    if (list.is_string()) {  // "--model.converters float8,mx" on a command line
      const std::string names = list.get<std::string>();
      list = json::array();
      for (size_t start = 0; start <= names.size();) {
        const size_t comma = std::min(names.find(',', start), names.size());
        list.push_back(names.substr(start, comma - start));
        start = comma + 1;
      }
    }
    if (!list.is_array()) return Error{v->written, v->text, "a list of: " + accepted, ""};
    for (const json& item : list) {
      const std::string name = item.is_string() ? item.get<std::string>() : item.dump();
      if (name == "float8" || name == "quantize.linear.float8") {
        c.float8 = true;
        job.out.understood(v->written, name, std::string("float8 linears: ") + kTorchaoKeeps);
      } else if (name == "mx" || name == "quantize.linear.mx") {
        c.mx = true;
        job.out.understood(v->written, name, std::string("MX linears: ") + kTorchaoKeeps);
      } else if (name == "quantize.grouped_mm.float8" || name == "quantize.grouped_mm.mx") {
        c.grouped = true;
        job.out.unsupported(v->written, name,
                            "low-precision grouped GEMMs of the experts (estimated as bf16)");
      } else {
        return Error{v->written, name, accepted, "not a torchtitan model converter"};
      }
    }
  }
  // torchtitan of 2024: [float8] enable_float8_linear instead of the converter.
  if (const TitanValue* v = job.keys.take("float8.enable_float8_linear")) {
    Result<bool> on = job.keys.boolean(*v);
    if (!on) return on.error();
    if (*on) {
      c.float8 = true;
      job.out.understood(v->written, v->text, std::string("float8 linears: ") + kTorchaoKeeps);
    } else {
      job.out.ignore(v->written, v->text, kNoMemoryEffect);
    }
  }
  return std::nullopt;
}

// The converters' own sections: read when their converter is on, else of no effect.
std::optional<Error> read_converter_options(TitanJob& job, const Converters& c) {
  if (const TitanValue* v = job.keys.take("quantize.linear.float8.enable_fsdp_float8_all_gather")) {
    Result<bool> on = job.keys.boolean(*v);
    if (!on) return on.error();
    if (c.float8 && *on && job.fsdp)
      job.out.unsupported(v->written, v->text,
                          "FSDP all-gathers the float8 weights: its unsharded parameter buffers "
                          "are half of the bf16 ones vramplan counts");
    else
      job.out.ignore(v->written, v->text,
                     c.float8 ? "no effect without FSDP or when false"
                              : "the float8 converter is not in model.converters: no effect");
  }
  for (const char* prefix :
       {"quantize.linear.float8.", "quantize.linear.mx.", "quantize.grouped_mm."}) {
    const bool on = std::string(prefix) == "quantize.linear.float8."
                        ? c.float8
                        : (std::string(prefix) == "quantize.linear.mx." ? c.mx : c.grouped);
    for (const auto& [key, v] : job.keys.untaken()) {
      if (key.rfind(prefix, 0) != 0) continue;
      job.keys.take(key);
      job.out.ignore(v.written, v.text,
                     on ? kNoMemoryEffect : "its converter is not in model.converters: no effect");
    }
  }
  return std::nullopt;
}

// torch.compile: under full checkpointing only the layer being recomputed sees its fusions (the
// published compiled runs are predicted as eager, data/measurements/README.md); otherwise it
// changes what each layer saves. Compiling the loss fuses its fp32 upcast of the logits.
std::optional<Error> read_compile(TitanJob& job) {
  const TitanValue* enable = job.keys.take("compile.enable");
  const TitanValue* components = job.keys.take("compile.components");
  if (enable == nullptr) {
    if (components) job.out.ignore(components->written, components->text, "compile is off");
    return std::nullopt;
  }
  Result<bool> on = job.keys.boolean(*enable);
  if (!on) return on.error();
  if (!*on) {
    job.out.understood(enable->written, enable->text, "eager mode");
    if (components) job.out.ignore(components->written, components->text, "compile is off");
    return std::nullopt;
  }
  // torchtitan of 2024 (training.compile) compiled the transformer blocks only.
  json parts = json::array({"model"});
  if (components)
    parts = components->value.is_array() ? components->value : json::array({components->value});
  else if (enable->written == "compile.enable")
    parts = json::array({"model", "loss"});
  const bool model = std::find(parts.begin(), parts.end(), json("model")) != parts.end();
  const bool loss = std::find(parts.begin(), parts.end(), json("loss")) != parts.end();
  if (components) job.out.understood(components->written, components->text, "what is compiled");
  if (model && job.recompute == "full")
    job.out.understood(enable->written, enable->text,
                       "compiled layers under full checkpointing: only the layer being recomputed "
                       "sees the fusions (estimated as eager)");
  else if (model)
    job.out.unsupported(enable->written, enable->text,
                        fmt::format("torch.compile fuses element-wise ops and changes what each "
                                    "layer saves with recompute {}",
                                    job.recompute));
  if (loss)
    job.out.unsupported(enable->written, enable->text + " (loss)",
                        "the compiled loss fuses its fp32 upcast of the logits (vramplan counts "
                        "the eager loss's copies)");
  return std::nullopt;
}

std::optional<Error> read_optimizer(TitanJob& job) {
  TitanJob::Read name = job.read("optimizer.name", "AdamW");
  if (name.text != "AdamW" && name.text != "Adam")
    return Error{name.key, name.text, "AdamW or Adam", "not a torchtitan optimizer"};
  job.out.set(name.key, name.text, "optimizer", "adamw");
  if (const TitanValue* v = job.keys.take("optimizer.implementation")) {
    if (v->text == "foreach")
      job.out.unsupported(v->written, v->text, "foreach Adam's state-sized temporary in the step");
    else if (v->text == "fused" || v->text == "for-loop")
      job.out.ignore(v->written, v->text, kNoMemoryEffect);
    else
      return Error{v->written, v->text, "for-loop, foreach or fused", ""};
  }
  if (const TitanValue* v = job.keys.take("optimizer.fused")) {  // torchtitan of 2024
    Result<bool> fused = job.keys.boolean(*v);
    if (!fused) return fused.error();
    if (*fused)
      job.out.ignore(v->written, v->text, kNoMemoryEffect);
    else
      job.out.unsupported(v->written, v->text, "foreach Adam's state-sized temporary in the step");
  }
  if (const TitanValue* v = job.keys.take("optimizer.early_step_in_backward")) {
    Result<bool> early = job.keys.boolean(*v);
    if (!early) return early.error();
    if (*early)
      job.out.unsupported(v->written, v->text,
                          "optimizer steps inside the backward free each gradient early");
    else
      job.out.ignore(v->written, v->text, kNoMemoryEffect);
  }
  return std::nullopt;
}

// The compute dtype: FSDP2's MixedPrecisionPolicy when FSDP is on (torchtitan's conventions);
// torch.autocast under DDP or on one GPU; none at all with TP or PP and no FSDP
// (torchtitan/distributed/utils.py maybe_enable_amp: "Mixed precision training with TP or PP is
// only supported when FSDP/HSDP/CP is enabled").
std::optional<Error> read_mixed_precision(TitanJob& job, bool pure_bf16) {
  TitanJob::Read param = job.read("training.mixed_precision_param", "bfloat16");
  TitanJob::Read reduce = job.read("training.mixed_precision_reduce", "float32");
  for (const TitanJob::Read* r : {&param, &reduce})
    if (r->text != "bfloat16" && r->text != "float32")
      return Error{r->key, r->text, "bfloat16 or float32", ""};
  const char* compute = param.text == "bfloat16" ? "bf16" : "fp32";
  if (pure_bf16) {
    if (param.given) job.out.ignore(param.key, param.text, "training.dtype is bfloat16 already");
  } else if (job.fsdp) {
    if (param.given || param.text != "bfloat16")
      job.out.set(param.key, param.text, "activation_dtype", compute);
  } else if (job.tp > 1 || job.pp > 1) {
    job.out.set("(TP or PP without FSDP: no mixed precision, maybe_enable_amp)", "float32",
                "activation_dtype", "fp32");
    if (param.given) job.out.ignore(param.key, param.text, "no effect with TP or PP and no FSDP");
  } else {
    job.out.set(param.key, param.text, "activation_dtype", compute);
    if (param.text == "bfloat16")
      job.out.warn(
          "torchtitan runs DDP and single-GPU jobs under torch.autocast, which keeps a bf16 copy "
          "of each weight for the backward; vramplan counts none under torchtitan's conventions");
  }
  if (reduce.given) {
    if (job.fsdp && !pure_bf16)
      job.out.set(reduce.key, reduce.text, "reduce_dtype",
                  reduce.text == "bfloat16" ? "bf16" : "fp32");
    else
      job.out.ignore(reduce.key, reduce.text, "applies to FSDP's reduce-scatter only");
  }
  return std::nullopt;
}

}  // namespace

TitanJob::Read TitanJob::read(const std::string& key, json fallback) {
  if (const TitanValue* v = keys.take(key)) return {v->value, v->written, v->text, true};
  const std::string text = value_text(fallback);
  return {std::move(fallback), default_key(key, text), text, false};
}

std::string titan_key(const TitanJob& job, const std::string& key) {
  const TitanValue* v = job.keys.peek(key);
  return v ? v->written : "(default " + key + ")";
}

std::optional<Error> read_titan_model(TitanJob& job) {
  TitanJob::Read name = job.read("model.name", "llama3");
  TitanJob::Read flavor = job.read("model.flavor", "debugmodel");
  if (titan_flavor_names(name.text).empty())
    return Error{name.key, name.text, titan_model_names(),
                 "not a torchtitan model whose flavors vramplan knows"};
  job.flavor = find_titan_flavor(name.text, flavor.text);
  if (job.flavor == nullptr)
    return Error{
        flavor.key, flavor.text,
        fmt::format("a flavor of torchtitan's {}: {}", name.text, titan_flavor_names(name.text)),
        ""};
  if (const TitanValue* v = job.keys.peek("training.seq_len")) {
    Result<int64_t> seq = job.keys.integer(*v);
    if (seq && *seq > 0) job.seq_len = *seq;
  }
  job.out.understood(name.key, name.text, fmt::format("torchtitan's {} model", name.text));
  if (job.flavor->preset != nullptr) {
    job.out.set(flavor.key, flavor.text, "model", job.flavor->preset);
  } else {
    job.out.put("model_config", titan_model_config(*job.flavor, job.seq_len), flavor.key);
    job.out.understood(flavor.key, flavor.text,
                       fmt::format("model_config = the {} flavor's args (torchtitan/models/{}/"
                                   "__init__.py)",
                                   flavor.text, name.text));
  }
  if (const TitanValue* v = job.keys.take("model.norm_type")) {  // torchtitan of 2024
    if (v->text == "rmsnorm" || v->text == "fused_rmsnorm")
      job.out.understood(v->written, v->text, "RMSNorm, as the flavor's");
    else
      job.out.unsupported(v->written, v->text, "LayerNorm in place of the flavor's RMSNorm");
  }
  return std::nullopt;
}

std::optional<Error> read_titan_training(TitanJob& job) {
  job.out.set("(torchtitan)", "", "framework", "torchtitan");
  TitanJob::Read local = job.read("training.local_batch_size", 8);
  Result<int64_t> b = integer_value(local.key, local.value);
  if (!b) return b.error();
  if (*b < 1) return Error{local.key, local.text, "an integer ≥ 1", ""};
  job.local_batch = *b;
  job.local_batch_key = local.key;
  TitanJob::Read seq = job.read("training.seq_len", 2048);
  Result<int64_t> s = integer_value(seq.key, seq.value);
  if (!s) return s.error();
  job.seq_len = *s;
  job.out.set(seq.key, seq.text, "seq_len", *s);
  // training.dtype = bfloat16: parameters, gradients and optimizer states all in bf16, no fp32
  // copy (job_config.py Training.dtype).
  if (const TitanValue* v = job.keys.take("training.dtype")) {
    if (v->text == "bfloat16") {
      for (const char* setting : {"param_dtype", "grad_dtype", "optimizer_dtype"})
        job.out.set(v->written, v->text, setting, "bf16");
      job.out.set(v->written, v->text, "master_weights", false);
    } else if (v->text == "float32") {
      job.out.understood(v->written, v->text, "fp32 parameters (torchtitan's default)");
    } else {
      return Error{v->written, v->text, "bfloat16 or float32", ""};
    }
  }
  if (const TitanValue* v = job.keys.take("training.enable_cpu_offload")) {
    Result<bool> on = job.keys.boolean(*v);
    if (!on) return on.error();
    // FSDP2 CPUOffloadPolicy: parameter and gradient shards on the CPU, the optimizer steps there.
    job.out.set(v->written, v->text, "offload_params", *on ? "cpu" : "none");
    job.out.put("offload_optimizer", *on ? "cpu" : "none", v->written);
  }
  return std::nullopt;
}

std::optional<Error> read_titan_precision(TitanJob& job) {
  const TitanValue* dtype = job.keys.peek("training.dtype");
  if (auto e = read_mixed_precision(job, dtype != nullptr && dtype->text == "bfloat16")) return e;
  Converters converters;
  if (auto e = read_converters(job, converters)) return e;
  if (auto e = read_converter_options(job, converters)) return e;
  if (auto e = read_compile(job)) return e;
  return read_optimizer(job);
}

void list_titan_rest(TitanJob& job) {
  for (const auto& [older, read] : job.keys.repeated())
    job.out.ignore(older.written, older.text, "the same value as " + read + ", read there");
  for (const auto& [key, v] : job.keys.untaken()) {
    const std::string reason = titan_no_effect_reason(key);
    job.out.ignore(v.written, v.text,
                   reason.empty() ? fmt::format("not read by vramplan's torchtitan importer ({} "
                                                "lists it)",
                                                kTitanSource)
                                  : reason);
  }
}

std::optional<Error> read_titan_job(TitanJob& job) {
  if (auto e = read_titan_model(job)) return e;
  if (auto e = read_titan_training(job)) return e;
  if (auto e = read_titan_parallelism(job)) return e;
  if (auto e = read_titan_pipeline(job)) return e;
  if (auto e = read_titan_recompute(job)) return e;
  if (auto e = read_titan_precision(job)) return e;
  list_titan_rest(job);
  return std::nullopt;
}

}  // namespace vramplan::interop

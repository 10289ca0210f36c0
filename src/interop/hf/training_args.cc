#include "interop/hf/training_args.h"

#include <fmt/format.h>

#include "base/text.h"

namespace vramplan::interop::hf {
namespace {

using nlohmann::json;

// Keys only TrainingArguments (or the scripts' argument classes beside them) use.
constexpr const char* kTrainerOnlyKeys[] = {"per_device_train_batch_size",
                                            "per_gpu_train_batch_size",
                                            "gradient_checkpointing",
                                            "model_name_or_path",
                                            "optim",
                                            "num_train_epochs",
                                            "output_dir",
                                            "logging_steps",
                                            "save_strategy",
                                            "eval_strategy",
                                            "evaluation_strategy",
                                            "lr_scheduler_type",
                                            "max_seq_length",
                                            "report_to"};

// Arguments that change nothing vramplan counts: schedules, data, logging, checkpoints,
// evaluation, hub, the dataloader, the tokenizer (TrainingArguments, run_clm, TRL).
const std::initializer_list<const char*> kNoEffect = {"output_dir",
                                                      "overwrite_output_dir",
                                                      "do_",
                                                      "eval",
                                                      "per_device_eval_batch_size",
                                                      "per_gpu_eval_batch_size",
                                                      "prediction_loss_only",
                                                      "learning_rate",
                                                      "weight_decay",
                                                      "adam_",
                                                      "max_grad_norm",
                                                      "num_train_epochs",
                                                      "max_steps",
                                                      "lr_scheduler",
                                                      "warmup_",
                                                      "log",
                                                      "save_",
                                                      "seed",
                                                      "data_seed",
                                                      "run_name",
                                                      "report_to",
                                                      "push_to_hub",
                                                      "hub_",
                                                      "dataloader_",
                                                      "remove_unused_columns",
                                                      "label_names",
                                                      "load_best_model_at_end",
                                                      "metric_for_best_model",
                                                      "greater_is_better",
                                                      "ignore_data_skip",
                                                      "resume_from_checkpoint",
                                                      "group_by_length",
                                                      "length_column_name",
                                                      "include_",
                                                      "disable_tqdm",
                                                      "past_index",
                                                      "ddp_",
                                                      "local_rank",
                                                      "tf32",
                                                      "half_precision_backend",
                                                      "bf16_full_eval",
                                                      "fp16_full_eval",
                                                      "fp16_opt_level",
                                                      "fp16_backend",
                                                      "jit_mode_eval",
                                                      "full_determinism",
                                                      "skip_memory_metrics",
                                                      "label_smoothing",
                                                      "neftune_noise_alpha",
                                                      "gradient_checkpointing_kwargs",
                                                      "torch_empty_cache_steps",
                                                      "torch_compile_backend",
                                                      "torch_compile_mode",
                                                      "average_tokens_across_devices",
                                                      "accelerator_config",
                                                      "batch_eval_metrics",
                                                      "restore_callback_states_from_checkpoint",
                                                      "use_legacy_prediction_loop",
                                                      "optim_args",
                                                      "optim_target_modules",
                                                      "debug",
                                                      "dispatch_batches",
                                                      "split_batches",
                                                      "mp_parameters",
                                                      "ray_scope",
                                                      "trust_remote_code",
                                                      "cache_dir",
                                                      "model_revision",
                                                      "token",
                                                      "use_auth_token",
                                                      "tokenizer_name",
                                                      "use_fast",
                                                      "config_name",
                                                      "config_overrides",
                                                      "low_cpu_mem_usage",
                                                      "dataset",
                                                      "train_file",
                                                      "validation_",
                                                      "max_train_samples",
                                                      "max_eval_samples",
                                                      "streaming",
                                                      "preprocessing_",
                                                      "keep_linebreaks",
                                                      "overwrite_cache",
                                                      "packing",
                                                      "padding_free",
                                                      "completion_only_loss",
                                                      "assistant_only_loss",
                                                      "chat_template",
                                                      "eos_token",
                                                      "pad_token",
                                                      "lora_alpha",
                                                      "lora_task_type",
                                                      "use_rslora",
                                                      "model_init_kwargs",
                                                      "liger_kernel_config",
                                                      "use_mps_device",
                                                      "project",
                                                      "trackio",
                                                      "parallelism_config",
                                                      "activation_offloading"};

std::optional<Error> integer_setting(DocKeys& keys, const char* path, const char* setting,
                                     ImportBuilder& out, std::optional<int64_t>* into = nullptr,
                                     std::string* into_key = nullptr) {
  const json* v = keys.take_set(path);
  if (v == nullptr) return std::nullopt;
  Result<int64_t> n = integer_value(keys.shown(path), *v);
  if (!n) return n.error();
  if (*n < 1) return Error{keys.shown(path), value_text(*v), "a positive integer", ""};
  if (auto e = set_agreeing(out, keys.shown(path), value_text(*v), setting, *n)) return e;
  if (into) *into = *n;
  if (into_key) *into_key = keys.shown(path);
  return std::nullopt;
}

std::optional<bool> flag(DocKeys& keys, const char* path, std::optional<Error>& error) {
  const json* v = keys.take_set(path);
  if (v == nullptr) return std::nullopt;
  Result<bool> b = bool_value(keys.shown(path), *v);
  if (!b) {
    error = b.error();
    return std::nullopt;
  }
  return *b;
}

class Reader {
 public:
  Reader(DocKeys& keys, ImportBuilder& out) : k_(keys), out_(out) {}

  Result<TrainerArgs> run() {
    // A Trainer script's arguments: TrainingArguments' own keys, or --deepspeed naming a config
    // (DeepSpeed's own scripts pass a bare --deepspeed beside --deepspeed_config).
    const json* ds = k_.peek("deepspeed");
    a_.given = looks_like_training_args(k_.doc()) ||
               (ds != nullptr && !ds->is_boolean() && value_text(*ds) != "true");
    if (auto e = read_batch()) return *e;
    if (auto e = read_model()) return *e;
    if (auto e = read_precision()) return *e;
    if (auto e = read_optimizer()) return *e;
    if (auto e = read_peft()) return *e;
    if (auto e = read_fsdp_words(k_, "fsdp", out_, a_.fsdp)) return *e;
    if (auto e = read_fsdp_config(k_, "fsdp_config", out_, a_.fsdp)) return *e;
    read_deepspeed();
    if (auto e = read_unmodelled()) return *e;
    k_.list_rest(out_, [](const std::string& path) {
      return starts_with_any(path, kNoEffect) ? std::string(kNoMemoryEffect)
                                              : "not read by vramplan's TrainingArguments importer";
    });
    return a_;
  }

 private:
  std::optional<Error> read_batch() {
    if (auto e = integer_setting(k_, "per_device_train_batch_size", "micro_batch", out_,
                                 &a_.micro_batch, &a_.micro_batch_key))
      return e;
    if (auto e = integer_setting(k_, "per_gpu_train_batch_size", "micro_batch", out_,
                                 &a_.micro_batch, &a_.micro_batch_key))
      return e;
    if (auto e = integer_setting(k_, "gradient_accumulation_steps", "grad_accum", out_,
                                 &a_.grad_accum, &a_.grad_accum_key))
      return e;
    // The sequence length: TRL's SFTConfig (max_seq_length, newer max_length), run_clm's
    // block_size.
    for (const char* name : {"max_seq_length", "max_length", "block_size", "model_max_length"})
      if (auto e = integer_setting(k_, name, "seq_len", out_)) return e;
    std::optional<Error> error;
    if (std::optional<bool> gc = flag(k_, "gradient_checkpointing", error)) {
      if (*gc)
        return set_agreeing(out_, k_.shown("gradient_checkpointing"), "true", "recompute", "full");
      out_.understood(k_.shown("gradient_checkpointing"), "false",
                      "no recomputation by the Trainer");
    }
    return error;
  }

  std::optional<Error> read_model() {
    for (const char* name : {"model_name_or_path", "model_name", "model_id"})
      if (const json* v = k_.take_set(name)) set_model(out_, k_.shown(name), value_text(*v));
    for (const char* name : {"torch_dtype", "dtype"}) {
      const json* v = k_.take_set(name);
      if (v == nullptr) continue;
      const std::string text = value_text(*v);
      if (to_lower(text) == "auto") {
        out_.understood(k_.shown(name), text,
                        "the checkpoint's dtype: the weights as the model's config.json keeps "
                        "them (bf16 for the presets)");
        a_.weights_dtype = Precision::kBf16;
      } else if (std::optional<Precision> p = precision_of_dtype(text)) {
        a_.weights_dtype = *p;
      } else {
        return Error{k_.shown(name), text, "bfloat16, float16, float32 or auto", ""};
      }
      a_.weights_dtype_key = k_.shown(name);
    }
    if (const json* v = k_.take_set("attn_implementation")) {
      const std::string impl = to_lower(value_text(*v));
      out_.set(k_.shown("attn_implementation"), value_text(*v), "flash_attention", impl != "eager");
    }
    return std::nullopt;
  }

  std::optional<Error> read_precision() {
    std::optional<Error> error;
    const bool bf16 = flag(k_, "bf16", error).value_or(false);
    if (error) return error;
    const bool fp16 = flag(k_, "fp16", error).value_or(false);
    if (error) return error;
    if (bf16 && fp16)
      return Error{k_.shown("fp16"), "true", "one of bf16 and fp16", "both are given"};
    a_.bf16 = bf16;
    a_.fp16 = fp16;
    if (bf16 || fp16) a_.precision_key = k_.shown(bf16 ? "bf16" : "fp16");
    return std::nullopt;
  }

  std::optional<Error> read_optimizer() {
    std::optional<Error> error;
    const bool adafactor = flag(k_, "adafactor", error).value_or(false);  // deprecated switch
    if (error) return error;
    const json* v = k_.take_set("optim");
    if (v == nullptr && adafactor)
      set_optimizer(out_, k_.shown("adafactor"), "true", *hf_optimizer("adafactor"));
    if (v == nullptr) return std::nullopt;
    const std::string name = value_text(*v);
    std::optional<OptimizerChoice> choice = hf_optimizer(name);
    if (!choice) return Error{k_.shown("optim"), name, hf_optimizer_names(), "unknown optimizer"};
    // torch SGD with a momentum given in optim_args ("momentum=0.9").
    if (choice->optimizer == "sgd")
      if (const json* args = k_.peek("optim_args"); args && !args->is_null()) {
        const std::string text = value_text(*args);
        const size_t m = text.find("momentum=");
        if (m != std::string::npos && std::strtod(text.c_str() + m + 9, nullptr) > 0) {
          choice->optimizer = "sgd-momentum";
          choice->note = "torch SGD with momentum (optim_args)";
          k_.take("optim_args");
          out_.understood(k_.shown("optim_args"), text, "SGD momentum: one state per parameter");
        }
      }
    set_optimizer(out_, k_.shown("optim"), name, *choice);
    return std::nullopt;
  }

  // TRL's ModelConfig: PEFT LoRA (use_peft, lora_r, lora_target_modules) and bitsandbytes
  // quantisation of the base (load_in_4bit: QLoRA).
  std::optional<Error> read_peft() {
    std::optional<Error> error;
    a_.peft = flag(k_, "use_peft", error).value_or(false);
    if (error) return error;
    const bool four_bit = flag(k_, "load_in_4bit", error).value_or(false);
    if (error) return error;
    const bool eight_bit = flag(k_, "load_in_8bit", error).value_or(false);
    if (error) return error;
    if (four_bit && !a_.peft)
      return Error{k_.shown("load_in_4bit"), "true", "load_in_4bit with use_peft (QLoRA)",
                   "a 4-bit base trains through adapters only"};
    if (!a_.peft) {
      for (const char* name : {"lora_r", "lora_target_modules", "lora_dropout"})
        if (const json* v = k_.take_set(name))
          out_.ignore(k_.shown(name), value_text(*v), "no use_peft: no adapters");
      if (eight_bit)
        out_.unsupported(k_.shown("load_in_8bit"), "true", "training an 8-bit (LLM.int8) model");
      return std::nullopt;
    }
    out_.set(k_.shown(four_bit ? "load_in_4bit" : "use_peft"), "true", "finetune",
             four_bit ? "qlora" : "lora");
    if (four_bit) out_.understood(k_.shown("use_peft"), "true", "with load_in_4bit: QLoRA");
    if (eight_bit)
      out_.unsupported(k_.shown("load_in_8bit"), "true",
                       "an 8-bit (LLM.int8) base under LoRA (counted in the weights' dtype)");
    // TRL's ModelConfig: lora_r defaults to 16 (vramplan's default too).
    if (auto e = integer_setting(k_, "lora_r", "lora_rank", out_)) return e;
    if (const json* v = k_.take_set("lora_target_modules")) {
      const LoraTargets t = lora_targets_of(name_list(*v));
      if (!t.text.empty())
        out_.set(k_.shown("lora_target_modules"), value_text(*v), "lora_targets", t.text);
      if (!t.unknown.empty())
        out_.unsupported(k_.shown("lora_target_modules"), value_text(*v),
                         "adapters on modules other than the attention and MLP projections");
    }
    read_quantization_details(four_bit);
    return read_lora_extras();
  }

  void read_quantization_details(bool four_bit) {
    if (const json* v = k_.take_set("use_bnb_nested_quant")) {
      const std::string text = value_text(*v);
      if (four_bit && !bool_or(*v, true))
        out_.unsupported(k_.shown("use_bnb_nested_quant"), text,
                         "NF4 without double quantisation (4.5 bits a weight; vramplan counts "
                         "QLoRA's 4.127)");
      else
        out_.understood(k_.shown("use_bnb_nested_quant"), text, "NF4 with double quantisation");
    } else if (four_bit) {
      // TRL's ModelConfig leaves use_bnb_nested_quant False.
      out_.unsupported("(use_bnb_nested_quant not given)", "false",
                       "NF4 without double quantisation (4.5 bits a weight; vramplan counts "
                       "QLoRA's 4.127)");
    }
    if (const json* v = k_.take_set("bnb_4bit_quant_type"); v && to_lower(value_text(*v)) != "nf4")
      out_.unsupported(k_.shown("bnb_4bit_quant_type"), value_text(*v),
                       "4-bit formats other than NF4");
    else if (v)
      out_.understood(k_.shown("bnb_4bit_quant_type"), "nf4", "NF4 base weights");
  }

  std::optional<Error> read_lora_extras() {
    if (const json* v = k_.take_set("lora_dropout")) {
      Result<double> d = number_value(k_.shown("lora_dropout"), *v);
      if (!d) return d.error();
      if (*d > 0)
        out_.unsupported(k_.shown("lora_dropout"), value_text(*v),
                         "LoRA dropout (a dropped copy of each targeted input is kept)");
      else
        out_.understood(k_.shown("lora_dropout"), value_text(*v), "no LoRA dropout");
    }
    for (const char* name : {"lora_modules_to_save", "use_dora"})
      if (const json* v = k_.take_set(name); v && value_text(*v) != "false" && !v->empty())
        out_.unsupported(k_.shown(name), value_text(*v),
                         std::string(name) == "use_dora"
                             ? "DoRA (its magnitude vectors and the weight norm's activations)"
                             : "fully trained copies of the named modules");
    return std::nullopt;
  }

  // --deepspeed ds.json (the Trainer), or DeepSpeed's own --deepspeed --deepspeed_config ds.json.
  void read_deepspeed() {
    const json* v = k_.take_set("deepspeed");
    const json* config = k_.take_set("deepspeed_config");
    if (config != nullptr) {
      a_.deepspeed_key = k_.shown("deepspeed_config");
      a_.deepspeed_path = value_text(*config);
      if (v != nullptr) out_.understood(k_.shown("deepspeed"), value_text(*v), "DeepSpeed on");
      return;
    }
    if (v == nullptr) return;
    a_.deepspeed_key = k_.shown("deepspeed");
    if (v->is_object())
      a_.deepspeed_inline = v;
    else if (!v->is_boolean() && value_text(*v) != "true")
      a_.deepspeed_path = value_text(*v);
  }

  std::optional<Error> read_unmodelled() {
    std::optional<Error> error;
    auto warn_if = [&](const char* name, const char* why) {
      const std::optional<bool> on = flag(k_, name, error);
      if (!on) return;
      if (*on)
        out_.unsupported(k_.shown(name), "true", why);
      else
        out_.understood(k_.shown(name), "false", "off");
    };
    warn_if("torch_compile", "torch.compile (fuses kernels, saves fewer activations)");
    warn_if("use_liger_kernel", "Liger kernels (fused linear cross entropy keeps no logits)");
    warn_if("auto_find_batch_size", "the Trainer halves the batch after an out-of-memory error");
    warn_if("use_cpu", "training on the CPU");
    warn_if("no_cuda", "training on the CPU");
    return error;
  }

  DocKeys& k_;
  ImportBuilder& out_;
  TrainerArgs a_;
};

}  // namespace

json flags_document(const std::vector<std::pair<std::string, std::string>>& flags) {
  // TrainingArguments._VALID_DICT_FIELDS: a value starting with "{" is a JSON object.
  static const std::initializer_list<const char*> kDictFields = {
      "accelerator_config",  "fsdp_config",      "deepspeed", "gradient_checkpointing_kwargs",
      "lr_scheduler_kwargs", "model_init_kwargs"};
  json doc = json::object();
  for (const auto& [flag, value] : flags) {
    const std::string name = flag.substr(2);
    json parsed = value.rfind('{', 0) == 0 && starts_with_any(name, kDictFields)
                      ? json::parse(value, nullptr, false)
                      : json();
    doc[name] = parsed.is_object() ? parsed : json(value);
  }
  return doc;
}

bool looks_like_training_args(const json& doc) {
  if (!doc.is_object()) return false;
  for (const char* key : kTrainerOnlyKeys)
    if (doc.contains(key)) return true;
  return false;
}

Result<TrainerArgs> read_training_args(DocKeys& keys, ImportBuilder& out) {
  return Reader(keys, out).run();
}

}  // namespace vramplan::interop::hf

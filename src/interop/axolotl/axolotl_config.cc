#include "interop/axolotl/axolotl_config.h"

#include <fmt/format.h>

#include "base/text.h"
#include "interop/hf/doc_keys.h"
#include "interop/hf/fsdp_options.h"
#include "interop/hf/hf_common.h"

namespace vramplan::interop::axolotl {
namespace {

using hf::DocKeys;
using nlohmann::json;

// Keys that change nothing vramplan counts: data, evaluation, logging, checkpoints, schedules,
// tokens (axolotl's utils/schemas).
const std::initializer_list<const char*> kNoEffect = {"model_type",
                                                      "tokenizer_",
                                                      "trust_remote_code",
                                                      "datasets",
                                                      "dataset_",
                                                      "test_datasets",
                                                      "val_set_size",
                                                      "output_dir",
                                                      "wandb_",
                                                      "mlflow_",
                                                      "comet_",
                                                      "use_wandb",
                                                      "num_epochs",
                                                      "max_steps",
                                                      "lr_",
                                                      "learning_rate",
                                                      "warmup_",
                                                      "evals_per_epoch",
                                                      "eval_",
                                                      "saves_per_epoch",
                                                      "save_",
                                                      "weight_decay",
                                                      "special_tokens",
                                                      "tokens",
                                                      "logging_steps",
                                                      "resume_from_checkpoint",
                                                      "auto_resume_from_checkpoints",
                                                      "hub_",
                                                      "seed",
                                                      "strict",
                                                      "train_on_inputs",
                                                      "group_by_length",
                                                      "early_stopping_patience",
                                                      "local_rank",
                                                      "chat_template",
                                                      "default_system_message",
                                                      "max_grad_norm",
                                                      "adam_",
                                                      "debug",
                                                      "shuffle_",
                                                      "dataloader_",
                                                      "remove_unused_columns",
                                                      "cosine_",
                                                      "loss_watchdog_",
                                                      "gradient_checkpointing_kwargs",
                                                      "lora_alpha",
                                                      "lora_fan_in_fan_out",
                                                      "lora_model_dir",
                                                      "peft_use_rslora",
                                                      "tf32",
                                                      "is_llama_derived_model",
                                                      "is_mistral_derived_model",
                                                      "is_qwen_derived_model",
                                                      "hf_use_auth_token",
                                                      "profiler_steps",
                                                      "include_tokens_per_second",
                                                      "base_model_config",
                                                      "revision_of_model",
                                                      "optim_args",
                                                      "gc_steps",
                                                      "plugins",
                                                      "sequence_parallel_degree_",
                                                      "ddp_",
                                                      "fsdp_final_state_dict_type",
                                                      "xformers",
                                                      "sample_packing_",
                                                      "pretraining_dataset",
                                                      "flash_attn_",
                                                      "s2_attention"};

// axolotl's CustomSupportedOptimizers beside the HF Trainer's names (utils/schemas/enums.py).
std::optional<hf::OptimizerChoice> axolotl_optimizer(const std::string& name) {
  if (std::optional<hf::OptimizerChoice> c = hf::hf_optimizer(name)) return c;
  const std::string n = to_lower(name);
  if (n == "ao_adamw_8bit")
    return hf::OptimizerChoice{"adam8bit", {}, {}, "torchao 8-bit AdamW", ""};
  if (n == "ao_adamw_4bit")
    return hf::OptimizerChoice{"adamw", false, "fp4", "torchao 4-bit AdamW", "its block scales"};
  if (n == "ao_adamw_fp8")
    return hf::OptimizerChoice{"adamw", false, "fp8", "torchao fp8 AdamW", "its scales"};
  if (n == "optimi_adamw") return hf::OptimizerChoice{"adamw", false, {}, "optimi AdamW", ""};
  if (n == "muon") return hf::OptimizerChoice{"muon", {}, {}, "Muon", ""};
  return std::nullopt;
}

// The ZeRO stage of one of axolotl's bundled configs (deepspeed_configs/zero3_bf16.json), by
// its name; 0 when the name says none.
int64_t bundled_stage(const std::string& path) {
  const size_t at = path.rfind("zero");
  if (at == std::string::npos || at + 4 >= path.size()) return -1;
  const char c = path[at + 4];
  return c >= '0' && c <= '3' ? c - '0' : -1;
}

class Reader {
 public:
  Reader(DocKeys& keys, ImportBuilder& out) : k_(keys), out_(out) {}

  std::optional<Error> run() {
    const json* ds = k_.peek("deepspeed");
    deepspeed_ = ds != nullptr && !ds->is_null();
    out_.set("(axolotl: the HF Trainer)", "", "framework",
             deepspeed_ ? hf::kDeepspeedFramework : hf::kHfTrainerFramework);
    if (const json* m = k_.take_set("base_model"))
      hf::set_model(out_, k_.shown("base_model"), value_text(*m));
    if (auto e = read_adapter()) return e;
    if (auto e = read_batch()) return e;
    if (auto e = read_recompute()) return e;
    if (auto e = read_optimizer()) return e;
    if (auto e = read_precision()) return e;
    read_attention();
    if (auto e = read_parallel()) return e;
    read_unmodelled();
    k_.list_rest(out_, [](const std::string& path) {
      return hf::starts_with_any(path, kNoEffect) ? std::string(kNoMemoryEffect)
                                                  : "not read by vramplan's axolotl importer";
    });
    return std::nullopt;
  }

 private:
  bool flag(const char* path) {
    const json* v = k_.take_set(path);
    return v != nullptr && hf::bool_or(*v, false);
  }

  std::optional<Error> read_adapter() {
    const bool four_bit = flag("load_in_4bit"), eight_bit = flag("load_in_8bit");
    load_in_8bit_ = eight_bit;
    const json* a = k_.take_set("adapter");
    if (a == nullptr) {
      if (four_bit)
        return Error{k_.shown("load_in_4bit"), "true", "adapter: qlora with load_in_4bit",
                     "a 4-bit base trains through adapters only"};
      if (eight_bit) out_.unsupported(k_.shown("load_in_8bit"), "true", "training an 8-bit model");
      for (const char* name : {"lora_r", "lora_target_modules", "lora_target_linear"})
        if (const json* v = k_.take_set(name))
          out_.ignore(k_.shown(name), value_text(*v), "no adapter");
      return std::nullopt;
    }
    const std::string adapter = to_lower(value_text(*a));
    if (adapter != "lora" && adapter != "qlora")
      return Error{k_.shown("adapter"), value_text(*a), "lora or qlora", ""};
    if (adapter == "qlora" && !four_bit)
      return Error{k_.shown("adapter"), "qlora", "qlora with load_in_4bit: true",
                   "axolotl's QLoRA loads the base in 4 bits"};
    out_.set(k_.shown("adapter"), value_text(*a), "finetune", four_bit ? "qlora" : "lora");
    if (four_bit) out_.understood(k_.shown("load_in_4bit"), "true", "NF4 base weights");
    if (eight_bit)
      out_.unsupported(k_.shown("load_in_8bit"), "true",
                       "an 8-bit (LLM.int8) base under LoRA (counted in the weights' dtype)");
    return read_lora();
  }

  std::optional<Error> read_lora() {
    if (const json* r = k_.take_set("lora_r")) {
      Result<int64_t> n = integer_value(k_.shown("lora_r"), *r);
      if (!n) return n.error();
      out_.set(k_.shown("lora_r"), value_text(*r), "lora_rank", *n);
    }
    std::vector<std::string> modules;
    std::string key, value;
    if (const json* t = k_.take_set("lora_target_modules")) {
      modules = hf::name_list(*t);
      key = k_.shown("lora_target_modules");
      value = value_text(*t);
    }
    if (flag("lora_target_linear")) {
      modules = {"all-linear"};
      key = k_.shown("lora_target_linear");
      value = "true";
    }
    if (!modules.empty()) {
      const hf::LoraTargets t = hf::lora_targets_of(modules);
      if (!t.text.empty()) out_.set(key, value, "lora_targets", t.text);
      if (!t.unknown.empty())
        out_.unsupported(key, value,
                         "adapters on modules other than the attention and MLP projections");
    }
    if (const json* d = k_.take_set("lora_dropout")) {
      if (hf::number_or(*d, 0) > 0)
        out_.unsupported(k_.shown("lora_dropout"), value_text(*d),
                         "LoRA dropout (a dropped copy of each targeted input is kept)");
      else
        out_.understood(k_.shown("lora_dropout"), value_text(*d), "no LoRA dropout");
    }
    for (const char* name : {"lora_modules_to_save", "peft_use_dora"})
      if (const json* v = k_.take_set(name); v && !v->empty() && value_text(*v) != "false")
        out_.unsupported(k_.shown(name), value_text(*v),
                         std::string(name) == "peft_use_dora"
                             ? "DoRA (its magnitude vectors and the weight norm's activations)"
                             : "fully trained copies of the named modules (PEFT modules_to_save)");
    return std::nullopt;
  }

  std::optional<Error> positive(const char* path, const char* setting) {
    const json* v = k_.take_set(path);
    if (v == nullptr) return std::nullopt;
    Result<int64_t> n = integer_value(k_.shown(path), *v);
    if (!n || *n < 1) return Error{k_.shown(path), value_text(*v), "a positive integer", ""};
    out_.set(k_.shown(path), value_text(*v), setting, *n);
    return std::nullopt;
  }

  std::optional<Error> read_batch() {
    if (auto e = positive("sequence_len", "seq_len")) return e;
    if (auto e = positive("micro_batch_size", "micro_batch")) return e;
    if (auto e = positive("gradient_accumulation_steps", "grad_accum")) return e;
    // batch_size without gradient_accumulation_steps: axolotl derives the steps from it.
    if (const json* b = k_.take_set("batch_size")) {
      Result<int64_t> n = integer_value(k_.shown("batch_size"), *b);
      const int64_t micro = out_.has("micro_batch") ? out_.get("micro_batch").get<int64_t>() : 1;
      if (!n || *n < micro || *n % micro != 0)
        return Error{k_.shown("batch_size"), value_text(*b),
                     fmt::format("a multiple of micro_batch_size = {}", micro), ""};
      if (auto e = hf::set_agreeing(out_, k_.shown("batch_size"), value_text(*b), "grad_accum",
                                    *n / micro))
        return e;
    }
    for (const char* name : {"sample_packing", "pad_to_sequence_len"})
      if (const json* v = k_.take_set(name))
        out_.understood(k_.shown(name), value_text(*v),
                        hf::bool_or(*v, false) ? "rows of sequence_len tokens, as counted"
                                               : "rows up to sequence_len: the longest is counted");
    return std::nullopt;
  }

  std::optional<Error> read_recompute() {
    const json* gc = k_.take_set("gradient_checkpointing");
    if (gc == nullptr) return std::nullopt;
    const std::string text = value_text(*gc), key = k_.shown("gradient_checkpointing");
    if (text == "offload") {  // the checkpointed layer inputs go to the CPU
      out_.set(key, text, "recompute", "full");
      out_.put("offload_activations", true, key);
      return std::nullopt;
    }
    if (text == "offload_disk") {
      out_.set(key, text, "recompute", "full");
      out_.unsupported(key, text, "offload: the checkpointed layer inputs on disk");
      return std::nullopt;
    }
    Result<bool> on = bool_value(key, *gc);
    if (!on) return Error{key, text, "true, false, offload or offload_disk", ""};
    out_.set(key, text, "recompute", *on ? "full" : "none");
    return std::nullopt;
  }

  std::optional<Error> read_optimizer() {
    const json* v = k_.take_set("optimizer");
    const std::string name = v ? value_text(*v) : "adamw_torch_fused";  // axolotl's default
    const std::string key = v ? k_.shown("optimizer") : "(optimizer: axolotl's default)";
    std::optional<hf::OptimizerChoice> choice = axolotl_optimizer(name);
    if (!choice) {
      out_.unsupported(key, name, "an optimizer vramplan does not know (counted as AdamW)");
      return std::nullopt;
    }
    hf::set_optimizer(out_, key, name, *choice);
    return std::nullopt;
  }

  // utils/config/__init__.py: torch_dtype = bf16 if bf16 (true or auto: the GPUs vramplan
  // knows have it), else fp16 if load_in_8bit or fp16, else fp32; the model is loaded in it.
  std::optional<Error> read_precision() {
    std::string key = "(neither bf16 nor fp16)", value;
    hf::Precision p = hf::Precision::kFp32;
    for (const char* name : {"bf16", "bfloat16", "fp16", "float16"}) {
      const json* v = k_.take_set(name);
      if (v == nullptr || p != hf::Precision::kFp32) {
        if (v) out_.understood(k_.shown(name), value_text(*v), "beside " + key);
        continue;
      }
      const std::string text = value_text(*v);
      const bool is_bf16 = name[0] == 'b';
      if (!(is_bf16 && to_lower(text) == "auto") && !hf::bool_or(*v, false)) {
        if (!bool_value(k_.shown(name), *v))
          return Error{k_.shown(name), text, is_bf16 ? "true, false or auto" : "true or false", ""};
        out_.understood(k_.shown(name), text, "off");
        continue;
      }
      p = is_bf16 ? hf::Precision::kBf16 : hf::Precision::kFp16;
      key = k_.shown(name);
      value = text;
    }
    if (p == hf::Precision::kFp32 && load_in_8bit_) {
      p = hf::Precision::kFp16;
      key = k_.shown("load_in_8bit");
      value = "true";
    }
    if (deepspeed_) {
      hf::set_precision(out_, key, value, p, hf::Weights::kMaster);
      set_adapters(std::string(dtype_name(hf::precision_dtype(p))), false);
    } else {
      hf::set_precision(out_, key, value, p, hf::Weights::kPure);
      set_adapters("fp32", true);
    }
    return std::nullopt;
  }

  // PEFT keeps adapters in fp32 (their optimizer states follow); DeepSpeed casts them.
  void set_adapters(const std::string& dtype, bool states_follow) {
    if (!out_.has("finetune")) return;
    const std::string key = out_.key_of("finetune");
    out_.put("adapter_dtype", dtype, key);
    std::string what = "adapter_dtype = " + dtype;
    if (states_follow && out_.key_of("optimizer_dtype") != out_.key_of("optimizer")) {
      out_.put("optimizer_dtype", "fp32", key);
      what += ", optimizer_dtype = fp32 (PEFT keeps adapters in fp32)";
    }
    out_.understood(key, "", what);
  }

  void read_attention() {
    for (const char* name : {"flash_attention", "sdp_attention", "flex_attention"})
      if (const json* v = k_.take_set(name))
        out_.understood(k_.shown(name), value_text(*v),
                        hf::bool_or(*v, false) ? "no s×s scores kept" : "off");
    if (const json* v = k_.take_set("attn_implementation")) {
      const bool eager = to_lower(value_text(*v)) == "eager";
      out_.set(k_.shown("attn_implementation"), value_text(*v), "flash_attention", !eager);
    }
  }

  std::optional<Error> read_parallel() {
    if (const json* ds = k_.take_set("deepspeed")) {
      const std::string path = value_text(*ds);
      const int64_t stage = bundled_stage(path);
      if (stage >= 0) {
        out_.set(k_.shown("deepspeed"), path, "zero", stage);
        out_.unsupported(k_.shown("deepspeed"), path,
                         "the rest of the DeepSpeed config it names (read by its name only: "
                         "buckets, offload and live parameters are DeepSpeed's defaults)");
      } else {
        out_.unsupported(k_.shown("deepspeed"), path,
                         "a DeepSpeed config this text names but does not hold (vramplan keeps "
                         "DeepSpeed's ZeRO-2: give --zero)");
      }
    }
    hf::FsdpFacts facts;
    if (auto e = hf::read_fsdp_words(k_, "fsdp", out_, facts)) return e;
    if (auto e = hf::read_fsdp_config(k_, "fsdp_config", out_, facts)) return e;
    if (const json* v = k_.take_set("fsdp_version"))
      out_.understood(k_.shown("fsdp_version"), value_text(*v), "FSDP version");
    if (facts.on && deepspeed_)
      return Error{k_.shown("fsdp"), value_text(out_.get("fsdp")), "FSDP or DeepSpeed, not both",
                   ""};
    return std::nullopt;
  }

  void read_unmodelled() {
    if (const json* v = k_.take_set("activation_offloading")) {
      const std::string key = k_.shown("activation_offloading");
      const bool on = hf::bool_or(*v, true);  // true, or "legacy" / "disk" variants
      if (value_text(*v) == "disk")
        out_.unsupported(key, value_text(*v), "offload: activations on disk");
      else
        out_.set(key, value_text(*v), "offload_activations", on);
    }
    for (const char* name :
         {"torch_compile", "liger_fused_linear_cross_entropy", "cut_cross_entropy",
          "liger_glu_activation", "liger_rms_norm", "liger_rope", "liger_layer_norm",
          "unsloth_lora_mlp", "unsloth_lora_qkv", "unsloth_lora_o", "unsloth_cross_entropy_loss",
          "chunked_cross_entropy"}) {
      const json* v = k_.take_set(name);
      if (v == nullptr) continue;
      if (hf::bool_or(*v, true))
        out_.unsupported(k_.shown(name), value_text(*v),
                         std::string(name) + " (its fused kernels keep other tensors)");
      else
        out_.understood(k_.shown(name), value_text(*v), "off");
    }
  }

  DocKeys& k_;
  ImportBuilder& out_;
  bool deepspeed_ = false, load_in_8bit_ = false;
};

}  // namespace

bool looks_like_axolotl_config(const json& doc) {
  if (!doc.is_object() || !doc.contains("base_model")) return false;
  for (const char* key : {"adapter", "sequence_len", "micro_batch_size", "datasets", "lora_r",
                          "sample_packing", "num_epochs"})
    if (doc.contains(key)) return true;
  return false;
}

bool recognises_axolotl(const Document& d) { return d.yaml && looks_like_axolotl_config(*d.yaml); }

Result<Imported> read_axolotl(const Document& d) {
  const json* doc = d.yaml ? &*d.yaml : d.json ? &*d.json : nullptr;
  if (doc == nullptr || !doc->is_object())
    return Error{"from", std::string(d.text.substr(0, 60)), "an axolotl config YAML", "not YAML"};
  ImportBuilder out("axolotl");
  DocKeys keys(*doc);
  if (auto e = Reader(keys, out).run()) return *e;
  return out.finish();
}

}  // namespace vramplan::interop::axolotl

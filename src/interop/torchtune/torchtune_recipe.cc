#include "interop/torchtune/torchtune_recipe.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "base/text.h"
#include "interop/hf/hf_common.h"
#include "interop/torchtune/torchtune_models.h"

namespace vramplan::interop::torchtune {
namespace {

using hf::DocKeys;
using nlohmann::json;

// Keys that change nothing vramplan counts: data, checkpoints, logging, schedules, profiling.
const std::initializer_list<const char*> kNoEffect = {"output_dir",
                                                      "tokenizer.",
                                                      "checkpointer.",
                                                      "resume_from_checkpoint",
                                                      "save_adapter_weights_only",
                                                      "dataset.",
                                                      "dataset_val.",
                                                      "batch_size_val",
                                                      "seed",
                                                      "shuffle",
                                                      "lr_scheduler.",
                                                      "epochs",
                                                      "max_steps_per_epoch",
                                                      "clip_grad_norm",
                                                      "metric_logger.",
                                                      "log_",
                                                      "device",
                                                      "profiler.",
                                                      "low_cpu_ram",
                                                      "cudnn_deterministic_mode",
                                                      "run_val_every_n_steps",
                                                      "enable_async_checkpointing",
                                                      "save_every_n_steps",
                                                      "collate_fn",
                                                      "optimizer.lr",
                                                      "optimizer.weight_decay",
                                                      "optimizer.betas",
                                                      "optimizer.eps",
                                                      "optimizer.amsgrad",
                                                      "loss.",
                                                      "model.lora_alpha",
                                                      "custom_sharded_layers",
                                                      "data_parallel_shard_dim",
                                                      "resize_token_embeddings",
                                                      "model.max_seq_len"};

// torchtune's losses (torchtune/modules/loss) by the bytes per logit alive at the loss:
// CEWithChunkedOutputLoss keeps the bf16 logits while its chunks' fp32 log-probabilities (kept
// by log_softmax for the backward) build up: 2 + 4, and the chunk in hand's fp32 upcast.
// LinearCrossEntropyLoss projects each chunk inside the loss, so the bf16 logits and their fp32
// cast live for one chunk only and the fp32 log-probabilities, 4, stay. Both chunk by
// num_output_chunks (default 8; the recipes set the model's to match). torch's CrossEntropyLoss
// on upcast logits keeps 2 + 4 + 4, as Hugging Face's loss (training/frameworks.cc).
struct Loss {
  const char* component;
  int64_t bytes_per_logit;
  bool chunked;
};
constexpr Loss kLosses[] = {{"torchtune.modules.loss.CEWithChunkedOutputLoss", 6, true},
                            {"torchtune.modules.loss.LinearCrossEntropyLoss", 4, true},
                            {"torch.nn.CrossEntropyLoss", 10, false}};
constexpr int64_t kDefaultOutputChunks = 8;

// Optimizer components: torch's, bitsandbytes' and torchao's.
std::optional<hf::OptimizerChoice> optimizer_of(const std::string& component, bool fused,
                                                double momentum) {
  std::string name = component.substr(component.rfind('.') + 1);
  const std::string lower = to_lower(name);
  if (component.rfind("torch.optim.", 0) == 0) {
    if (lower == "adamw" || lower == "adam")
      return hf::OptimizerChoice{
          "adamw", !fused, {}, fused ? "torch AdamW (fused)" : "torch AdamW (foreach)", ""};
    if (lower == "sgd")
      return hf::OptimizerChoice{momentum > 0 ? "sgd-momentum" : "sgd", {}, {}, "torch SGD", ""};
    if (lower == "adafactor")
      return hf::OptimizerChoice{"adafactor", {}, {}, "torch Adafactor", ""};
  }
  if (component.rfind("bitsandbytes.optim.", 0) == 0 || component.rfind("torchao.", 0) == 0) {
    if (lower.find("8bit") != std::string::npos && lower.find("adam") != std::string::npos)
      return hf::OptimizerChoice{"adam8bit", {}, {}, name + ": 8-bit m and v", ""};
    if (lower.find("4bit") != std::string::npos && lower.find("adam") != std::string::npos)
      return hf::OptimizerChoice{"adamw", false, "fp4", name + ": 4-bit m and v",
                                 "its block scales"};
    if (lower == "pagedadamw" || lower == "pagedadamw32bit" || lower == "adamw32bit")
      return hf::OptimizerChoice{"adamw", false, {}, name + ": 32-bit m and v", ""};
  }
  return std::nullopt;
}

class Reader {
 public:
  Reader(DocKeys& keys, const RecipeLaunch& launch, ImportBuilder& out)
      : k_(keys), launch_(launch), out_(out) {}

  std::optional<Error> run() {
    if (auto e = read_model()) return e;
    if (auto e = read_training()) return e;
    if (auto e = read_precision()) return e;
    if (auto e = read_optimizer()) return e;
    read_loss();
    if (auto e = read_layout()) return e;
    read_unmodelled();
    k_.list_rest(out_, [](const std::string& path) {
      return hf::starts_with_any(path, kNoEffect) ? std::string(kNoMemoryEffect)
                                                  : "not read by vramplan's torchtune importer";
    });
    return std::nullopt;
  }

 private:
  std::optional<Error> read_model() {
    const json* c = k_.take_set("model._component_");
    const std::string key = k_.shown("model._component_");
    if (c == nullptr) return Error{key, "", "a torchtune model builder", "the recipe has none"};
    const Component comp = parse_component(value_text(*c));
    if (comp.model == nullptr) {
      out_.unsupported(key, value_text(*c),
                       "a model builder no vramplan preset matches: give --model");
    } else {
      out_.set(key, value_text(*c), "model", comp.model->preset);
    }
    bool qlora = comp.qlora;
    if (const json* q = k_.take_set("model.quantize_base")) {
      qlora = qlora || hf::bool_or(*q, false);
      out_.understood(k_.shown("model.quantize_base"), value_text(*q),
                      qlora ? "NF4 base weights (QLoRA)" : "16-bit base weights");
    }
    if (comp.lora || comp.qlora) {
      out_.set(key, value_text(*c), "finetune", qlora ? "qlora" : "lora");
      return read_lora();
    }
    for (const char* lora :
         {"model.lora_attn_modules", "model.lora_rank", "model.apply_lora_to_mlp"})
      if (const json* v = k_.take_set(lora))
        out_.ignore(k_.shown(lora), value_text(*v), "a full model builder: no adapters");
    return std::nullopt;
  }

  // lora_attn_modules (q_proj, k_proj, v_proj, output_proj), apply_lora_to_mlp (w1, w2, w3).
  std::optional<Error> read_lora() {
    const json* attn = k_.take_set("model.lora_attn_modules");
    if (attn == nullptr)
      return Error{k_.shown("model.lora_attn_modules"), "",
                   "the attention projections with adapters (q_proj, k_proj, v_proj, output_proj)",
                   "torchtune's LoRA builders require it"};
    std::vector<std::string> modules = hf::name_list(*attn);
    std::string key = k_.shown("model.lora_attn_modules"), value = value_text(*attn);
    if (const json* mlp = k_.take_set("model.apply_lora_to_mlp")) {
      Result<bool> on = bool_value(k_.shown("model.apply_lora_to_mlp"), *mlp);
      if (!on) return on.error();
      if (*on) modules.insert(modules.end(), {"w1", "w2", "w3"});
      out_.understood(k_.shown("model.apply_lora_to_mlp"), value_text(*mlp),
                      *on ? "adapters on w1, w2, w3 (gate, down, up)" : "no MLP adapters");
    }
    const hf::LoraTargets t = hf::lora_targets_of(modules);
    if (!t.unknown.empty())
      return Error{key, value, "q_proj, k_proj, v_proj, output_proj",
                   "unknown module \"" + t.unknown.front() + "\""};
    if (t.text.empty()) return Error{key, value, "at least one projection", "none is named"};
    out_.set(key, value, "lora_targets", t.text);
    if (const json* r = k_.take_set("model.lora_rank")) {
      Result<int64_t> n = integer_value(k_.shown("model.lora_rank"), *r);
      if (!n) return n.error();
      out_.set(k_.shown("model.lora_rank"), value_text(*r), "lora_rank", *n);
    }
    if (const json* d = k_.take_set("model.lora_dropout")) {
      if (hf::number_or(*d, 0) > 0)
        out_.unsupported(k_.shown("model.lora_dropout"), value_text(*d),
                         "LoRA dropout (a dropped copy of each targeted input is kept)");
      else
        out_.understood(k_.shown("model.lora_dropout"), value_text(*d), "no LoRA dropout");
    }
    for (const char* name : {"model.apply_lora_to_output", "model.use_dora"})
      if (const json* v = k_.take_set(name)) {
        if (hf::bool_or(*v, false))
          out_.unsupported(k_.shown(name), value_text(*v),
                           std::string(name) == "model.use_dora"
                               ? "DoRA (its magnitude vectors and the weight norm's activations)"
                               : "a LoRA adapter on the output projection (r·(h + V) parameters)");
        else
          out_.understood(k_.shown(name), value_text(*v), "off");
      }
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

  std::optional<Error> read_training() {
    if (auto e = positive("batch_size", "micro_batch")) return e;
    if (auto e = positive("gradient_accumulation_steps", "grad_accum")) return e;
    const json* seq = k_.take("tokenizer.max_seq_len");
    if (seq != nullptr && seq->is_null())
      out_.unsupported(k_.shown("tokenizer.max_seq_len"), "null",
                       "no truncation: sequences as long as the data's (vramplan counts seq_len, "
                       "4096 unless --seq-len)");
    else if (seq != nullptr)
      if (auto e = positive("tokenizer.max_seq_len", "seq_len")) return e;
    if (const json* packed = k_.take_set("dataset.packed"))
      out_.understood(k_.shown("dataset.packed"), value_text(*packed),
                      hf::bool_or(*packed, false)
                          ? "every row packed to max_seq_len tokens, as counted"
                          : "rows up to max_seq_len tokens: the longest is counted");
    if (const json* ac = k_.take_set("enable_activation_checkpointing")) {
      Result<bool> on = bool_value(k_.shown("enable_activation_checkpointing"), *ac);
      if (!on) return on.error();
      out_.set(k_.shown("enable_activation_checkpointing"), value_text(*ac), "recompute",
               *on ? "full" : "none");
    }
    return std::nullopt;
  }

  // torchtune trains in one dtype: dtype=bf16 keeps weights, gradients and optimizer states in
  // bf16 (recipes/full_finetune_distributed.py: "all activations, gradients and optimizer states
  // are in bfloat16"); fp16 is refused.
  std::optional<Error> read_precision() {
    const json* v = k_.take_set("dtype");
    const std::string key = v ? k_.shown("dtype") : "(dtype not given: torchtune's bf16)";
    const std::string text = v ? value_text(*v) : "bf16";
    std::optional<hf::Precision> p = hf::precision_of_dtype(text);
    if (!p || *p == hf::Precision::kFp16) return Error{key, text, "bf16 or fp32", ""};
    hf::set_precision(out_, key, text, *p, hf::Weights::kPure);
    dtype_ = std::string(dtype_name(hf::precision_dtype(*p)));
    if (out_.has("finetune")) out_.set(key, text, "adapter_dtype", dtype_);
    return std::nullopt;
  }

  std::optional<Error> read_optimizer() {
    const json* c = k_.take_set("optimizer._component_");
    if (c == nullptr) return std::nullopt;
    const json* fused = k_.take_set("optimizer.fused");
    const json* momentum = k_.take_set("optimizer.momentum");
    std::optional<hf::OptimizerChoice> choice =
        optimizer_of(value_text(*c), fused && hf::bool_or(*fused, false),
                     momentum ? hf::number_or(*momentum, 0) : 0);
    if (!choice)
      return Error{k_.shown("optimizer._component_"), value_text(*c),
                   "torch.optim.AdamW / SGD / Adafactor, bitsandbytes.optim.PagedAdamW8bit / "
                   "AdamW8bit / PagedAdamW, torchao 8-bit or 4-bit AdamW",
                   "unknown optimizer"};
    hf::set_optimizer(out_, k_.shown("optimizer._component_"), value_text(*c), *choice);
    if (fused) out_.understood(k_.shown("optimizer.fused"), value_text(*fused), "as above");
    if (momentum)
      out_.understood(k_.shown("optimizer.momentum"), value_text(*momentum), "as above");
    if (const json* v = k_.take_set("optimizer_in_bwd"); v && hf::bool_or(*v, false))
      out_.unsupported(k_.shown("optimizer_in_bwd"), value_text(*v),
                       "the optimizer step in the backward (no full set of gradients)");
    else if (v)
      out_.understood(k_.shown("optimizer_in_bwd"), value_text(*v), "off");
    return std::nullopt;
  }

  void read_loss() {
    const json* c = k_.take_set("loss._component_");
    if (c == nullptr) return;
    for (const Loss& l : kLosses)
      if (value_text(*c) == l.component) {
        out_.set(k_.shown("loss._component_"), value_text(*c), "loss_bytes_per_logit",
                 l.bytes_per_logit);
        return read_loss_chunks(l);
      }
    out_.unsupported(k_.shown("loss._component_"), value_text(*c),
                     "a loss whose logits vramplan does not know (counted as "
                     "CEWithChunkedOutputLoss's)");
  }

  void read_loss_chunks(const Loss& l) {
    const json* v = k_.take_set("loss.num_output_chunks");
    if (!l.chunked) {
      out_.put("loss_chunks", 0, k_.shown("loss._component_"));
      if (v != nullptr)
        out_.unsupported(k_.shown("loss.num_output_chunks"), value_text(*v),
                         "torch's CrossEntropyLoss does not chunk");
      return;
    }
    if (v == nullptr) {
      out_.set("(loss.num_output_chunks not given: torchtune's default)", "8", "loss_chunks",
               kDefaultOutputChunks);
      return;
    }
    Result<int64_t> n = integer_value(k_.shown("loss.num_output_chunks"), *v);
    if (n && *n >= 1)
      out_.set(k_.shown("loss.num_output_chunks"), value_text(*v), "loss_chunks", *n);
    else
      out_.unsupported(k_.shown("loss.num_output_chunks"), value_text(*v),
                       "a positive number of chunks (counted as 8)");
  }

  // Distributed recipes shard with FSDP2 (fully_shard); tensor, context and replicate dims.
  std::optional<Error> read_layout() {
    const bool single = launch_.recipe.find("single_device") != std::string::npos;
    if (launch_.world > 0)
      out_.set(launch_.world_from, std::to_string(launch_.world), "gpus", launch_.world);
    else if (single)
      out_.set("(a single-device recipe)", launch_.recipe, "gpus", 1);
    if (auto e = positive("tensor_parallel_dim", "tp")) return e;
    if (auto e = positive("context_parallel_dim", "cp")) return e;
    if (single) {
      out_.set("(a single-device recipe)", launch_.recipe, "fsdp", "none");
      return std::nullopt;
    }
    std::string mode = "full_shard";
    std::string key = launch_.recipe.empty()
                          ? "(torchtune's multi-GPU recipes shard with FSDP2; on one GPU nothing)"
                          : "(a distributed recipe: FSDP2)";
    if (const json* r = k_.take_set("fsdp_reshard_after_forward")) {
      Result<bool> on = bool_value(k_.shown("fsdp_reshard_after_forward"), *r);
      if (!on) return on.error();
      mode = *on ? "full_shard" : "shard_grad_op";
      key = k_.shown("fsdp_reshard_after_forward");
    }
    if (const json* rep = k_.take_set("data_parallel_replicate_dim")) {
      Result<int64_t> n = integer_value(k_.shown("data_parallel_replicate_dim"), *rep);
      if (!n || *n < 1)
        return Error{k_.shown("data_parallel_replicate_dim"), value_text(*rep),
                     "a positive integer", ""};
      if (*n > 1) {
        mode = "hybrid_shard";
        key = k_.shown("data_parallel_replicate_dim");
        if (const json* shard = k_.peek("data_parallel_shard_dim");
            shard && hf::number_or(*shard, -1) > 0)
          out_.put("fsdp_shard_group", static_cast<int64_t>(hf::number_or(*shard, 1)), key);
      } else {
        out_.understood(k_.shown("data_parallel_replicate_dim"), value_text(*rep), "no replicas");
      }
    }
    out_.set(key, mode, "fsdp", mode);
    return std::nullopt;
  }

  void read_unmodelled() {
    auto off_or_warn = [&](const char* path, const char* why) {
      const json* v = k_.take_set(path);
      if (v == nullptr) return;
      const bool on = v->is_object() ? !v->empty() : hf::bool_or(*v, true);
      if (on)
        out_.unsupported(k_.shown(path), value_text(*v), why);
      else
        out_.understood(k_.shown(path), value_text(*v), "off");
    };
    // OffloadActivations (training/_activation_offloading.py) and FSDP2's CPUOffloadPolicy.
    auto offload = [&](const char* path, const char* setting, const char* also) {
      const json* v = k_.take_set(path);
      if (v == nullptr) return;
      const bool on = hf::bool_or(*v, true);
      if (std::string_view(setting) == "offload_activations") {
        out_.set(k_.shown(path), value_text(*v), setting, on);
        return;
      }
      out_.set(k_.shown(path), value_text(*v), setting, on ? "cpu" : "none");
      if (also != nullptr) out_.put(also, on ? "cpu" : "none", k_.shown(path));
    };
    offload("enable_activation_offloading", "offload_activations", nullptr);
    offload("fsdp_cpu_offload", "offload_params", "offload_optimizer");
    off_or_warn("compile", "torch.compile of the model and loss (fewer saved activations)");
    for (const char* path : {"ac_mode", "ac_option"})
      if (const json* v = k_.take_set(path))
        out_.unsupported(k_.shown(path), value_text(*v),
                         "selective activation checkpointing of every N-th layer");
    // torchtune's own conventions, beside the keys (no framework preset has them): its modules'
    // model code (fp32 F.rms_norm, K/V repeated to every head, RoPE caches, chunked loss;
    // training/frameworks.cc apply_model_code).
    out_.set("(torchtune)", "", "model_code", "torchtune");
    out_.set("(torchtune)", "", "lazy_gradients", true);
    out_.set("(torchtune)", "", "allocator_overhead", 0.2);
  }

  DocKeys& k_;
  const RecipeLaunch& launch_;
  ImportBuilder& out_;
  std::string dtype_;
};

}  // namespace

bool looks_like_torchtune_recipe(const json& doc) {
  if (!doc.is_object() || !doc.contains("model") || !doc["model"].is_object()) return false;
  const json& c = doc["model"].value("_component_", json());
  return c.is_string() && c.get<std::string>().rfind("torchtune.models.", 0) == 0;
}

std::optional<Error> read_torchtune_recipe(DocKeys& keys, const RecipeLaunch& launch,
                                           ImportBuilder& out) {
  return Reader(keys, launch, out).run();
}

}  // namespace vramplan::interop::torchtune

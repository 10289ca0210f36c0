#include "interop/hf/deepspeed_config.h"

#include <fmt/format.h>

#include "base/text.h"
#include "interop/hf/deepspeed_batch.h"

namespace vramplan::interop::hf {
namespace {

using nlohmann::json;

constexpr const char* kSource = "deepspeed.ai/docs/config-json";

// Keys that change nothing vramplan counts (scheduling, logging, checkpoints, communication
// patterns that keep the same buffers, loss scaling).
const std::initializer_list<const char*> kNoEffect = {
    "gradient_clipping",
    "steps_per_print",
    "wall_clock_breakdown",
    "prescale_gradients",
    "gradient_predivide_factor",
    "optimizer.params.",
    "scheduler.",
    "tensorboard.",
    "wandb.",
    "csv_monitor.",
    "comet.",
    "comms_logger.",
    "flops_profiler.",
    "checkpoint.",
    "nebula.",
    "dump_state",
    "zero_allow_untested_optimizer",
    "zero_force_ds_cpu_optimizer",
    "memory_breakdown",
    "dataloader_drop_last",
    "seed",
    "fp16.loss_scale",
    "fp16.initial_scale_power",
    "fp16.loss_scale_window",
    "fp16.hysteresis",
    "fp16.consecutive_hysteresis",
    "fp16.min_loss_scale",
    "fp16.auto_cast",
    "fp16.fp16_master_weights_and_grads",
    "bf16.immediate_grad_update",
    "bf16.check_grad_overflow",
    "data_efficiency.",
    "curriculum_learning.",
    "aio.",
    "zero_optimization.round_robin_gradients",
    "zero_optimization.allgather_partitions",
    "zero_optimization.reduce_scatter",
    "zero_optimization.load_from_fp32_weights",
    "zero_optimization.elastic_checkpoint",
    "zero_optimization.ignore_unused_parameters",
    "zero_optimization.stage3_gather_16bit_weights_on_model_save",
    "zero_optimization.stage3_gather_fp16_weights_on_model_save",
    "zero_optimization.gather_16bit_weights_on_model_save",
    "zero_optimization.memory_efficient_linear",
    "zero_optimization.stage3_module_granularity_threshold",
    "zero_optimization.use_all_reduce_for_fetch_params",
    "zero_optimization.log_trace_cache_warnings",
    "zero_optimization.offload_optimizer.",
    "zero_optimization.offload_param.",
    "activation_checkpointing."};

// Keys only DeepSpeed configs have.
constexpr const char* kDeepspeedOnlyKeys[] = {"zero_optimization", "train_micro_batch_size_per_gpu",
                                              "train_batch_size",  "zero_allow_untested_optimizer",
                                              "steps_per_print",   "wall_clock_breakdown"};

bool is_auto(const json& v) { return v.is_string() && to_lower(v.get<std::string>()) == "auto"; }

// DeepSpeed optimizer types (runtime/config.py DEEPSPEED_OPTIMIZERS, case-insensitive) and the
// torch.optim classes it builds by name otherwise.
std::optional<OptimizerChoice> deepspeed_optimizer(const std::string& type, bool torch_adam,
                                                   double momentum) {
  const std::string t = to_lower(type);
  if (t == "adam" || t == "adamw" || t == "fusedadam" || t == "muadam" || t == "muadamw")
    return OptimizerChoice{
        "adamw", torch_adam, {}, torch_adam ? "torch Adam (foreach)" : "DeepSpeed FusedAdam", ""};
  if (t == "lamb") return OptimizerChoice{"adamw", false, {}, "Lamb: m and v, as Adam", ""};
  if (t == "onebitadam" || t == "zerooneadam" || t == "onebitlamb")
    return OptimizerChoice{"adamw", false, {}, type + ": m and v", "its error-feedback buffers"};
  if (t == "lion") return OptimizerChoice{"lion", {}, {}, "Lion: one momentum", ""};
  if (t == "sgd" || t == "musgd")
    return OptimizerChoice{momentum > 0 ? "sgd-momentum" : "sgd", {}, {}, "SGD", ""};
  if (t == "adagrad") return OptimizerChoice{"sgd-momentum", {}, {}, "Adagrad: one state", ""};
  if (t == "muon") return OptimizerChoice{"muon", {}, {}, "Muon", ""};
  return std::nullopt;
}

class Reader {
 public:
  Reader(DocKeys& keys, const DeepspeedContext& ctx, ImportBuilder& out)
      : k_(keys), ctx_(ctx), out_(out) {}

  Result<DeepspeedFacts> run() {
    if (auto e = read_stage()) return *e;
    if (auto e = read_buckets()) return *e;
    if (auto e = read_stage3()) return *e;
    read_offload();
    if (auto e = read_precision()) return *e;
    if (auto e = read_optimizer()) return *e;
    if (auto e = read_deepspeed_batch(k_, ctx_, out_)) return *e;
    read_unmodelled();
    k_.list_rest(out_, [](const std::string& path) {
      if (path.rfind("activation_checkpointing.", 0) == 0)
        return std::string(
            "deepspeed.checkpointing's settings apply to models that call it "
            "(Megatron-DeepSpeed); HF models recompute with gradient_checkpointing");
      if (starts_with_any(
              path, {"zero_optimization.offload_optimizer.", "zero_optimization.offload_param."}))
        return std::string(
            "pinning, NVMe path and buffer sizes: DeepSpeed's defaults are counted "
            "(docs/offload.md)");
      return starts_with_any(path, kNoEffect)
                 ? std::string(kNoMemoryEffect)
                 : fmt::format("not read by vramplan's DeepSpeed importer ({})", kSource);
    });
    return facts_;
  }

 private:
  std::optional<Error> read_stage() {
    const json* v = k_.take_set("zero_optimization.stage");
    if (v == nullptr) {
      out_.set("(no zero_optimization.stage)", "0", "zero", 0);  // DeepSpeed's default
      return std::nullopt;
    }
    Result<int64_t> n = integer_value(k_.shown("zero_optimization.stage"), *v);
    if (!n || *n < 0 || *n > 3)
      return Error{k_.shown("zero_optimization.stage"), value_text(*v), "0, 1, 2 or 3", ""};
    stage_ = *n;
    out_.set(k_.shown("zero_optimization.stage"), value_text(*v), "zero", *n);
    return std::nullopt;
  }

  // The hidden size the HF Trainer's "auto" bucket sizes come from (hidden_size², HF
  // integrations/deepspeed.py trainer_config_finalize): the model given beside, else the one the
  // TrainingArguments name, when it is a preset.
  int64_t hidden_size() const {
    if (ctx_.beside && ctx_.beside->contains("model"))
      return preset_hidden_size((*ctx_.beside)["model"]);
    return out_.has("model") ? preset_hidden_size(out_.get("model")) : 0;
  }

  // One bucket of comm_bucket_elements: the larger of reduce_bucket_size and, below ZeRO-3 (where
  // it is used), allgather_bucket_size.
  std::optional<Error> read_buckets() {
    int64_t bucket = 0;
    std::string from;
    for (const char* name :
         {"zero_optimization.reduce_bucket_size", "zero_optimization.allgather_bucket_size"}) {
      const json* v = k_.take_set(name);
      if (v == nullptr) continue;
      const std::string key = k_.shown(name), text = value_text(*v);
      const bool allgather = std::string_view(name).ends_with("allgather_bucket_size");
      if (allgather && stage_ == 3) {
        out_.ignore(key, text, "ZeRO-3 gathers by stage3_prefetch_bucket_size instead");
        continue;
      }
      int64_t n = 0;
      if (is_auto(*v)) {
        const int64_t h = hidden_size();
        if (h == 0) {
          out_.unsupported(key, text,
                           "\"auto\" is hidden_size² of the model, which is no preset here: give "
                           "--comm-bucket-elements");
          continue;
        }
        n = h * h;
        out_.understood(key, text, fmt::format("auto: hidden_size² = {}² = {}", h, n));
      } else {
        Result<int64_t> c = count_value(key, *v);
        if (!c) return c.error();
        n = *c;
        out_.understood(key, text, fmt::format("{} elements", n));
      }
      if (n >= bucket) {
        bucket = n;
        from = key;
      }
    }
    if (!from.empty()) out_.put("comm_bucket_elements", bucket, from);
    return std::nullopt;
  }

  // DeepSpeedZeroConfig's fields also go by their names without stage3_ (pydantic aliases):
  // axolotl's zero3.json writes max_live_parameters.
  const json* take_stage3(const std::string& name, std::string& key) {
    const std::string zo = "zero_optimization.";
    for (const std::string& path : {zo + "stage3_" + name, zo + name})
      if (const json* v = k_.take_set(path)) {
        key = k_.shown(path);
        return v;
      }
    return nullptr;
  }

  std::optional<Error> read_stage3() {
    const std::string zo = "zero_optimization.";
    std::string key;
    if (const json* v = take_stage3("max_live_parameters", key)) {
      Result<int64_t> n = count_value(key, *v);
      if (!n) return n.error();
      out_.set(key, value_text(*v), "zero3_live_params", *n);
    }
    if (const json* v = take_stage3("max_reuse_distance", key)) {
      Result<int64_t> n = count_value(key, *v);
      if (n && *n < 1'000'000'000 && out_.has("zero3_live_params") &&
          value_text(out_.get("zero3_live_params")) != "0")
        out_.unsupported(key, value_text(*v),
                         "a reuse distance below DeepSpeed's 1e9 releases parameters sooner than "
                         "stage3_max_live_parameters");
      else
        out_.understood(key, value_text(*v), "parameters reused soon stay gathered, as counted");
    }
    if (const json* v = take_stage3("prefetch_bucket_size", key))
      out_.understood(key, value_text(*v),
                      "prefetched parameters stay within stage3_max_live_parameters, as counted");
    if (const json* v = take_stage3("param_persistence_threshold", key))
      out_.ignore(key, value_text(*v),
                  "parameters below it (norms, biases) stay whole: under 0.1% of the weights");
    if (take_stage3("gather_16bit_weights_on_model_save", key) != nullptr)
      out_.ignore(key, "", "at checkpoint saves only: no effect on the step's peak");
    return read_stage3_rest();
  }

  std::optional<Error> read_stage3_rest() {
    const std::string zo = "zero_optimization.";
    for (const char* name : {"overlap_comm", "sub_group_size"}) {
      const json* v = k_.take_set(zo + name);
      if (v == nullptr) continue;
      const std::string key = k_.shown(zo + name);
      if (std::string(name) == "overlap_comm" && !bool_or(*v, true))
        out_.understood(key, value_text(*v), "one bucket at a time, as counted");
      else
        out_.unsupported(key, value_text(*v),
                         std::string(name) == "overlap_comm"
                             ? "overlap_comm's extra buckets (HF's DeepSpeed guide: up to 4.5× "
                               "the bucket sizes)"
                             : "the optimizer step's fp32 gradient copy per sub-group");
    }
    if (const json* v = k_.take_set(zo + "contiguous_gradients"))
      out_.understood(k_.shown(zo + "contiguous_gradients"), value_text(*v),
                      "gradient partitions in one buffer, as counted");
    return std::nullopt;
  }

  // offload_optimizer / offload_param .device: none, cpu or nvme (ZeRO-Offload, ZeRO-Infinity);
  // offload_optimizer.ratio: the share offloaded (ZeRO-3's partial offload); the old
  // zero_optimization.cpu_offload: true is offload_optimizer cpu. Pinning, NVMe paths and buffer
  // sizes keep their defaults (docs/offload.md).
  void read_offload() {
    const std::pair<const char*, const char*> kinds[] = {{"offload_optimizer", "offload_optimizer"},
                                                         {"offload_param", "offload_params"}};
    for (const auto& [what, setting] : kinds) {
      const std::string path = std::string("zero_optimization.") + what + ".device";
      const json* v = k_.take_set(path);
      if (v == nullptr) continue;
      const std::string device = to_lower(value_text(*v));
      if (device == "none" || device == "cpu" || device == "nvme")
        out_.set(k_.shown(path), value_text(*v), setting, device);
      else
        out_.unsupported(k_.shown(path), value_text(*v), "a device other than none, cpu, nvme");
    }
    const std::string ratio = "zero_optimization.offload_optimizer.ratio";
    if (const json* v = k_.take_set(ratio); v && v->is_number())
      out_.set(k_.shown(ratio), value_text(*v), "optimizer_offload_fraction", v->get<double>());
    if (const json* v = k_.take_set("zero_optimization.cpu_offload"); v && value_text(*v) == "true")
      out_.set(k_.shown("zero_optimization.cpu_offload"), "true", "offload_optimizer", "cpu");
  }

  // bf16.enabled / fp16.enabled: true, false or "auto" (the Trainer's --bf16 / --fp16).
  std::optional<Error> read_precision() {
    std::optional<bool> bf16, fp16;
    std::string bf16_key, fp16_key, bf16_text, fp16_text;
    for (const char* section : {"bf16", "bfloat16", "fp16"}) {
      const std::string path = std::string(section) + ".enabled";
      const json* v = k_.take_set(path);
      if (v == nullptr) continue;
      const bool is_bf16 = std::string(section) != "fp16";
      std::optional<bool>& target = is_bf16 ? bf16 : fp16;
      (is_bf16 ? bf16_key : fp16_key) = k_.shown(path);
      (is_bf16 ? bf16_text : fp16_text) = value_text(*v);
      if (is_auto(*v)) {
        if (ctx_.trainer == nullptr || !ctx_.trainer->given) {
          out_.unsupported(k_.shown(path), "auto",
                           "\"auto\" takes the Trainer's --" +
                               std::string(is_bf16 ? "bf16" : "fp16") +
                               ", and no TrainingArguments are given (vramplan keeps DeepSpeed's "
                               "bf16 with fp32 master weights; --param-dtype says otherwise)");
          auto_unresolved_ = true;
          continue;
        }
        target = is_bf16 ? ctx_.trainer->bf16 : ctx_.trainer->fp16;
        continue;
      }
      Result<bool> b = bool_value(k_.shown(path), *v);
      if (!b) return b.error();
      // The HF Trainer refuses values that differ from its own (deepspeed.py fill_match).
      if (ctx_.trainer && ctx_.trainer->given &&
          *b != (is_bf16 ? ctx_.trainer->bf16 : ctx_.trainer->fp16))
        return Error{k_.shown(path), value_text(*v),
                     fmt::format("\"auto\" or {}, as the TrainingArguments' --{}",
                                 *b ? "false" : "true", is_bf16 ? "bf16" : "fp16"),
                     "the HF Trainer refuses a DeepSpeed config that contradicts its arguments"};
      target = *b;
    }
    if (bf16.value_or(false) && fp16.value_or(false))
      return Error{fp16_key, "true", "one of bf16.enabled and fp16.enabled", "both are on"};
    if (auto_unresolved_ && !bf16.value_or(false) && !fp16.value_or(false)) return std::nullopt;
    if (bf16.value_or(false)) {
      facts_.precision = Precision::kBf16;
      facts_.precision_key = bf16_key;
      facts_.precision_value = bf16_text;
    } else if (fp16.value_or(false)) {
      facts_.precision = Precision::kFp16;
      facts_.precision_key = fp16_key;
      facts_.precision_value = fp16_text;
    } else {
      facts_.precision = Precision::kFp32;
      const bool named = !bf16_key.empty() || !fp16_key.empty();
      facts_.precision_key =
          named ? (bf16_key.empty() ? fp16_key : bf16_key) : "(neither bf16 nor fp16)";
      facts_.precision_value = named ? (bf16_key.empty() ? fp16_text : bf16_text) : "";
    }
    return read_grad_accum_dtype();
  }

  std::optional<Error> read_grad_accum_dtype() {
    const json* v = k_.take_set("data_types.grad_accum_dtype");
    if (v == nullptr) return std::nullopt;
    const std::string key = k_.shown("data_types.grad_accum_dtype"), text = value_text(*v);
    std::optional<Precision> p = precision_of_dtype(text);
    if (!p) return Error{key, text, "fp32, bf16 or fp16", ""};
    facts_.fp32_grad_accum = *p == Precision::kFp32;
    facts_.fp32_grad_accum_key = key;
    facts_.fp32_grad_accum_value = text;
    return std::nullopt;
  }

  std::optional<Error> read_optimizer() {
    const json* type = k_.take_set("optimizer.type");
    if (type == nullptr) return std::nullopt;
    facts_.has_optimizer = true;
    const json* torch_adam = k_.take_set("optimizer.params.torch_adam");
    const json* momentum = k_.peek("optimizer.params.momentum");
    const bool torch = torch_adam && bool_or(*torch_adam, false);
    const double m = momentum ? number_or(*momentum, 0) : 0;
    const std::string name = value_text(*type);
    std::optional<OptimizerChoice> choice = deepspeed_optimizer(name, torch, m);
    if (!choice)
      return Error{k_.shown("optimizer.type"), name,
                   "Adam, AdamW, FusedAdam, Lamb, OneBitAdam, ZeroOneAdam, OneBitLamb, Lion, "
                   "MuAdam, MuAdamW, MuSGD, SGD, Adagrad, Muon",
                   "unknown optimizer"};
    if (torch_adam)
      out_.understood(k_.shown("optimizer.params.torch_adam"), value_text(*torch_adam),
                      torch ? "torch's Adam: a state-sized temporary at the step" : "FusedAdam");
    set_optimizer(out_, k_.shown("optimizer.type"), name, *choice);
    return std::nullopt;
  }

  void read_unmodelled() {
    auto when = [&](const char* path, bool on, const char* why) {
      const json* v = k_.take_set(path);
      if (v == nullptr) return;
      const std::string text = value_text(*v);
      const bool set = v->is_boolean()  ? v->get<bool>() == on
                       : v->is_number() ? v->get<double>() > 1
                                        : text != "none";
      if (set)
        out_.unsupported(k_.shown(path), text, why);
      else
        out_.understood(k_.shown(path), text, "off");
    };
    when("amp.enabled", true, "apex AMP");
    when("activation_checkpointing.cpu_checkpointing", true,
         "offload: activation checkpoints on the CPU");
    when("zero_optimization.zero_quantized_weights", true, "ZeRO++ quantized weights");
    when("zero_optimization.zero_quantized_gradients", true, "ZeRO++ quantized gradients");
    when("zero_optimization.zero_hpz_partition_size", true, "ZeRO++ secondary weight partitions");
    when("zero_optimization.mics_shard_size", true, "MiCS shard groups");
    when("sparse_attention.mode", true, "DeepSpeed sparse attention");
    when("tensor_parallel.autotp_size", true, "DeepSpeed AutoTP tensor parallelism");
    when("sequence_parallel_size", true, "DeepSpeed Ulysses sequence parallelism");
    when("elasticity.enabled", true, "elastic batch sizes");
    when("compression_training.weight_quantization.shared_parameters.enabled", true,
         "compression training");
    if (const json* v = k_.take_set("communication_data_type"))
      out_.unsupported(k_.shown("communication_data_type"), value_text(*v),
                       "a cast copy of each bucket for communication");
    if (const json* v = k_.take_set("pipeline"); v && !v->empty())
      out_.unsupported(k_.shown("pipeline"), value_text(*v),
                       "DeepSpeed pipeline parallelism (PipelineModule)");
  }

  DocKeys& k_;
  const DeepspeedContext& ctx_;
  ImportBuilder& out_;
  DeepspeedFacts facts_;
  int64_t stage_ = 0;
  bool auto_unresolved_ = false;
};

}  // namespace

bool looks_like_deepspeed_config(const json& doc) {
  if (!doc.is_object()) return false;
  for (const char* key : kDeepspeedOnlyKeys)
    if (doc.contains(key)) return true;
  return false;
}

Result<DeepspeedFacts> read_deepspeed_config(DocKeys& keys, const DeepspeedContext& ctx,
                                             ImportBuilder& out) {
  Reader r(keys, ctx, out);
  return r.run();
}

}  // namespace vramplan::interop::hf

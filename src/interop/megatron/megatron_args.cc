#include "interop/megatron/megatron_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "interop/megatron/megatron_arg_table.h"
#include "vramplan/model/hf_config.h"
#include "vramplan/model/presets.h"

namespace vramplan::interop {
namespace {

using nlohmann::json;

// The arguments by name, last occurrence winning; each is marked when a reader takes it.
class ArgTable {
 public:
  explicit ArgTable(const MegatronArgs& args) {
    for (const MegatronArg& a : args) values_[a.name] = a.value;
  }
  const std::string* take(const std::string& name) {
    auto it = values_.find(name);
    if (it == values_.end()) return nullptr;
    taken_.insert(name);
    return &it->second;
  }
  const std::string* peek(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  bool flag(const std::string& name) {
    const std::string* v = take(name);
    return v != nullptr && *v != "false" && *v != "False";
  }
  const std::map<std::string, std::string>& all() const { return values_; }
  bool taken(const std::string& name) const { return taken_.count(name) > 0; }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> taken_;
};

Result<int64_t> int_arg(const std::string& name, const std::string& value) {
  return integer_value(name, json(value));
}

class Importer {
 public:
  Importer(const MegatronArgs& args, int64_t world_size, std::string world_from, ImportBuilder& out)
      : t_(args), world_size_(world_size), world_from_(std::move(world_from)), out_(out) {}

  std::optional<Error> run() {
    if (auto e = read_model()) return e;
    if (auto e = read_training()) return e;
    if (auto e = read_precision()) return e;
    if (auto e = read_parallelism()) return e;
    read_conventions();
    read_dispatcher();
    list_the_rest();
    return std::nullopt;
  }

 private:
  // A setting from an integer argument.
  std::optional<Error> integer(const char* name, const char* setting) {
    const std::string* v = t_.take(name);
    if (v == nullptr) return std::nullopt;
    Result<int64_t> n = int_arg(name, *v);
    if (!n) return n.error();
    out_.set(name, *v, setting, *n);
    return std::nullopt;
  }
  void boolean(const char* name, const char* setting, bool value) {
    const std::string* v = t_.take(name);
    if (v != nullptr) out_.set(name, *v, setting, value);
  }

  std::optional<Error> read_model() {
    json config = {{"model_type", "megatron_gpt"}};
    for (const MegatronModelArg& a : megatron_model_args()) {
      const std::string* v = t_.take(a.name);
      if (v == nullptr) continue;
      const std::string key = megatron_arg_field(a.name);
      json value = *v;
      if (a.type == MegatronArgType::kInt) {
        Result<int64_t> n = int_arg(a.name, *v);
        if (!n) return n.error();
        value = *n;
      } else if (a.type == MegatronArgType::kFlag) {
        value = *v != "false";
      }
      config[key] = value;
      out_.understood(a.name, *v, fmt::format("model_config.{} = {}", key, value_text(value)));
    }
    if (const std::string* seq = t_.peek("--seq-length")) {
      Result<int64_t> n = int_arg("--seq-length", *seq);
      if (!n) return n.error();
      config["seq_length"] = *n;
    }
    if (auto e = read_vocab(config)) return e;
    moe_ = config.contains("num_experts") && config["num_experts"].get<int64_t>() > 0;
    if (config.size() > 1) out_.put("model_config", std::move(config), "--num-layers");
    return std::nullopt;
  }

  // The tokenizer's vocabulary: GPT-2's BPE (vocab.json), a Hub tokenizer whose model is a
  // preset, or --vocab-size with the null tokenizer (its end-of-document token adds one).
  std::optional<Error> read_vocab(json& config) {
    const std::string* type = t_.take("--tokenizer-type");
    const std::string* size = t_.take("--vocab-size");
    const std::string* model = t_.take("--tokenizer-model");
    const std::string* vocab_file = t_.take("--vocab-file");
    const std::string kind = type ? *type : (vocab_file ? "GPT2BPETokenizer" : "");
    if (size) {
      Result<int64_t> n = int_arg("--vocab-size", *size);
      if (!n) return n.error();
      const bool null_tokenizer = kind == "NullTokenizer";
      config["vocab_size"] = null_tokenizer ? *n + 1 : *n;
      out_.understood(
          "--vocab-size", *size,
          fmt::format("model_config.vocab_size = {}{}", config["vocab_size"].dump(),
                      null_tokenizer ? " (NullTokenizer adds its end-of-document token)" : ""));
    } else if (kind == "GPT2BPETokenizer") {
      config["vocab_size"] = 50257;
      out_.understood(type ? "--tokenizer-type" : "--vocab-file", type ? *type : *vocab_file,
                      "model_config.vocab_size = 50257 (GPT-2's BPE)");
    } else if (model) {
      const Preset* preset = find_preset(*model);
      if (preset == nullptr)
        return Error{"--tokenizer-model", *model,
                     "a tokenizer of a preset model (vramplan models), or --vocab-size",
                     "its vocabulary size is unknown"};
      Result<ParsedModel> parsed = parse_hf_config(preset->config, preset->name);
      if (!parsed) return parsed.error();
      config["vocab_size"] = parsed->model.vocab;
      out_.understood(
          "--tokenizer-model", *model,
          fmt::format("model_config.vocab_size = {} ({})", parsed->model.vocab, preset->name));
    }
    if (type && !config.contains("vocab_size"))
      out_.ignore("--tokenizer-type", *type, "its vocabulary size is unknown: give --vocab-size");
    else if (type && !size && kind != "GPT2BPETokenizer")
      out_.understood("--tokenizer-type", *type, "the tokenizer named by --tokenizer-model");
    return std::nullopt;
  }

  std::optional<Error> read_training() {
    if (auto e = integer("--seq-length", "seq_len")) return e;
    if (auto e = integer("--micro-batch-size", "micro_batch")) return e;
    if (auto e = integer("--global-batch-size", "global_batch")) return e;
    // Megatron's dropout defaults to 0.1; the masks are kept unless both rates are 0.
    const std::string* hidden = t_.take("--hidden-dropout");
    const std::string* attention = t_.take("--attention-dropout");
    auto rate = [](const std::string* v) { return v ? std::strtod(v->c_str(), nullptr) : 0.1; };
    const bool dropout = rate(hidden) > 0 || rate(attention) > 0;
    out_.set(
        hidden ? "--hidden-dropout" : (attention ? "--attention-dropout" : "(default dropout 0.1)"),
        hidden ? *hidden : (attention ? *attention : "0.1"), "dropout", dropout);
    if (hidden && attention)
      out_.understood("--attention-dropout", *attention, "with --hidden-dropout");
    return read_recompute();
  }

  std::optional<Error> read_recompute() {
    if (t_.flag("--recompute-activations")) {
      out_.set("--recompute-activations", "true", "recompute", "selective");
    }
    const std::string* granularity = t_.take("--recompute-granularity");
    const std::string* method = t_.take("--recompute-method");
    const std::string* layers = t_.take("--recompute-num-layers");
    const std::string* modules = t_.take("--recompute-modules");
    if (granularity == nullptr) {
      for (auto [name, v] :
           {std::pair{"--recompute-method", method}, std::pair{"--recompute-num-layers", layers},
            std::pair{"--recompute-modules", modules}})
        if (v) out_.ignore(name, *v, "no --recompute-granularity: nothing is recomputed");
      return std::nullopt;
    }
    if (*granularity == "selective") {
      out_.set("--recompute-granularity", *granularity, "recompute", "selective");
      if (modules && *modules != "core_attn")
        out_.unsupported("--recompute-modules", *modules,
                         "selective recompute of modules other than core_attn (vramplan "
                         "recomputes the attention core only)");
      else if (modules)
        out_.understood("--recompute-modules", *modules, "recompute = selective (core attention)");
      return std::nullopt;
    }
    if (*granularity != "full")
      return Error{"--recompute-granularity", *granularity, "full or selective", ""};
    out_.set("--recompute-granularity", *granularity, "recompute", "full");
    const std::string m = method ? *method : "uniform";
    if (m != "uniform" && m != "block")
      return Error{"--recompute-method", m, "uniform or block", ""};
    int64_t n = 1;
    if (layers) {
      Result<int64_t> parsed = int_arg("--recompute-num-layers", *layers);
      if (!parsed) return parsed.error();
      n = *parsed;
    }
    if (m == "block") {
      out_.understood("--recompute-method", m, "the first recompute_layers layers per chunk");
      if (layers) out_.set("--recompute-num-layers", *layers, "recompute_layers", n);
    } else {
      if (method) out_.understood("--recompute-method", m, "every layer recomputed");
      if (n > 1)
        out_.unsupported("--recompute-num-layers", *layers,
                         "uniform recompute of groups of several layers (vramplan keeps every "
                         "layer's input)");
      else if (layers)
        out_.understood("--recompute-num-layers", *layers, "one layer per checkpoint");
    }
    if (modules)
      out_.ignore("--recompute-modules", *modules, "applies to selective recompute only");
    return std::nullopt;
  }

  std::optional<Error> read_precision() {
    const bool fp16 = t_.flag("--fp16"), bf16 = t_.flag("--bf16");
    if (fp16 && bf16) return Error{"--fp16", "true", "one of --fp16 and --bf16", "both given"};
    if (fp16) {
      // Gradients accumulate in fp16 unless --accumulate-allreduce-grads-in-fp32 (only bf16
      // forces fp32 accumulation).
      out_.set("--fp16", "true", "param_dtype", "fp16");
      out_.set("--fp16", "true", "grad_dtype", "fp16");
      out_.set("--fp16", "true", "activation_dtype", "fp16");
      out_.set("--fp16", "true", "fp32_grad_accum",
               t_.flag("--accumulate-allreduce-grads-in-fp32"));
    } else if (bf16) {
      out_.set("--bf16", "true", "param_dtype", "bf16");
      t_.take("--accumulate-allreduce-grads-in-fp32");
    } else {
      // Neither: Megatron trains in fp32, with no separate master copy.
      out_.set("(neither --bf16 nor --fp16)", "", "param_dtype", "fp32");
      out_.set("(neither --bf16 nor --fp16)", "", "grad_dtype", "fp32");
      out_.set("(neither --bf16 nor --fp16)", "", "activation_dtype", "fp32");
      out_.set("(neither --bf16 nor --fp16)", "", "master_weights", false);
    }
    if (const std::string* format = t_.take("--fp8-format")) {
      const std::string* recipe = t_.take("--fp8-recipe");
      const std::string r = recipe ? *recipe : "delayed";
      if (r != "delayed" && r != "tensorwise" && r != "blockwise" && r != "mxfp8")
        return Error{"--fp8-recipe", r, "delayed, tensorwise, blockwise or mxfp8", ""};
      out_.set(recipe ? "--fp8-recipe" : "--fp8-format", recipe ? *recipe : *format, "fp8", r);
      if (recipe) out_.understood("--fp8-format", *format, "fp8 linear layers");
      boolean("--fp8-param-gather", "fp8_params", true);
    }
    return read_optimizer();
  }

  std::optional<Error> read_optimizer() {
    if (const std::string* opt = t_.take("--optimizer")) {
      std::string ours;
      if (*opt == "adam")
        ours = "adamw";
      else if (*opt == "sgd")
        ours = "sgd-momentum";  // --sgd-momentum defaults to 0.9
      else if (*opt == "muon")
        ours = "muon";
      else
        return Error{"--optimizer", *opt, "adam, sgd or muon", ""};
      out_.set("--optimizer", *opt, "optimizer", ours);
    }
    // Megatron-FSDP requires --use-distributed-optimizer; its sharding strategy then says what is
    // sharded (read with the layout), so the flag does not also select the distributed optimizer.
    if (t_.peek("--use-megatron-fsdp") != nullptr) {
      if (const std::string* v = t_.take("--use-distributed-optimizer"))
        out_.understood("--use-distributed-optimizer", *v,
                        "required by Megatron-FSDP; --data-parallel-sharding-strategy shards");
    } else {
      boolean("--use-distributed-optimizer", "distributed_optimizer", true);
    }
    if (t_.flag("--use-precision-aware-optimizer")) {
      out_.understood("--use-precision-aware-optimizer", "true",
                      "optimizer states in --exp-avg-dtype / --exp-avg-sq-dtype");
      const std::string* avg = t_.take("--exp-avg-dtype");
      const std::string* sq = t_.take("--exp-avg-sq-dtype");
      if (avg && sq && *avg == *sq && (*avg == "bf16" || *avg == "fp16" || *avg == "fp8"))
        out_.set("--exp-avg-dtype", *avg, "optimizer_dtype", *avg);
      else if (avg || sq)
        out_.unsupported(avg ? "--exp-avg-dtype" : "--exp-avg-sq-dtype", avg ? *avg : *sq,
                         "moments in two different dtypes");
      for (const char* name : {"--main-grads-dtype", "--main-params-dtype"})
        if (const std::string* v = t_.take(name); v && *v != "fp32")
          out_.unsupported(name, *v, "master weights or gradients below fp32");
    }
    // HybridDeviceOptimizer (megatron/core/optimizer/cpu_offloading): the fraction's states on
    // the CPU; without --optimizer-cpu-offload the fraction does nothing.
    const std::string* cpu = t_.peek("--optimizer-cpu-offload");
    const bool offload = cpu != nullptr && *cpu != "false" && *cpu != "False";
    if (cpu != nullptr) {
      const std::string shown = *cpu;
      t_.take("--optimizer-cpu-offload");
      out_.set("--optimizer-cpu-offload", shown, "offload_optimizer", offload ? "cpu" : "none");
    }
    if (const std::string* v = t_.take("--optimizer-offload-fraction")) {
      Result<double> f = number_value("--optimizer-offload-fraction", json(*v));
      if (!f) return f.error();
      if (offload)
        out_.set("--optimizer-offload-fraction", *v, "optimizer_offload_fraction", *f);
      else
        out_.understood("--optimizer-offload-fraction", *v,
                        "no effect without --optimizer-cpu-offload");
    }
    return std::nullopt;
  }

  std::optional<Error> read_parallelism() {
    if (auto e = integer("--tensor-model-parallel-size", "tp")) return e;
    if (auto e = integer("--pipeline-model-parallel-size", "pp")) return e;
    if (auto e = integer("--context-parallel-size", "cp")) return e;
    if (auto e = integer("--expert-model-parallel-size", "ep")) return e;
    if (moe_) {
      if (auto e = integer("--expert-tensor-parallel-size", "etp")) return e;
    } else if (const std::string* v = t_.take("--expert-tensor-parallel-size")) {
      out_.ignore("--expert-tensor-parallel-size", *v, "the model has no experts: no effect");
    }
    if (world_size_ > 0) out_.set(world_from_, std::to_string(world_size_), "gpus", world_size_);
    const int64_t tp = out_.has("tp") ? out_.get("tp").get<int64_t>() : 1;
    // Expert tensor parallelism defaults to the tensor-parallel size.
    if (moe_ && !out_.has("etp") && tp > 1)
      out_.set("(default --expert-tensor-parallel-size = tp)", std::to_string(tp), "etp", tp);
    // Megatron's sequence parallelism is off unless asked for (vramplan's default is on); MoE
    // with tensor parallelism requires it.
    const bool sp = t_.flag("--sequence-parallel") || (moe_ && tp > 1);
    out_.set(t_.taken("--sequence-parallel")
                 ? "--sequence-parallel"
                 : (sp ? "(MoE with tensor parallelism)" : "(no --sequence-parallel)"),
             sp ? "true" : "false", "sequence_parallel", sp);
    boolean("--account-for-embedding-in-pipeline-split", "embedding_stage", true);
    boolean("--account-for-loss-in-pipeline-split", "loss_stage", true);
    if (auto e = integer("--decoder-first-pipeline-num-layers", "first_stage_layers")) return e;
    if (auto e = integer("--decoder-last-pipeline-num-layers", "last_stage_layers")) return e;
    if (auto e = integer("--virtual-pipeline-model-parallel-size", "vpp")) return e;
    if (auto e = integer("--num-virtual-stages-per-pipeline-rank", "vpp")) return e;
    if (const std::string* per_stage = t_.take("--num-layers-per-virtual-pipeline-stage"))
      if (auto e = virtual_stages(*per_stage)) return e;
    if (const std::string* layout = t_.take("--pipeline-model-parallel-layout"))
      out_.set("--pipeline-model-parallel-layout", *layout, "pipeline_layout", *layout);
    return read_fsdp();
  }

  // Megatron-FSDP's strategies shard what ZeRO's stages shard (docs: optim = ZeRO-1, optim_grads
  // = ZeRO-2, optim_grads_params = ZeRO-3, gathered per module as FSDP does); torch FSDP2
  // (fully_shard, resharding after forward) is FSDP full_shard.
  std::optional<Error> read_fsdp() {
    const std::string* strategy = t_.take("--data-parallel-sharding-strategy");
    const std::string* torch_fsdp = t_.take("--use-torch-fsdp2");
    if (const std::string* v = t_.take("--use-megatron-fsdp"); v && *v != "false") {
      const std::string mode = strategy ? *strategy : "no_shard";
      const char* key = strategy ? "--data-parallel-sharding-strategy" : "--use-megatron-fsdp";
      if (mode == "no_shard")
        out_.understood(key, mode, "Megatron-FSDP without sharding: data parallel");
      else if (mode == "optim")
        out_.set(key, mode, "zero", 1);
      else if (mode == "optim_grads")
        out_.set(key, mode, "zero", 2);
      else if (mode == "optim_grads_params")
        out_.set(key, mode, "fsdp", "full_shard");
      else
        return Error{"--data-parallel-sharding-strategy", mode,
                     "no_shard, optim, optim_grads or optim_grads_params", ""};
    } else if (strategy) {
      out_.ignore("--data-parallel-sharding-strategy", *strategy,
                  "only read with --use-megatron-fsdp");
    }
    if (torch_fsdp && *torch_fsdp != "false")
      out_.set("--use-torch-fsdp2", *torch_fsdp, "fsdp", "full_shard");
    for (const char* name : {"--no-gradient-accumulation-fusion", "--ckpt-format"})
      if (const std::string* v = t_.take(name)) out_.ignore(name, *v, "no effect on memory");
    return std::nullopt;
  }

  // --num-layers-per-virtual-pipeline-stage N: vpp = the layers of a pipeline rank over N.
  std::optional<Error> virtual_stages(const std::string& text) {
    Result<int64_t> per_stage = int_arg("--num-layers-per-virtual-pipeline-stage", text);
    if (!per_stage) return per_stage.error();
    const std::string* layers = t_.peek("--num-layers");
    const std::string* pp = t_.peek("--pipeline-model-parallel-size");
    Result<int64_t> l = layers ? int_arg("--num-layers", *layers) : Result<int64_t>(0);
    Result<int64_t> p = pp ? int_arg("--pipeline-model-parallel-size", *pp) : Result<int64_t>(1);
    if (!l || !p || *l <= 0 || *p <= 0 || *per_stage <= 0 || *l % (*p * *per_stage) != 0)
      return Error{"--num-layers-per-virtual-pipeline-stage", text,
                   "a divisor of the layers per pipeline rank (--num-layers / "
                   "--pipeline-model-parallel-size)",
                   ""};
    out_.set("--num-layers-per-virtual-pipeline-stage", text, "vpp", *l / *p / *per_stage);
    return std::nullopt;
  }

  void read_conventions() {
    out_.set("(Megatron-LM)", "", "framework", "megatron");
    if (const std::string* v = t_.take("--make-vocab-size-divisible-by")) {
      Result<int64_t> n = int_arg("--make-vocab-size-divisible-by", *v);
      if (n) out_.set("--make-vocab-size-divisible-by", *v, "vocab_pad_multiple", *n);
    }
    // Transformer Engine is Megatron's default implementation: its own 32 MiB cuBLAS workspace
    // beside PyTorch's two, and with --moe-grouped-gemm one more per stream.
    const std::string* impl = t_.take("--transformer-impl");
    const std::string implementation = impl ? *impl : "transformer_engine";
    const std::string* backend = t_.take("--attention-backend");
    const bool local = implementation == "local";
    if (implementation == "transformer_engine") {
      out_.set(impl ? "--transformer-impl" : "(default --transformer-impl transformer_engine)",
               implementation, "gemm_workspace_mib", 96);
      boolean("--moe-grouped-gemm", "moe_grouped_gemm", true);
    } else if (local) {
      // PyTorch's two cuBLAS workspaces only: no Transformer Engine workspace.
      out_.set("--transformer-impl", implementation, "gemm_workspace_mib", 64);
      // Local attention puts its scores in the persistent global buffer.
      out_.set("--transformer-impl", implementation, "attention_scores_buffer", true);
      if (const std::string* v = t_.take("--moe-grouped-gemm"))
        out_.understood("--moe-grouped-gemm", *v, "local grouped GEMM (no extra workspaces)");
    } else {
      out_.ignore("--transformer-impl", implementation, "not a training implementation");
    }
    const bool unfused = (backend && *backend == "unfused") || local ||
                         (t_.peek("--use-flash-attn") == nullptr && backend && *backend == "local");
    out_.set(backend ? "--attention-backend" : "--transformer-impl",
             backend ? *backend : implementation, "flash_attention", !unfused);
    t_.take("--use-flash-attn");
    // The fused cross entropy returns new fp32 tensors where the unfused one works in place.
    if (t_.flag("--cross-entropy-loss-fusion"))
      out_.set("--cross-entropy-loss-fusion", "true", "loss_bytes_per_logit", 10);
    if (const std::string* v = t_.take("--cuda-graph-impl"); v && *v != "none")
      out_.set("--cuda-graph-impl", *v, "cuda_graphs", true);
    if (const std::string* v = t_.take("--enable-cuda-graph"))
      out_.set("--enable-cuda-graph", *v, "cuda_graphs", *v != "false");
    for (const char* name : {"--cuda-graph-scope", "--cuda-graph-modules"})
      if (const std::string* v = t_.take(name))
        out_.unsupported(name, *v, "CUDA graphs of parts of each layer");
    if (const std::string* v = t_.take("--tp-comm-overlap")) {
      // The step time overlaps the TP collectives; the userbuffers' own memory is not counted.
      out_.set("--tp-comm-overlap", *v, "tp_comm_overlap", *v != "false");
      out_.warn(
          "--tp-comm-overlap: Transformer Engine's userbuffers are not counted in the "
          "memory estimate");
    }
    if (const std::string* v = t_.take("--overlap-moe-expert-parallel-comm")) {
      // Combined 1F1B: the step time hides the expert all-to-all behind the paired microbatch.
      out_.set("--overlap-moe-expert-parallel-comm", *v, "ep_comm_overlap", *v != "false");
      out_.warn(
          "--overlap-moe-expert-parallel-comm: the second microbatch combined 1F1B keeps in flight "
          "is not counted in the memory estimate");
    }
    if (const std::string* v = t_.take("--first-last-layers-bf16"))
      out_.unsupported("--first-last-layers-bf16", *v, "fp8 models with bf16 end layers");
    if (const std::string* v = t_.take("--defer-embedding-wgrad-compute"))
      out_.unsupported("--defer-embedding-wgrad-compute", *v,
                       "output-layer gradients kept per microbatch");
    if (const std::string* v = t_.take("--num-distributed-optimizer-instances"); v && *v != "1")
      out_.unsupported("--num-distributed-optimizer-instances", *v,
                       "several distributed-optimizer instances");
  }

  // The MoE token dispatcher (step time): --moe-token-dispatcher-type, and for flex its backend
  // (--moe-flex-dispatcher-backend, default deepep; older releases' --moe-enable-deepep).
  void read_dispatcher() {
    const std::string* type = t_.take("--moe-token-dispatcher-type");
    const std::string* backend = t_.take("--moe-flex-dispatcher-backend");
    const std::string* deepep = t_.take("--moe-enable-deepep");
    const bool flex = type != nullptr && *type == "flex";
    if (backend && !flex)
      out_.ignore("--moe-flex-dispatcher-backend", *backend, "the dispatcher is not flex");
    if (deepep) {
      if (flex && !backend)
        out_.understood("--moe-enable-deepep", *deepep, "moe_dispatcher");
      else
        out_.ignore("--moe-enable-deepep", *deepep, "no flex dispatcher without a backend");
    }
    if (type == nullptr) return;
    if (flex && backend) {
      out_.understood("--moe-token-dispatcher-type", *type, "moe_dispatcher");
      out_.set("--moe-flex-dispatcher-backend", *backend, "moe_dispatcher", *backend);
      return;
    }
    // alltoall_seq (older releases) sends what alltoall does.
    const std::string name = flex ? "deepep" : *type == "alltoall_seq" ? "alltoall" : *type;
    out_.set("--moe-token-dispatcher-type", *type, "moe_dispatcher", name);
  }

  void list_the_rest() {
    for (const auto& [name, value] : t_.all()) {
      if (t_.taken(name)) continue;
      if (megatron_arg_has_no_memory_effect(name))
        out_.ignore(name, value, kNoMemoryEffect);
      else
        out_.ignore(name, value,
                    fmt::format("not read by vramplan's Megatron importer ({} lists it)",
                                kMegatronArgumentsSource));
    }
  }

  ArgTable t_;
  int64_t world_size_;
  std::string world_from_;
  ImportBuilder& out_;
  bool moe_ = false;
};

}  // namespace

MegatronArgs megatron_args_from_words(std::span<const std::string> words,
                                      std::vector<std::string>* rest) {
  MegatronArgs out;
  auto is_option = [](const std::string& w) { return w.size() > 2 && w.rfind("--", 0) == 0; };
  size_t i = 0;
  while (i < words.size() && !is_option(words[i])) {
    if (rest) rest->push_back(words[i]);
    ++i;
  }
  while (i < words.size()) {
    const std::string& w = words[i++];
    if (!is_option(w)) {
      if (rest) rest->push_back(w);
      continue;
    }
    const size_t eq = w.find('=');
    if (eq != std::string::npos) {
      out.push_back({w.substr(0, eq), w.substr(eq + 1)});
      continue;
    }
    std::string value;
    while (i < words.size() && !is_option(words[i]))
      value += (value.empty() ? "" : " ") + words[i++];
    out.push_back({w, value.empty() ? "true" : value});
  }
  return out;
}

std::optional<Error> import_megatron_args(const MegatronArgs& args, int64_t world_size,
                                          const std::string& world_from, ImportBuilder& out) {
  return Importer(args, world_size, world_from, out).run();
}

}  // namespace vramplan::interop

#include "interop/hf/accelerate_config.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/text.h"

namespace vramplan::interop::hf {
namespace {

using nlohmann::json;

// Keys of accelerate's ClusterConfig (commands/config/config_args.py) that change nothing
// vramplan counts.
const std::initializer_list<const char*> kNoEffect = {
    "compute_environment",
    "machine_rank",
    "main_process_ip",
    "main_process_port",
    "rdzv_backend",
    "same_network",
    "gpu_ids",
    "main_training_function",
    "debug",
    "downcast_bf16",
    "tpu_",
    "enable_cpu_affinity",
    "num_cpu_threads_per_process",
    "deepspeed_config.gradient_clipping",
    "deepspeed_config.zero3_init_flag",
    "deepspeed_config.zero3_save_16bit_model",
    "deepspeed_config.deepspeed_hostfile",
    "deepspeed_config.deepspeed_multinode_launcher",
    "deepspeed_config.offload_optimizer_nvme_path",
    "deepspeed_config.offload_param_nvme_path",
    "dynamo_config.dynamo_mode",
    "dynamo_config.dynamo_use_fullgraph",
    "dynamo_config.dynamo_use_dynamic",
    "fp8_config.",
    "ipex_config.",
    "mpirun_config.",
    "commands",
    "command_file"};

// accelerate launch flags (commands/launch.py) that set a config key of another name.
const std::pair<const char*, std::pair<const char*, const char*>> kSwitches[] = {
    {"--multi_gpu", {"distributed_type", "MULTI_GPU"}},
    {"--use_fsdp", {"distributed_type", "FSDP"}},
    {"--use_deepspeed", {"distributed_type", "DEEPSPEED"}},
    {"--use_megatron_lm", {"distributed_type", "MEGATRON_LM"}},
    {"--cpu", {"use_cpu", "true"}},
};
constexpr const char* kDeepspeedFlags[] = {"zero_stage",
                                           "offload_optimizer_device",
                                           "offload_param_device",
                                           "gradient_accumulation_steps",
                                           "gradient_clipping",
                                           "zero3_init_flag",
                                           "zero3_save_16bit_model",
                                           "deepspeed_config_file",
                                           "deepspeed_hostfile",
                                           "deepspeed_multinode_launcher"};

std::optional<Precision> mixed_precision(const std::string& text) {
  const std::string t = to_lower(text);
  if (t == "no") return Precision::kFp32;
  if (t == "bf16" || t == "fp8") return Precision::kBf16;  // fp8 runs under bf16 autocast
  if (t == "fp16") return Precision::kFp16;
  return std::nullopt;
}

class Reader {
 public:
  Reader(DocKeys& keys, ImportBuilder& out) : k_(keys), out_(out) {}

  Result<AccelerateFacts> run() {
    if (auto e = read_type()) return *e;
    if (auto e = read_world()) return *e;
    if (auto e = read_precision()) return *e;
    if (auto e = read_fsdp_config(k_, "fsdp_config", out_, f_.fsdp)) return *e;
    if (f_.distributed_type == "FSDP" && !out_.has("fsdp")) {
      out_.set("(distributed_type FSDP)", "FULL_SHARD", "fsdp", "full_shard");  // its default
      f_.fsdp.on = true;
    }
    if (auto e = read_deepspeed()) return *e;
    read_unmodelled();
    k_.list_rest(out_, [](const std::string& path) {
      return starts_with_any(path, kNoEffect) ? std::string(kNoMemoryEffect)
                                              : "not read by vramplan's accelerate importer";
    });
    return f_;
  }

 private:
  std::optional<Error> read_type() {
    const json* v = k_.take_set("distributed_type");
    if (v == nullptr) return std::nullopt;
    const std::string key = k_.shown("distributed_type"), text = value_text(*v);
    std::string t = text;
    for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    f_.distributed_type = t;
    if (t == "NO") {
      out_.understood(key, text, "one process");
    } else if (t == "MULTI_GPU" || t == "MULTI_XPU" || t == "MULTI_NPU" || t == "MULTI_HPU" ||
               t == "MULTI_MLU" || t == "MULTI_MUSA" || t == "MULTI_SDAA") {
      out_.set(key, text, "zero", 0);
      out_.understood(key, text, "DistributedDataParallel: every rank holds the whole model");
    } else if (t == "FSDP") {
      out_.understood(key, text, "PyTorch FSDP (fsdp_config says how it shards)");
    } else if (t == "DEEPSPEED") {
      out_.understood(key, text, "DeepSpeed (deepspeed_config says the ZeRO stage)");
    } else if (t == "MEGATRON_LM" || t == "XLA" || t == "TPU" || t == "MULTI_CPU") {
      out_.unsupported(key, text, "accelerate's " + t + " runs");
    } else {
      return Error{key, text, "NO, MULTI_GPU, FSDP, DEEPSPEED (or MEGATRON_LM, XLA, MULTI_CPU)",
                   ""};
    }
    return std::nullopt;
  }

  std::optional<Error> read_world() {
    for (const char* name : {"num_processes", "num_machines"}) {
      const json* v = k_.take_set(name);
      if (v == nullptr) continue;
      const std::string key = k_.shown(name);
      Result<int64_t> n = integer_value(key, *v);
      if (!n || *n < 1) return Error{key, value_text(*v), "a positive integer", ""};
      if (std::string(name) == "num_processes") {
        f_.processes = *n;
        if (auto e = set_agreeing(out_, key, value_text(*v), "gpus", *n)) return e;
      } else {
        f_.machines = *n;
        out_.understood(key, value_text(*v), "machines (num_processes counts all of them)");
      }
    }
    if (f_.machines > 0 && f_.processes > 0 && f_.processes % f_.machines != 0)
      return Error{k_.shown("num_processes"), std::to_string(f_.processes),
                   fmt::format("a multiple of num_machines = {}", f_.machines), ""};
    return std::nullopt;
  }

  std::optional<Error> read_precision() {
    const json* v = k_.take_set("mixed_precision");
    if (v == nullptr) return std::nullopt;
    const std::string text = value_text(*v);
    f_.precision = mixed_precision(text);
    if (!f_.precision) return Error{k_.shown("mixed_precision"), text, "no, fp16, bf16, fp8", ""};
    f_.precision_key = k_.shown("mixed_precision");
    f_.precision_value = text;
    if (to_lower(text) == "fp8")
      out_.unsupported(f_.precision_key, text, "fp8 matmuls under accelerate (counted as bf16)");
    return std::nullopt;
  }

  std::optional<Error> read_deepspeed() {
    const std::string ds = "deepspeed_config.";
    if (const json* v = k_.take_set(ds + "zero_stage")) {
      const std::string key = k_.shown(ds + "zero_stage");
      Result<int64_t> n = integer_value(key, *v);
      if (!n || *n < 0 || *n > 3) return Error{key, value_text(*v), "0, 1, 2 or 3", ""};
      if (auto e = set_agreeing(out_, key, value_text(*v), "zero", *n)) return e;
    }
    for (const char* what : {"offload_optimizer_device", "offload_param_device"}) {
      const json* v = k_.take_set(ds + what);
      if (v == nullptr) continue;
      const std::string device = to_lower(value_text(*v));
      const char* setting =
          std::string_view(what) == "offload_param_device" ? "offload_params" : "offload_optimizer";
      if (device == "none" || device == "cpu" || device == "nvme")
        out_.set(k_.shown(ds + what), value_text(*v), setting, device);
      else
        out_.unsupported(k_.shown(ds + what), value_text(*v),
                         "a device other than none, cpu, nvme");
    }
    if (const json* v = k_.take_set(ds + "gradient_accumulation_steps")) {
      const std::string key = k_.shown(ds + "gradient_accumulation_steps");
      Result<int64_t> n = integer_value(key, *v);
      if (!n || *n < 1) return Error{key, value_text(*v), "a positive integer", ""};
      if (auto e = set_agreeing(out_, key, value_text(*v), "grad_accum", *n)) return e;
    }
    if (const json* v = k_.take_set(ds + "deepspeed_config_file")) {
      f_.deepspeed_file = value_text(*v);
      f_.deepspeed_file_key = k_.shown(ds + "deepspeed_config_file");
    }
    return std::nullopt;
  }

  void read_unmodelled() {
    if (const json* v = k_.take_set("dynamo_config.dynamo_backend")) {
      const std::string text = value_text(*v);
      if (to_lower(text) == "no")
        out_.understood(k_.shown("dynamo_config.dynamo_backend"), text, "no torch.compile");
      else
        out_.unsupported(k_.shown("dynamo_config.dynamo_backend"), text,
                         "torch.compile (fuses kernels, saves fewer activations)");
    }
    if (const json* v = k_.take_set("use_cpu"); v && bool_or(*v, false))
      out_.unsupported(k_.shown("use_cpu"), value_text(*v), "training on the CPU");
    for (const char* name : {"megatron_lm_config", "parallelism_config"})
      if (const json* v = k_.take_set(name); v && !v->empty())
        out_.unsupported(
            k_.shown(name), value_text(*v),
            std::string("accelerate's ") + name + " (tensor / context parallel sizes)");
  }

  DocKeys& k_;
  ImportBuilder& out_;
  AccelerateFacts f_;
};

}  // namespace

bool looks_like_accelerate_config(const json& doc) {
  return doc.is_object() && doc.contains("distributed_type") &&
         (doc.contains("compute_environment") || doc.contains("num_processes") ||
          doc.contains("mixed_precision") || doc.contains("fsdp_config") ||
          doc.contains("deepspeed_config") || doc.size() == 1);
}

json with_launch_flags(json config, const std::map<std::string, std::string>& flags,
                       std::map<std::string, std::string>& shown_as) {
  if (!config.is_object()) config = json::object();
  for (const auto& [flag, value] : flags) {
    if (flag.size() < 3 || flag.rfind("--", 0) != 0 || flag == "--config_file" ||
        flag == "--config-file" || flag == "--module" || flag == "--no_python")
      continue;
    std::string name = flag.substr(2);
    std::replace(name.begin(), name.end(), '-', '_');
    std::string path = name;
    json v = value;
    for (const auto& [sw, target] : kSwitches)
      if (flag == sw) {
        path = target.first;
        v = target.second;
      }
    if (name.rfind("fsdp_", 0) == 0) path = "fsdp_config." + name;
    for (const char* ds : kDeepspeedFlags)
      if (name == ds) path = std::string("deepspeed_config.") + ds;
    if (name == "dynamo_backend") path = "dynamo_config.dynamo_backend";
    json* node = &config;
    size_t start = 0;
    for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
      json& child = (*node)[path.substr(start, dot - start)];
      if (!child.is_object()) child = json::object();
      node = &child;
      start = dot + 1;
    }
    (*node)[path.substr(start)] = v;
    shown_as[path] = flag;
  }
  return config;
}

Result<AccelerateFacts> read_accelerate_config(DocKeys& keys, ImportBuilder& out) {
  return Reader(keys, out).run();
}

}  // namespace vramplan::interop::hf

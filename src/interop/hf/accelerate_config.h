// An accelerate config YAML (`accelerate config`, examples/config_yaml_templates) and the
// `accelerate launch` flags over it: the distributed type (DDP, FSDP, DeepSpeed), FSDP's
// sharding, mixed precision and the number of processes and machines.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "interop/hf/doc_keys.h"
#include "interop/hf/fsdp_options.h"
#include "interop/hf/hf_common.h"

namespace vramplan::interop::hf {

struct AccelerateFacts {
  std::string distributed_type;  // "NO", "MULTI_GPU", "FSDP", "DEEPSPEED" (upper case), "" unset
  std::optional<Precision> precision;  // mixed_precision
  std::string precision_key, precision_value;
  int64_t processes = 0, machines = 0;  // num_processes (all machines), num_machines
  std::string deepspeed_file;           // deepspeed_config.deepspeed_config_file
  std::string deepspeed_file_key;
  FsdpFacts fsdp;
};

bool looks_like_accelerate_config(const nlohmann::json& doc);

// `accelerate launch`'s own flags as config keys over `config` (a flag wins over the file, as
// accelerate applies them), each shown as the flag the user wrote.
nlohmann::json with_launch_flags(nlohmann::json config,
                                 const std::map<std::string, std::string>& flags,
                                 std::map<std::string, std::string>& shown_as);

// Reads the config into `out`; the precision is left to the caller (it depends on DeepSpeed).
Result<AccelerateFacts> read_accelerate_config(DocKeys& keys, ImportBuilder& out);

}  // namespace vramplan::interop::hf

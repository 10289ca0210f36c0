// Hugging Face TrainingArguments as a run's settings: given as a JSON or YAML file
// (HfArgumentParser.parse_json_file / parse_yaml_file) or as the `--flag value` list of a Trainer
// script, with the arguments the usual scripts add beside them (run_clm's ModelArguments and
// DataTrainingArguments, TRL's SFTConfig and ModelConfig: model, dtype, sequence length, PEFT).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "interop/hf/doc_keys.h"
#include "interop/hf/fsdp_options.h"
#include "interop/hf/hf_common.h"

namespace vramplan::interop::hf {

// What the TrainingArguments said that the other files of the run depend on (a DeepSpeed
// config's "auto" values, accelerate's mixed precision).
struct TrainerArgs {
  bool given = false;  // a TrainingArguments key was read
  std::optional<int64_t> micro_batch, grad_accum;
  std::string micro_batch_key, grad_accum_key;
  bool bf16 = false, fp16 = false;
  std::string precision_key;               // --bf16 / --fp16 as written ("" when neither)
  std::optional<Precision> weights_dtype;  // torch_dtype / dtype: the weights as loaded
  std::string weights_dtype_key;
  std::string deepspeed_key;                         // the deepspeed argument as written
  std::string deepspeed_path;                        // its value when it names a file
  const nlohmann::json* deepspeed_inline = nullptr;  // its value when it is the config itself
  bool peft = false;                                 // LoRA / QLoRA through PEFT
  FsdpFacts fsdp;
};

// The arguments as a document: a flag list ("--bf16", "--per_device_train_batch_size 4") as an
// object of name -> value text; `rest` collects the words that are no argument.
nlohmann::json flags_document(const std::vector<std::pair<std::string, std::string>>& flags);

// Whether `doc` holds TrainingArguments (a key only they use).
bool looks_like_training_args(const nlohmann::json& doc);

// Reads every TrainingArguments key of `keys` into `out` but the precision, which the caller
// sets once it knows whether DeepSpeed runs (see hf_run.h); every other key is listed.
Result<TrainerArgs> read_training_args(DocKeys& keys, ImportBuilder& out);

}  // namespace vramplan::interop::hf

// Launch scripts and command lines of the Hugging Face training stack: `deepspeed --num_gpus 8
// train.py --deepspeed ds.json ...`, `accelerate launch --config_file c.yaml train.py ...`,
// `torchrun ... train.py ...`, `tune run --nproc_per_node 8 lora_finetune_distributed --config
// r.yaml`, with the config files the script writes itself in here-documents
// (`cat > ds_config.json <<'EOF' ... EOF`, as DeepSpeed's and Megatron-DeepSpeed's example
// scripts do).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interop/launcher.h"
#include "interop/named_files.h"

namespace vramplan::interop::hf {

enum class Launcher { kDeepspeed, kAccelerate, kTorchrun, kTune, kPython };

struct HfLaunch {
  Launcher launcher = Launcher::kPython;
  LaunchedCommand command;  // the launcher's words, the program and its arguments, world size
  // The files the script writes with here-documents, by the name it writes them to (variables
  // set in the script expanded in the name and, for an unquoted delimiter, in the text).
  std::map<std::string, std::string> files;
  std::vector<std::string> unexpanded;  // what the shell parser could not expand
  // The files given with the text (API "from_files", or read by the CLI beside --from): found
  // when the script names a file it does not write.
  NamedFileLookup named;
};

// The training launch of `text` (the last one in a script), or nullopt when it has none. A bare
// program with arguments ("train.py --bf16 ...") counts as a python launch.
std::optional<HfLaunch> find_hf_launch(std::string_view text);

// The launcher's options as name -> value ("--num_processes 8", "--use_fsdp" -> "true").
std::map<std::string, std::string> launcher_options(const std::vector<std::string>& launcher_words);

// The program's arguments as "--name value" pairs (a flag alone: "true"; several values: joined
// by spaces), and the words that are no argument in `rest`.
std::vector<std::pair<std::string, std::string>> program_arguments(
    const std::vector<std::string>& words, std::vector<std::string>* rest);

// A file the script wrote, found by the name an argument gives (the whole path, or its last
// component), else one given with the text; nullptr when neither holds it.
const std::string* written_file(const HfLaunch& launch, const std::string& name);

}  // namespace vramplan::interop::hf

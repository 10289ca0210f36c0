// Finding the training command in a launch script or command line, and the world size its
// launcher starts: torchrun / python -m torch.distributed.run (--nproc-per-node × --nnodes),
// deepspeed (--num_gpus × --num_nodes), accelerate launch (--num_processes), srun / SLURM
// variables set in the script.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "interop/shell_words.h"

namespace vramplan::interop {

struct LaunchedCommand {
  std::vector<std::string> launcher;  // the launcher's words, up to the program it runs
  std::vector<std::string> program;   // the program and its arguments
  int64_t world_size = 0;             // 0: the launcher does not say
  std::string world_size_from;        // "torchrun --nproc-per-node 8 × --nnodes 2"
  int line = 0;
};

// The last command of `script` whose program `is_program` accepts (checked on each word, so
// that a launcher's own options and a python interpreter may precede it).
std::optional<LaunchedCommand> find_launched(
    const ShellScript& script, const std::function<bool(const std::string& word)>& is_program);

}  // namespace vramplan::interop

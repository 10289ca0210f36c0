// Finding a vLLM or SGLang launch in what the user pasted: a command line, a shell script, a
// `docker run` of the engines' images, or a terminal session with the engine's log below the
// command. The log lines are kept apart (serving_log.h reads them); the rest is split into words
// the way a POSIX shell splits them (shell_words.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/serving/inference.h"

namespace vramplan::interop {

struct PastedText {
  std::string script;            // the text without its log lines and "$ " prompts
  std::vector<std::string> log;  // lines in vLLM's or SGLang's log format, in order
};

PastedText split_pasted(std::string_view text);

struct ServingCommand {
  ServingEngine engine = ServingEngine::kVllm;
  std::string program;             // as launched: "vllm serve", "python3 -m sglang.launch_server"
  std::vector<std::string> words;  // the engine's arguments, after the program
  // Variables the script sets (prefix assignments and exports included) and `docker run -e`.
  std::map<std::string, std::string> environment;
  std::vector<std::string> environment_keys;  // docker -e / --env keys as written, in order
  std::vector<std::string> unexpanded;        // what the shell could not expand in the words
  int line = 0;
};

// The last engine launch in `script`: `vllm serve`, `python -m vllm.entrypoints.openai.api_server`
// (or .api_server), `python -m sglang.launch_server` (or sglang_router.launch_server), or a
// `docker run` of vllm/vllm-openai (whose entry point is the OpenAI server).
std::optional<ServingCommand> find_serving_command(std::string_view script);

}  // namespace vramplan::interop

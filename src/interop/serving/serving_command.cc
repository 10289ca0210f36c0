#include "interop/serving/serving_command.h"

#include <cctype>
#include <set>

#include "interop/shell_words.h"

namespace vramplan::interop {
namespace {

std::string basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// `text` starts with `pattern`, where 'd' stands for a digit and any other character for itself.
bool starts_with_pattern(std::string_view text, std::string_view pattern) {
  if (text.size() < pattern.size()) return false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(text[i])) != 0;
    if (pattern[i] == 'd' ? !digit : text[i] != pattern[i]) return false;
  }
  return true;
}

// vLLM logs "INFO 12-13 19:54:18 worker.py:243] ..." (newer: "[worker.py:243]"), worker processes
// prefixed "(VllmWorker rank=0 pid=12) "; SGLang logs "[2025-07-22 10:00:00 TP0] ..."
// (vllm/logger.py _FORMAT; sglang/srt/utils.py configure_logger).
bool is_log_line(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  if (line.size() > 2 && line.front() == '(') {
    const size_t close = line.find(") ");
    if (close != std::string_view::npos && close < 80) line.remove_prefix(close + 2);
  }
  if (starts_with_pattern(line, "[dddd-dd-dd dd:dd:dd")) return true;
  for (std::string_view level : {"INFO ", "WARNING ", "DEBUG ", "ERROR ", "CRITICAL "}) {
    if (line.substr(0, level.size()) != level) continue;
    return starts_with_pattern(line.substr(level.size()), "dd-dd dd:dd:dd");
  }
  return false;
}

// Options of `docker run` that take a value (docker/cli run and create flags); every other
// option is a switch (--rm, -d, -it, --privileged ...).
const std::set<std::string>& docker_value_options() {
  static const std::set<std::string> names = {"-e",
                                              "--env",
                                              "-v",
                                              "--volume",
                                              "-p",
                                              "--publish",
                                              "--name",
                                              "--gpus",
                                              "--runtime",
                                              "--ipc",
                                              "--shm-size",
                                              "--network",
                                              "--net",
                                              "--entrypoint",
                                              "-w",
                                              "--workdir",
                                              "-u",
                                              "--user",
                                              "--device",
                                              "--ulimit",
                                              "--mount",
                                              "--env-file",
                                              "--label",
                                              "-l",
                                              "--cpus",
                                              "--memory",
                                              "-m",
                                              "--restart",
                                              "--pid",
                                              "--platform",
                                              "--security-opt",
                                              "--cap-add",
                                              "--cap-drop",
                                              "--group-add",
                                              "--add-host",
                                              "--hostname",
                                              "-h",
                                              "--log-driver",
                                              "--log-opt",
                                              "--health-cmd",
                                              "--uts",
                                              "--userns"};
  return names;
}

// `docker run ... IMAGE args`: the position of IMAGE after `run` at `start`, and the -e values.
size_t docker_image(const std::vector<std::string>& w, size_t start, ServingCommand& cmd) {
  for (size_t i = start; i < w.size(); ++i) {
    const std::string& word = w[i];
    if (word.empty() || word[0] != '-') return i;
    const size_t eq = word.find('=');
    const std::string name = word.substr(0, eq);
    if (eq == std::string::npos && docker_value_options().count(name) == 0) continue;
    const std::string value = eq != std::string::npos ? word.substr(eq + 1)
                              : i + 1 < w.size()      ? w[++i]
                                                      : "";
    if (name != "-e" && name != "--env") continue;
    const size_t assign = value.find('=');
    cmd.environment_keys.push_back(value.substr(0, assign));
    if (assign != std::string::npos)
      cmd.environment[value.substr(0, assign)] = value.substr(assign + 1);
  }
  return w.size();
}

// Where the engine's arguments start in `w`, with its engine and program text; npos when the
// command launches no engine.
size_t engine_start(const std::vector<std::string>& w, ServingCommand& cmd) {
  auto joined = [&](size_t from, size_t to) {
    std::string out;
    for (size_t k = from; k < to; ++k) out += (out.empty() ? "" : " ") + w[k];
    return out;
  };
  // `vllm` runs when it starts the command or follows a wrapper (exec, nohup, uv run, srun ...):
  // `echo vllm serve` launches nothing.
  auto runs = [&](size_t i) {
    if (i == 0) return true;
    const std::string& before = w[i - 1];
    return before == "exec" || before == "nohup" || before == "time" || before == "env" ||
           before == "run" || before == "srun" || before == "sudo" || before[0] == '-';
  };
  for (size_t i = 0; i < w.size(); ++i) {
    if (basename(w[i]) == "vllm" && runs(i) && i + 1 < w.size() && w[i + 1] == "serve") {
      cmd.engine = ServingEngine::kVllm;
      cmd.program = "vllm serve";
      return i + 2;
    }
    const bool module = i > 0 && w[i - 1] == "-m";  // python -m MODULE
    if (module &&
        (w[i] == "vllm.entrypoints.openai.api_server" || w[i] == "vllm.entrypoints.api_server" ||
         w[i] == "sglang.launch_server" || w[i] == "sglang_router.launch_server")) {
      cmd.engine = w[i].rfind("vllm", 0) == 0 ? ServingEngine::kVllm : ServingEngine::kSglang;
      cmd.program = joined(i >= 2 ? i - 2 : 0, i + 1);
      return i + 1;
    }
    if (w[i] == "docker" && i + 1 < w.size() && w[i + 1] == "run") {
      const size_t image = docker_image(w, i + 2, cmd);
      // vllm/vllm-openai runs `vllm serve` (older images the OpenAI api_server module).
      if (image < w.size() && w[image].find("vllm-openai") != std::string::npos) {
        cmd.engine = ServingEngine::kVllm;
        cmd.program = "docker run " + w[image];
        return image + 1;
      }
      i = image;  // an image whose command follows: look on from there
    }
  }
  return std::string::npos;
}

}  // namespace

PastedText split_pasted(std::string_view text) {
  PastedText out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (is_log_line(line)) {
      out.log.emplace_back(line);
      out.script += '\n';  // keeps the script's line numbers
    } else {
      if (line.substr(0, 2) == "$ ") line.remove_prefix(2);  // a terminal's prompt
      out.script.append(line);
      out.script += '\n';
    }
    start = end + 1;
  }
  return out;
}

std::optional<ServingCommand> find_serving_command(std::string_view script) {
  const ShellScript parsed = parse_shell(script);
  std::optional<ServingCommand> found;
  for (const ShellCommand& c : parsed.commands) {
    ServingCommand cmd;
    const size_t start = engine_start(c.words, cmd);
    if (start == std::string::npos) continue;
    cmd.words.assign(c.words.begin() + static_cast<std::ptrdiff_t>(start), c.words.end());
    cmd.line = c.line;
    for (const auto& [name, value] : parsed.variables) cmd.environment.emplace(name, value);
    // Only what reaches the engine's words matters ($HF_TOKEN in `docker -e` does not).
    for (const std::string& u : parsed.unexpanded) {
      const std::string text = u.substr(0, u.find(" on line "));
      for (const std::string& w : cmd.words)
        if (w.find(text) != std::string::npos) {
          cmd.unexpanded.push_back(u);
          break;
        }
    }
    found = std::move(cmd);
  }
  return found;
}

}  // namespace vramplan::interop

#include "interop/launcher.h"

#include <charconv>
#include <map>

namespace vramplan::interop {
namespace {

// "8", "1:4" (torchrun's elastic range: the most it starts), else 0.
int64_t count_of(const std::string& text) {
  const std::string upper =
      text.substr(text.find(':') == std::string::npos ? 0 : text.find(':') + 1);
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(upper.data(), upper.data() + upper.size(), n);
  if (ec != std::errc() || ptr != upper.data() + upper.size() || n <= 0) return 0;
  return n;
}

// The launcher's options as name -> value ("--nproc_per_node=8" and "--nproc_per_node 8").
std::map<std::string, std::string> options_of(const std::vector<std::string>& words) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.empty() || w[0] != '-') continue;
    const size_t eq = w.find('=');
    if (eq != std::string::npos) {
      out[w.substr(0, eq)] = w.substr(eq + 1);
    } else if (i + 1 < words.size() && (words[i + 1].empty() || words[i + 1][0] != '-')) {
      out[w] = words[i + 1];
    }
  }
  return out;
}

std::string first_of(const std::map<std::string, std::string>& options,
                     std::initializer_list<const char*> names, std::string* which) {
  for (const char* n : names) {
    auto it = options.find(n);
    if (it != options.end()) {
      *which = n;
      return it->second;
    }
  }
  return "";
}

void world_size_of(LaunchedCommand& cmd) {
  const std::map<std::string, std::string> o = options_of(cmd.launcher);
  std::string per_node_flag, nodes_flag, total_flag;
  const std::string per_node = first_of(o,
                                        {"--nproc-per-node", "--nproc_per_node", "--num_gpus",
                                         "--num-gpus", "--gpus-per-node", "--ntasks-per-node"},
                                        &per_node_flag);
  const std::string nodes =
      first_of(o, {"--nnodes", "--num_nodes", "--num-nodes", "--num_machines", "--nodes", "-N"},
               &nodes_flag);
  const std::string total =
      first_of(o, {"--num_processes", "--num-processes", "--ntasks", "-n"}, &total_flag);
  if (!total.empty() && count_of(total) > 0) {
    cmd.world_size = count_of(total);
    cmd.world_size_from = total_flag + " " + total;
    return;
  }
  if (per_node.empty() || count_of(per_node) == 0) return;
  const int64_t n = nodes.empty() ? 1 : count_of(nodes);
  if (n == 0) return;
  cmd.world_size = count_of(per_node) * n;
  cmd.world_size_from = per_node_flag + " " + per_node;
  if (!nodes.empty()) cmd.world_size_from += " × " + nodes_flag + " " + nodes;
}

}  // namespace

std::optional<LaunchedCommand> find_launched(
    const ShellScript& script, const std::function<bool(const std::string& word)>& is_program) {
  std::optional<LaunchedCommand> found;
  for (const ShellCommand& c : script.commands) {
    for (size_t i = 0; i < c.words.size(); ++i) {
      if (!is_program(c.words[i])) continue;
      LaunchedCommand cmd;
      cmd.launcher.assign(c.words.begin(), c.words.begin() + static_cast<std::ptrdiff_t>(i));
      cmd.program.assign(c.words.begin() + static_cast<std::ptrdiff_t>(i), c.words.end());
      cmd.line = c.line;
      world_size_of(cmd);
      found = std::move(cmd);
      break;
    }
  }
  return found;
}

}  // namespace vramplan::interop

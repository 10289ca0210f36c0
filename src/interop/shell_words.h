// Launch scripts and command lines split into commands and words the way a POSIX shell splits
// them: quotes, backslashes, line continuations and comments; variables and arrays set in the
// script expanded where they are used ($X, ${X}, ${X:-default}, "${ARGS[@]}", $((A * B))).
// Nothing is executed: a command substitution $(...) stays as written and is reported.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::interop {

struct ShellCommand {
  std::vector<std::string> words;  // after expansion; assignments before the command removed
  int line = 0;                    // where the command starts, 1-based
};

struct ShellScript {
  std::vector<ShellCommand> commands;
  // Every variable the script sets, with its last value (arrays as their words joined by spaces).
  std::map<std::string, std::string> variables;
  // What could not be expanded: "$(hostname) on line 3", "$1 on line 5".
  std::vector<std::string> unexpanded;
};

// `environment` holds variables known before the script runs (none by default: a user's shell
// is not this machine's).
ShellScript parse_shell(std::string_view text,
                        const std::map<std::string, std::string>& environment = {});

}  // namespace vramplan::interop

#include "interop/hf/hf_script.h"

#include <cctype>

#include "interop/shell_words.h"

namespace vramplan::interop::hf {
namespace {

std::string basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct Heredoc {
  std::string target;
  std::string body;
  bool expand = true;  // an unquoted delimiter: the shell expands variables in the text
};

std::string unquote(std::string word) {
  if (word.size() >= 2 && (word.front() == '\'' || word.front() == '"') &&
      word.back() == word.front())
    return word.substr(1, word.size() - 2);
  return word;
}

// The word after position `i` of `line` (blanks skipped), up to a blank, ';', '&' or '|'.
std::string word_at(const std::string& line, size_t i) {
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  size_t end = i;
  while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])) &&
         line[end] != ';' && line[end] != '&' && line[end] != '|' && line[end] != '<')
    ++end;
  return unquote(line.substr(i, end - i));
}

// Where `cat > FILE <<EOF`, `cat <<EOF > FILE` or `... | tee FILE` writes.
std::string heredoc_target(const std::string& line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '>' && (i == 0 || line[i - 1] != '<')) {
      const size_t from = i + 1 < line.size() && line[i + 1] == '>' ? i + 2 : i + 1;
      const std::string w = word_at(line, from);
      if (!w.empty()) return w;
    }
  }
  const size_t tee = line.find("tee ");
  if (tee != std::string::npos) {
    std::string w = word_at(line, tee + 4);
    if (w == "-a") w = word_at(line, line.find("-a", tee) + 2);
    return w;
  }
  return "";
}

// Blanks the here-documents of `text` (keeping its lines, so that line numbers stay) and
// collects them.
std::string strip_heredocs(std::string_view text, std::vector<Heredoc>& docs) {
  std::string out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string line(text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    const size_t op = line.find("<<");
    if (op == std::string::npos || line.compare(op, 3, "<<<") == 0 || line.find('#') < op) {
      out += line + "\n";
      continue;
    }
    const bool strip_tabs = op + 2 < line.size() && line[op + 2] == '-';
    const std::string raw = word_at(line, op + (strip_tabs ? 3 : 2));
    Heredoc doc;
    doc.expand =
        line.find('\'', op) == std::string::npos && line.find('"', op) == std::string::npos;
    doc.target = heredoc_target(line);
    out += "\n";
    while (pos <= text.size()) {
      const size_t end = text.find('\n', pos);
      std::string body_line(
          text.substr(pos, end == std::string_view::npos ? text.npos : end - pos));
      pos = end == std::string_view::npos ? text.size() + 1 : end + 1;
      out += "\n";
      if (strip_tabs) body_line.erase(0, body_line.find_first_not_of('\t'));
      if (body_line == raw) break;
      doc.body += body_line + "\n";
    }
    docs.push_back(std::move(doc));
  }
  return out;
}

// $NAME, ${NAME} and ${NAME:-default} from the script's variables; the rest as written.
std::string expand_variables(const std::string& text,
                             const std::map<std::string, std::string>& vars) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    size_t start = i + 1, end = start;
    std::string name, fallback;
    bool braced = text[start] == '{';
    if (braced) {
      end = text.find('}', start);
      if (end == std::string::npos) {
        out += text[i];
        continue;
      }
      name = text.substr(start + 1, end - start - 1);
      if (const size_t dash = name.find(":-"); dash != std::string::npos) {
        fallback = name.substr(dash + 2);
        name = name.substr(0, dash);
      }
      ++end;
    } else {
      while (end < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
        ++end;
      name = text.substr(start, end - start);
    }
    auto it = vars.find(name);
    if (name.empty() || (it == vars.end() && fallback.empty())) {
      out += text[i];
      continue;
    }
    out += it != vars.end() ? it->second : fallback;
    i = end - 1;
  }
  return out;
}

bool is_tune_recipe(const std::string& w) {
  return !w.empty() && w[0] != '-' &&
         (w.find("_single_device") != std::string::npos ||
          w.find("_distributed") != std::string::npos || w.find("finetune") != std::string::npos);
}

bool is_training_program(const std::string& word) {
  const std::string name = basename(word);
  return (name.size() > 3 && name.ends_with(".py")) || name == "trl" || is_tune_recipe(word);
}

Launcher launcher_of(const std::vector<std::string>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string name = basename(words[i]);
    if (name == "deepspeed") return Launcher::kDeepspeed;
    if (name == "accelerate") return Launcher::kAccelerate;
    if (name == "tune") return Launcher::kTune;
    if (name == "torchrun" || words[i] == "torch.distributed.run" ||
        words[i] == "torch.distributed.launch")
      return Launcher::kTorchrun;
  }
  return Launcher::kPython;
}

}  // namespace

std::optional<HfLaunch> find_hf_launch(std::string_view text) {
  std::vector<Heredoc> docs;
  const std::string stripped = strip_heredocs(text, docs);
  const ShellScript script = parse_shell(stripped);
  std::optional<LaunchedCommand> launched = find_launched(script, is_training_program);
  if (!launched) return std::nullopt;
  HfLaunch out;
  out.launcher = launcher_of(launched->launcher);
  out.command = std::move(*launched);
  out.unexpanded = script.unexpanded;
  for (Heredoc& d : docs) {
    if (d.target.empty()) continue;
    const std::string target = expand_variables(d.target, script.variables);
    out.files[target] = d.expand ? expand_variables(d.body, script.variables) : d.body;
  }
  return out;
}

std::map<std::string, std::string> launcher_options(const std::vector<std::string>& words) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w[0] != '-') continue;
    const size_t eq = w.find('=');
    if (eq != std::string::npos) {
      out[w.substr(0, eq)] = w.substr(eq + 1);
    } else if (i + 1 < words.size() && !words[i + 1].empty() && words[i + 1][0] != '-') {
      out[w] = words[++i];
    } else {
      out[w] = "true";
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> program_arguments(
    const std::vector<std::string>& words, std::vector<std::string>* rest) {
  std::vector<std::pair<std::string, std::string>> out;
  auto is_option = [](const std::string& w) { return w.size() > 2 && w.rfind("--", 0) == 0; };
  size_t i = 0;
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

const std::string* written_file(const HfLaunch& launch, const std::string& name) {
  if (auto it = launch.files.find(name); it != launch.files.end()) return &it->second;
  for (const auto& [path, text] : launch.files)
    if (basename(path) == basename(name)) return &text;
  return launch.named.find(name);
}

}  // namespace vramplan::interop::hf

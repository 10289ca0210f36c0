#include "interop/shell_words.h"

#include <cctype>
#include <cstdint>
#include <optional>

namespace vramplan::interop {
namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
// Characters that end an unquoted word.
bool ends_word(char c) {
  return is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' ||
         c == '<' || c == '>';
}

std::vector<std::string> split_blanks(const std::string& text) {
  std::vector<std::string> out;
  std::string part;
  for (char c : text) {
    if (is_blank(c) || c == '\n') {
      if (!part.empty()) out.push_back(std::move(part));
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) out.push_back(std::move(part));
  return out;
}

// A word being built: fields, since an unquoted expansion may split it into several.
struct Fields {
  std::vector<std::string> list{""};
  bool quoted = false;  // "" and '' make a word even when empty

  void append(const std::string& text) { list.back() += text; }
  // Adds `parts` as an expansion: the first continues the current field, the rest start new ones.
  void append_parts(const std::vector<std::string>& parts) {
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) list.emplace_back();
      list.back() += parts[i];
    }
  }
  bool empty() const { return !quoted && list.size() == 1 && list[0].empty(); }
};

class Parser {
 public:
  Parser(std::string_view text, ShellScript& out,
         std::map<std::string, std::vector<std::string>>& vars)
      : s_(text), out_(out), vars_(vars) {}

  void run() {
    while (!at_end()) read_command();
  }

  // The text expanded as inside double quotes (for ${X:-default} and $((...)) operands).
  std::string expand_quoted() {
    Fields f;
    while (!at_end()) read_char(f, /*double_quoted=*/true);
    std::string joined;
    for (size_t i = 0; i < f.list.size(); ++i) joined += (i ? " " : "") + f.list[i];
    return joined;
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }
  char peek(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  char take() {
    const char c = s_[i_++];
    if (c == '\n') ++line_;
    return c;
  }

  // Blanks, line continuations and comments up to the next word or command end.
  void skip_blanks() {
    for (;;) {
      if (is_blank(peek())) {
        take();
      } else if (peek() == '\\' && peek(1) == '\n') {
        take();
        take();
      } else if (peek() == '#') {
        while (!at_end() && peek() != '\n') take();
      } else {
        return;
      }
    }
  }

  void read_command() {
    ShellCommand cmd;
    cmd.line = line_;
    bool exporting = false;
    for (;;) {
      skip_blanks();
      if (at_end()) break;
      const char c = peek();
      if (c == '\n' || c == ';' || c == '&' || c == '|') {
        while (peek() == c) take();
        if (!cmd.words.empty() || c == '\n' || c == ';') break;
        continue;
      }
      if (c == '(' || c == ')' || c == '<' || c == '>') {  // subshells, redirections: skipped
        take();
        continue;
      }
      if (cmd.words.empty() || exporting) {
        if (read_assignment()) continue;
      }
      Fields f = read_word();
      if (f.empty()) continue;
      for (std::string& w : f.list) cmd.words.push_back(std::move(w));
      if (cmd.words.size() == 1) {
        const std::string& first = cmd.words.front();
        exporting = first == "export" || first == "declare" || first == "local" ||
                    first == "readonly" || first == "typeset";
      }
    }
    if (exporting && !cmd.words.empty()) return;  // "export X=1" sets, runs nothing
    if (!cmd.words.empty()) out_.commands.push_back(std::move(cmd));
  }

  // NAME=value or NAME=( words... ) at the cursor: sets the variable and returns true.
  bool read_assignment() {
    if (!is_name_start(peek())) return false;
    size_t k = 0;
    while (is_name_char(peek(k))) ++k;
    size_t eq = k;
    if (peek(eq) == '+' && peek(eq + 1) == '=') ++eq;  // NAME+=value appends
    if (peek(eq) != '=') return false;
    const std::string name(s_.substr(i_, k));
    const bool append = eq != k;
    for (size_t j = 0; j <= eq; ++j) take();
    std::vector<std::string> value;
    if (peek() == '(') {
      take();
      for (;;) {
        skip_blanks();
        while (peek() == '\n') {
          take();
          skip_blanks();
        }
        if (at_end()) break;
        if (peek() == ')') {
          take();
          break;
        }
        Fields f = read_word();
        if (f.empty() && !at_end() && ends_word(peek())) take();  // a stray operator character
        if (!f.empty())
          for (std::string& w : f.list) value.push_back(std::move(w));
      }
    } else {
      Fields f = read_word(/*split=*/false);
      std::string joined;
      for (size_t j = 0; j < f.list.size(); ++j) joined += (j ? " " : "") + f.list[j];
      value.push_back(std::move(joined));
    }
    std::vector<std::string>& target = vars_[name];
    if (!append) target.clear();
    if (append && !target.empty() && value.size() == 1 && !value[0].empty())
      target.back() += value[0];
    else
      target.insert(target.end(), value.begin(), value.end());
    return true;
  }

  Fields read_word(bool split = true) {
    Fields f;
    split_ = split;
    while (!at_end() && !ends_word(peek())) {
      if (peek() == '\\' && peek(1) == '\n') {
        take();
        take();
        continue;
      }
      read_char(f, /*double_quoted=*/false);
    }
    return f;
  }

  // One unit of a word: a character, an escape, a quoted string or an expansion.
  void read_char(Fields& f, bool double_quoted) {
    const char c = take();
    if (c == '\\') {
      if (at_end()) return;
      const char next = take();
      if (double_quoted && next != '$' && next != '"' && next != '\\' && next != '`')
        f.append("\\");
      if (next != '\n') f.append(std::string(1, next));
      return;
    }
    if (c == '\'' && !double_quoted) {
      f.quoted = true;
      while (!at_end() && peek() != '\'') f.append(std::string(1, take()));
      if (!at_end()) take();
      return;
    }
    if (c == '"' && !double_quoted) {
      f.quoted = true;
      while (!at_end() && peek() != '"') {
        if (peek() == '\\' && peek(1) == '\n') {
          take();
          take();
          continue;
        }
        read_char(f, true);
      }
      if (!at_end()) take();
      return;
    }
    if (c == '`') {
      const size_t start = i_ - 1;
      while (!at_end() && peek() != '`') take();
      if (!at_end()) take();
      keep_unexpanded(f, std::string(s_.substr(start, i_ - start)));
      return;
    }
    if (c == '$') {
      expand(f, double_quoted);
      return;
    }
    f.append(std::string(1, c));
  }

  void keep_unexpanded(Fields& f, const std::string& text) {
    out_.unexpanded.push_back(text + " on line " + std::to_string(line_));
    f.append(text);
  }

  // The text up to the `close` that matches an `open` already taken, nesting counted.
  std::string until_matching(char open, char close) {
    const size_t start = i_;
    int depth = 1;
    while (!at_end()) {
      const char c = take();
      if (c == open) ++depth;
      if (c == close && --depth == 0) return std::string(s_.substr(start, i_ - 1 - start));
    }
    return std::string(s_.substr(start));
  }

  void add_value(Fields& f, const std::vector<std::string>& words, bool double_quoted) {
    if (double_quoted || !split_) {
      f.append_parts(words);
      return;
    }
    std::vector<std::string> parts;
    for (const std::string& w : words)
      for (std::string& p : split_blanks(w)) parts.push_back(std::move(p));
    f.append_parts(parts);
  }

  void expand(Fields& f, bool double_quoted) {
    if (peek() == '(' && peek(1) == '(') {
      take();
      take();
      std::string expr = until_matching('(', ')');
      if (peek() == ')') take();
      std::optional<int64_t> value = arithmetic(expr);
      if (value)
        f.append(std::to_string(*value));
      else
        keep_unexpanded(f, "$((" + expr + "))");
      return;
    }
    if (peek() == '(') {
      take();
      keep_unexpanded(f, "$(" + until_matching('(', ')') + ")");
      return;
    }
    if (peek() == '{') {
      take();
      expand_braced(f, until_matching('{', '}'), double_quoted);
      return;
    }
    if (is_name_start(peek())) {
      size_t k = 0;
      while (is_name_char(peek(k))) ++k;
      const std::string name(s_.substr(i_, k));
      for (size_t j = 0; j < k; ++j) take();
      add_value(f, lookup(name, "$" + name), double_quoted);
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '@' || peek() == '*' ||
        peek() == '#' || peek() == '?') {
      const std::string text = std::string("$") + take();
      keep_unexpanded(f, text);
      return;
    }
    f.append("$");
  }

  // ${NAME}, ${NAME[@]}, ${NAME[*]}, ${NAME:-word}, ${NAME-word}, ${NAME:=word}, ${#NAME}.
  void expand_braced(Fields& f, const std::string& body, bool double_quoted) {
    size_t k = 0;
    const bool length = !body.empty() && body[0] == '#';
    if (length) k = 1;
    const size_t name_start = k;
    while (k < body.size() && is_name_char(body[k])) ++k;
    const std::string name = body.substr(name_start, k - name_start);
    if (name.empty() || !is_name_start(name[0])) {
      keep_unexpanded(f, "${" + body + "}");
      return;
    }
    bool whole_array = false;
    if (body.compare(k, 3, "[@]") == 0 || body.compare(k, 3, "[*]") == 0) {
      whole_array = true;
      k += 3;
    }
    const std::string rest = body.substr(k);
    auto it = vars_.find(name);
    const bool set = it != vars_.end();
    const bool null =
        !set || it->second.empty() || (it->second.size() == 1 && it->second[0].empty());
    if (length) {
      f.append(std::to_string(set && !it->second.empty() ? it->second[0].size() : 0));
      return;
    }
    if (rest.empty()) {
      std::vector<std::string> words = lookup(name, "${" + body + "}");
      if (!whole_array && words.size() > 1) words.resize(1);  // ${ARR} is its first element
      add_value(f, words, double_quoted);
      return;
    }
    const bool colon = rest[0] == ':';
    const size_t op_at = colon ? 1 : 0;
    if (op_at >= rest.size()) {
      keep_unexpanded(f, "${" + body + "}");
      return;
    }
    const char op = rest[op_at];
    const std::string word = rest.substr(op_at + 1);
    const bool use_word = colon ? null : !set;
    if (op == '-' || op == '=') {
      if (!use_word) {
        add_value(f, it->second, double_quoted);
        return;
      }
      Parser sub(word, out_, vars_);
      const std::string value = sub.expand_quoted();
      if (op == '=') vars_[name] = {value};
      add_value(f, {value}, double_quoted);
      return;
    }
    if (op == '+') {
      if (!use_word) {
        Parser sub(word, out_, vars_);
        add_value(f, {sub.expand_quoted()}, double_quoted);
      }
      return;
    }
    keep_unexpanded(f, "${" + body + "}");
  }

  std::vector<std::string> lookup(const std::string& name, const std::string& as_written) {
    auto it = vars_.find(name);
    if (it != vars_.end()) return it->second;
    out_.unexpanded.push_back(as_written + " on line " + std::to_string(line_) + " (not set)");
    return {};
  }

  // Integer arithmetic of $((...)): + - * / % and parentheses over numbers and variables.
  std::optional<int64_t> arithmetic(const std::string& expr) {
    size_t pos = 0;
    bool ok = true;
    const int64_t v = sum(expr, pos, ok);
    while (pos < expr.size() && is_blank(expr[pos])) ++pos;
    if (!ok || pos != expr.size()) return std::nullopt;
    return v;
  }
  void blanks(const std::string& e, size_t& p) {
    while (p < e.size() && (is_blank(e[p]) || e[p] == '\n')) ++p;
  }
  int64_t sum(const std::string& e, size_t& p, bool& ok) {
    int64_t v = product(e, p, ok);
    for (;;) {
      blanks(e, p);
      if (p >= e.size() || (e[p] != '+' && e[p] != '-')) return v;
      const char op = e[p++];
      const int64_t r = product(e, p, ok);
      v = op == '+' ? v + r : v - r;
    }
  }
  int64_t product(const std::string& e, size_t& p, bool& ok) {
    int64_t v = atom(e, p, ok);
    for (;;) {
      blanks(e, p);
      if (p >= e.size() || (e[p] != '*' && e[p] != '/' && e[p] != '%')) return v;
      const char op = e[p++];
      const int64_t r = atom(e, p, ok);
      if (op == '*') {
        v *= r;
      } else if (r == 0) {
        ok = false;
        return 0;
      } else {
        v = op == '/' ? v / r : v % r;
      }
    }
  }
  int64_t atom(const std::string& e, size_t& p, bool& ok) {
    blanks(e, p);
    if (p >= e.size()) {
      ok = false;
      return 0;
    }
    if (e[p] == '(') {
      ++p;
      const int64_t v = sum(e, p, ok);
      blanks(e, p);
      if (p < e.size() && e[p] == ')')
        ++p;
      else
        ok = false;
      return v;
    }
    if (e[p] == '-') {
      ++p;
      return -atom(e, p, ok);
    }
    if (e[p] == '$') ++p;
    if (e[p] == '{') {
      const size_t close = e.find('}', p);
      if (close == std::string::npos) {
        ok = false;
        return 0;
      }
      const std::string name = e.substr(p + 1, close - p - 1);
      p = close + 1;
      return variable_number(name, ok);
    }
    if (is_name_start(e[p])) {
      const size_t start = p;
      while (p < e.size() && is_name_char(e[p])) ++p;
      return variable_number(e.substr(start, p - start), ok);
    }
    const size_t start = p;
    while (p < e.size() && std::isdigit(static_cast<unsigned char>(e[p]))) ++p;
    if (start == p || p - start > 18) {
      ok = false;
      return 0;
    }
    return std::stoll(e.substr(start, p - start));
  }
  int64_t variable_number(const std::string& name, bool& ok) {
    auto it = vars_.find(name);
    if (it == vars_.end() || it->second.empty()) {
      ok = false;
      return 0;
    }
    const std::string& text = it->second[0];
    if (text.empty() || text.size() > 18 ||
        text.find_first_not_of("0123456789") != std::string::npos) {
      ok = false;
      return 0;
    }
    return std::stoll(text);
  }

  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1;
  bool split_ = true;
  ShellScript& out_;
  std::map<std::string, std::vector<std::string>>& vars_;
};

}  // namespace

ShellScript parse_shell(std::string_view text,
                        const std::map<std::string, std::string>& environment) {
  ShellScript out;
  std::map<std::string, std::vector<std::string>> vars;
  for (const auto& [name, value] : environment) vars[name] = {value};
  Parser(text, out, vars).run();
  for (const auto& [name, words] : vars) {
    std::string joined;
    for (size_t i = 0; i < words.size(); ++i) joined += (i ? " " : "") + words[i];
    out.variables[name] = joined;
  }
  return out;
}

}  // namespace vramplan::interop

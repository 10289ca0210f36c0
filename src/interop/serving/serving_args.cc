#include "interop/serving/serving_args.h"

#include <cctype>
#include <optional>

namespace vramplan::interop {
namespace {

bool is_number(const std::string& w) {
  size_t i = (!w.empty() && (w[0] == '-' || w[0] == '+')) ? 1 : 0;
  if (i < w.size() && w[i] == '.') ++i;
  return i < w.size() && std::isdigit(static_cast<unsigned char>(w[i])) != 0;
}

// A word that starts a flag: "-x" or "--x", but not a negative number ("-1").
bool is_flag(const std::string& w) { return w.size() > 1 && w[0] == '-' && !is_number(w); }

bool is_bool_word(const std::string& w) {
  std::string lower;
  for (char c : w) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "true" || lower == "false";
}

// "--max_model_len" -> "--max-model-len" (vLLM's FlexibleArgumentParser accepts both).
std::string dashed(std::string name) {
  const size_t start = name.find_first_not_of('-');
  for (size_t i = start == std::string::npos ? name.size() : start; i < name.size(); ++i)
    if (name[i] == '_') name[i] = '-';
  return name;
}

// Reads one flag at words[i] into `arg`, advancing `i` past its values.
std::optional<Error> read_flag(const std::vector<std::string>& words, size_t& i,
                               std::span<const FlagSpec> specs, ServingArg& arg) {
  std::string word = words[i];
  std::string inline_value;
  bool has_inline = false;
  if (word.size() > 2 && word[0] == '-' && word[1] == 'O' &&
      std::isdigit(static_cast<unsigned char>(word[2]))) {  // -O3
    inline_value = word.substr(2);
    has_inline = true;
    word = "-O";
  }
  const size_t eq = word.find('=');
  if (eq != std::string::npos) {
    inline_value = word.substr(eq + 1);
    has_inline = true;
    word = word.substr(0, eq);
  }
  arg.written = word;
  const size_t dot = word.find('.');
  std::string name = dashed(word.substr(0, dot));
  if (dot != std::string::npos) arg.subkey = word.substr(dot + 1);  // --compilation-config.level
  arg.spec = find_flag(specs, name);
  bool negated = false;
  if (arg.spec == nullptr && name.rfind("--no-", 0) == 0) {
    const FlagSpec* positive = find_flag(specs, "--" + name.substr(5));
    if (positive != nullptr &&
        (positive->arity == Arity::kSwitch || positive->arity == Arity::kOptionalBool)) {
      arg.spec = positive;
      negated = true;
    }
  }
  arg.name = arg.spec != nullptr
                 ? std::string(arg.spec->names).substr(0, std::string(arg.spec->names).find(' '))
                 : name;
  const Arity arity = arg.spec != nullptr ? arg.spec->arity : Arity::kValue;
  auto next_is_value = [&] { return i + 1 < words.size() && !is_flag(words[i + 1]); };
  if (has_inline) {
    arg.value = inline_value;
    arg.has_value = true;
  } else if (arity == Arity::kSwitch || arity == Arity::kOptionalBool) {
    if (arity == Arity::kOptionalBool && next_is_value() && is_bool_word(words[i + 1])) {
      arg.value = words[++i];
      arg.has_value = true;
    }
  } else if (arity == Arity::kList) {
    while (next_is_value()) arg.value += (arg.value.empty() ? "" : " ") + words[++i];
    arg.has_value = !arg.value.empty();
  } else if (next_is_value()) {
    arg.value = words[++i];
    arg.has_value = true;
  } else if (arg.spec != nullptr) {
    return Error{arg.written, "", "a value after it", "the flag takes a value"};
  }
  if (!arg.has_value && arg.spec != nullptr &&
      (arity == Arity::kSwitch || arity == Arity::kOptionalBool))
    arg.value = negated ? "false" : "true";
  else if (negated)
    arg.value =
        is_bool_word(arg.value) && (arg.value[0] == 't' || arg.value[0] == 'T') ? "false" : "true";
  ++i;
  return std::nullopt;
}

}  // namespace

const FlagSpec* find_flag(std::span<const FlagSpec> specs, const std::string& name) {
  for (const FlagSpec& spec : specs) {
    const std::string names = spec.names;
    size_t start = 0;
    while (start < names.size()) {
      size_t end = names.find(' ', start);
      if (end == std::string::npos) end = names.size();
      if (names.compare(start, end - start, name) == 0) return &spec;
      start = end + 1;
    }
  }
  return nullptr;
}

Result<SplitArgs> split_serving_args(const std::vector<std::string>& words,
                                     std::span<const FlagSpec> specs) {
  SplitArgs out;
  size_t i = 0;
  while (i < words.size()) {
    if (!is_flag(words[i])) {
      out.positionals.push_back(words[i++]);
      continue;
    }
    ServingArg arg;
    arg.index = out.args.size();
    if (auto e = read_flag(words, i, specs, arg)) return *e;
    out.args.push_back(std::move(arg));
  }
  return out;
}

}  // namespace vramplan::interop

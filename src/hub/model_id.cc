#include "hub/model_id.h"

#include <fmt/format.h>

#include <algorithm>

namespace vramplan::hub {
namespace {

constexpr size_t kMaxSegment = 96;
constexpr size_t kMaxRevision = 255;

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_name_char(char c) { return is_word_char(c) || c == '-' || c == '.'; }

Error bad_id(std::string_view text, std::string reason) {
  return Error{"model", std::string(text), std::string(kModelAccepted), std::move(reason)};
}

// Why `segment` (the org or the name) is not a valid Hub name, or "" when it is.
std::string segment_problem(std::string_view segment, std::string_view what) {
  if (segment.empty()) return fmt::format("the {} is empty", what);
  if (segment.size() > kMaxSegment)
    return fmt::format("the {} has {} characters; the Hub allows at most {}", what, segment.size(),
                       kMaxSegment);
  for (char c : segment) {
    if (!is_name_char(c))
      return fmt::format("the {} contains '{}'; Hub names use letters, digits, '-', '_' and '.'",
                         what, c);
  }
  if (!is_word_char(segment.front()) || !is_word_char(segment.back()))
    return fmt::format("the {} must start and end with a letter, digit or '_'", what);
  return "";
}

std::string revision_problem(std::string_view revision) {
  if (revision.empty()) return "the revision after '@' is empty";
  if (revision.size() > kMaxRevision)
    return fmt::format("the revision has {} characters; at most {}", revision.size(), kMaxRevision);
  for (char c : revision) {
    if (!is_name_char(c) && c != '/')
      return fmt::format(
          "the revision contains '{}'; revisions use letters, digits, '-', '_', '.' and '/'",
          c == ' ' ? std::string("a space") : std::string(1, c));
  }
  if (revision.find("..") != std::string_view::npos ||
      revision.find("//") != std::string_view::npos)
    return "the revision contains \"..\" or \"//\"";
  if (!is_word_char(revision.front()) || !is_word_char(revision.back()))
    return "the revision must start and end with a letter, digit or '_'";
  return "";
}

bool looks_like_url(std::string_view text) {
  return text.find("://") != std::string_view::npos || text.starts_with("http:") ||
         text.starts_with("https:") || text.starts_with("www.") ||
         text.starts_with("huggingface.co/") || text.starts_with("hf.co/");
}

}  // namespace

std::string ModelRef::text() const { return revision_given ? repo_id + "@" + revision : repo_id; }

bool is_commit_hash(std::string_view revision) {
  return revision.size() == 40 && std::all_of(revision.begin(), revision.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string repo_folder_name(std::string_view repo_id) {
  std::string name = "models--";
  for (char c : repo_id) {
    if (c == '/')
      name += "--";
    else
      name += c;
  }
  return name;
}

Result<ModelRef> parse_model_ref(std::string_view text) {
  if (text.empty()) return bad_id(text, "no model given");
  if (looks_like_url(text))
    return bad_id(text,
                  "a URL; give the Hub id (org/name), the endpoint comes from HF_ENDPOINT "
                  "(default https://huggingface.co)");
  if (text.starts_with("/") || text.starts_with("~") || text.starts_with("."))
    return bad_id(text, "a path that does not exist");
  const size_t at = text.find('@');
  const std::string_view repo_id = text.substr(0, at);
  ModelRef ref;
  ref.repo_id = std::string(repo_id);
  ref.revision = std::string(kDefaultRevision);
  if (at != std::string_view::npos) {
    const std::string_view revision = text.substr(at + 1);
    if (std::string problem = revision_problem(revision); !problem.empty())
      return bad_id(text, problem);
    ref.revision = std::string(revision);
    ref.revision_given = true;
  }
  const size_t slash = repo_id.find('/');
  if (slash == std::string_view::npos)
    return bad_id(text,
                  "no preset of that name; a Hub id needs its organisation or user, e.g. "
                  "openai-community/gpt2");
  const std::string_view org = repo_id.substr(0, slash);
  const std::string_view name = repo_id.substr(slash + 1);
  if (name.find('/') != std::string_view::npos)
    return bad_id(text,
                  "more than one '/': a Hub id is org/name (or a config.json path that "
                  "does not exist)");
  for (const auto& [segment, what] : {std::pair{org, "organisation"}, std::pair{name, "name"}}) {
    if (std::string problem = segment_problem(segment, what); !problem.empty())
      return bad_id(text, problem);
  }
  if (repo_id.find("--") != std::string_view::npos || repo_id.find("..") != std::string_view::npos)
    return bad_id(text, "Hub ids cannot contain \"--\" or \"..\"");
  if (repo_id.ends_with(".git")) return bad_id(text, "Hub ids cannot end in \".git\"");
  return ref;
}

}  // namespace vramplan::hub

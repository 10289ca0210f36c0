#include "hub/cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

namespace vramplan::hub {
namespace fs = std::filesystem;
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

// A name no other writer (thread or process) picks at the same time.
std::string temporary_name(const fs::path& final_path) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t seed = std::random_device{}();
  return fmt::format(".{}.tmp-{}-{:x}-{}", final_path.filename().string(), getpid(), seed,
                     counter.fetch_add(1));
}

std::string strip(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

bool is_safe_etag(std::string_view etag) {
  return !etag.empty() && etag.size() <= 128 &&
         std::all_of(etag.begin(), etag.end(), is_name_char) &&
         etag.find("..") == std::string_view::npos && etag.front() != '.';
}

bool is_safe_repo_file(std::string_view filename) {
  if (filename.empty() || filename.size() > 255) return false;
  size_t start = 0;
  while (start <= filename.size()) {
    const size_t end = std::min(filename.find('/', start), filename.size());
    const std::string_view segment = filename.substr(start, end - start);
    if (segment.empty() || segment.front() == '.' ||
        !std::all_of(segment.begin(), segment.end(), is_name_char) ||
        segment.find("..") != std::string_view::npos)
      return false;
    start = end + 1;
  }
  return true;
}

std::string write_file_atomically(const fs::path& path, std::string_view content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message());
  const fs::path temp = path.parent_path() / temporary_name(path);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      return fmt::format("cannot write {}", temp.string());
    }
  }
  fs::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return fmt::format("cannot rename into {}: {}", path.string(), ec.message());
  }
  return "";
}

std::optional<std::string> read_small_file(const fs::path& path, int64_t max_bytes) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;  // follows the snapshot symlink
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > static_cast<uintmax_t>(max_bytes)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

fs::path HubCache::repo_dir(const std::string& repo_id) const {
  return root_ / repo_folder_name(repo_id);
}

std::optional<std::string> HubCache::commit_for(const ModelRef& ref) const {
  if (is_commit_hash(ref.revision)) return ref.revision;
  std::optional<std::string> text =
      read_small_file(repo_dir(ref.repo_id) / "refs" / ref.revision, 1024);
  if (!text) return std::nullopt;
  std::string commit = strip(*text);
  if (!is_commit_hash(commit)) return std::nullopt;  // never a path component we did not check
  return commit;
}

std::optional<fs::path> HubCache::find(const std::string& repo_id, const std::string& commit,
                                       const std::string& filename) const {
  if (!is_commit_hash(commit) || !is_safe_repo_file(filename)) return std::nullopt;
  const fs::path path = repo_dir(repo_id) / "snapshots" / commit / filename;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  return path;
}

bool HubCache::known_missing(const std::string& repo_id, const std::string& commit,
                             const std::string& filename) const {
  if (!is_commit_hash(commit) || !is_safe_repo_file(filename)) return false;
  std::error_code ec;
  return fs::exists(repo_dir(repo_id) / ".no_exist" / commit / filename, ec);
}

void HubCache::write_ref(const ModelRef& ref, const std::string& commit) const {
  if (ref.revision == commit) return;
  if (commit_for(ref) == commit) return;  // unchanged: leave read-only caches alone
  write_file_atomically(repo_dir(ref.repo_id) / "refs" / ref.revision, commit);
}

std::variant<fs::path, std::string> HubCache::store(const ModelRef& ref, const std::string& commit,
                                                    const std::string& etag,
                                                    const std::string& filename,
                                                    std::string_view content) const {
  const fs::path repo = repo_dir(ref.repo_id);
  const fs::path blob = repo / "blobs" / etag;
  const fs::path pointer = repo / "snapshots" / commit / filename;
  std::error_code ec;
  if (!fs::exists(blob, ec)) {
    if (std::string error = write_file_atomically(blob, content); !error.empty()) return error;
  }
  fs::create_directories(pointer.parent_path(), ec);
  if (ec) return fmt::format("cannot create {}: {}", pointer.parent_path().string(), ec.message());
  // A relative link, as huggingface_hub makes, so the cache can be moved as a whole.
  const fs::path target = fs::relative(blob, pointer.parent_path(), ec);
  if (ec) return fmt::format("cannot link {}: {}", pointer.string(), ec.message());
  const fs::path temp = pointer.parent_path() / temporary_name(pointer);
  fs::create_symlink(target, temp, ec);
  if (!ec) fs::rename(temp, pointer, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return fmt::format("cannot link {}: {}", pointer.string(), ec.message());
  }
  write_ref(ref, commit);
  return pointer;
}

void HubCache::record_missing(const ModelRef& ref, const std::string& commit,
                              const std::string& filename) const {
  if (!is_commit_hash(commit) || !is_safe_repo_file(filename)) return;
  write_file_atomically(repo_dir(ref.repo_id) / ".no_exist" / commit / filename, "");
  write_ref(ref, commit);
}

}  // namespace vramplan::hub

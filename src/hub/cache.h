// The Hugging Face cache layout, read and written as huggingface_hub does (file_download.py), so
// files downloaded by transformers are found and files vramplan fetches are found by transformers:
//
//   <cache>/models--org--name/blobs/<etag>                      the file's bytes
//                             snapshots/<commit>/<file>         -> ../../blobs/<etag>
//                             refs/<revision>                   the commit it points to
//                             .no_exist/<commit>/<file>         the file does not exist there
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "hub/model_id.h"

namespace vramplan::hub {

class HubCache {
 public:
  explicit HubCache(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path repo_dir(const std::string& repo_id) const;

  // The commit a revision names: the revision itself when it is a commit hash, else the one
  // recorded in refs/<revision>; nullopt when unknown.
  std::optional<std::string> commit_for(const ModelRef& ref) const;

  // snapshots/<commit>/<filename> when it exists.
  std::optional<std::filesystem::path> find(const std::string& repo_id, const std::string& commit,
                                            const std::string& filename) const;

  // .no_exist/<commit>/<filename> exists: the Hub said the file is not in that commit.
  bool known_missing(const std::string& repo_id, const std::string& commit,
                     const std::string& filename) const;

  // Stores `content` as blobs/<etag>, links snapshots/<commit>/<filename> to it and records
  // refs/<revision> -> commit (unless the revision is the commit). Every file is written to a
  // temporary name and renamed into place, so readers never see half a file. Returns the
  // snapshot path, or an error message (the cache is a convenience: callers go on without it).
  // REQUIRES: commit is a commit hash; etag and filename are safe names (see is_safe_etag,
  // is_safe_repo_file).
  std::variant<std::filesystem::path, std::string> store(const ModelRef& ref,
                                                         const std::string& commit,
                                                         const std::string& etag,
                                                         const std::string& filename,
                                                         std::string_view content) const;

  // Records .no_exist/<commit>/<filename> and refs/<revision>; failures are ignored.
  void record_missing(const ModelRef& ref, const std::string& commit,
                      const std::string& filename) const;

 private:
  void write_ref(const ModelRef& ref, const std::string& commit) const;
  std::filesystem::path root_;
};

// An ETag usable as a file name: letters, digits, '-', '_', '.', no "..", at most 128 characters.
bool is_safe_etag(std::string_view etag);

// A repository file name usable under snapshots/<commit>/: relative, segments of letters,
// digits, '-', '_', '.', no "..", at most 255 characters.
bool is_safe_repo_file(std::string_view filename);

// Writes `content` to `path` through a temporary file in the same directory and a rename.
// Returns an error message, or "" on success.
std::string write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Reads a whole file of at most max_bytes; nullopt when it cannot be read or is larger.
std::optional<std::string> read_small_file(const std::filesystem::path& path, int64_t max_bytes);

}  // namespace vramplan::hub

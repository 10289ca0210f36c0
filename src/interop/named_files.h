// Files a launch text names but does not hold — the DeepSpeed JSON beside a launch script, the
// accelerate config, a torchtitan job TOML, a torchtune recipe. The API takes their texts in
// "from_files" ({name: text}); the CLI reads them beside the --from file. The importers never open
// a file themselves: they look names up here, and the names asked for are recorded so that the
// CLI can find which files to read (files_named, vramplan/interop/import.h).
#pragma once

#include <set>
#include <string>

#include "vramplan/interop/import.h"

namespace vramplan::interop {

struct NamedFileLookup {
  const NamedFiles* given = nullptr;
  std::set<std::string>* asked = nullptr;

  // The text given for `name` (by the name as the text writes it, else by its last path
  // component); nullptr, and `name` recorded as asked, when none was given.
  const std::string* find(const std::string& name) const;
};

}  // namespace vramplan::interop

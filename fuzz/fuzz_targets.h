// The fuzz targets, linked into one libFuzzer program (fuzz_vramplan) that runs the target named
// by VRAMPLAN_FUZZ_TARGET (fuzz_main.cc lists them): one link of the sanitized core instead of
// twenty. Each returns 0, or -1 for an input outside the target's scope (kept out of the corpus).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vramplan::fuzz {

int fuzz_hf_config(const uint8_t* data, size_t size);
int fuzz_hub(const uint8_t* data, size_t size);
int fuzz_roofline(const uint8_t* data, size_t size);
int fuzz_api(std::string_view path, const uint8_t* data, size_t size);
int fuzz_import(std::string_view format, const uint8_t* data, size_t size);

}  // namespace vramplan::fuzz

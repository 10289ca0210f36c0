# Precompiled headers. Nearly every file reaches nlohmann/json and fmt through our headers, and
# parsing them was half of a file's compile time (src/training/estimate.cc at -O2 with GCC 12:
# 7.7 s, 3.8 s with the header precompiled); CI compiles the project twice on 2 cores. Only
# third-party and standard headers go in: a file of ours that forgets an include of ours still
# fails to compile. VRAMPLAN_PCH=OFF builds without (ccache then caches every file).
option(VRAMPLAN_PCH "Precompile the heavy third-party headers each target includes" ON)

# GCC 12 at -O2 inlines std::string's copies differently once the header is precompiled, and its
# flow-based bounds warnings then fire on library code that is correct (GCC bugs 105329, 105545,
# 106199: "forming offset [32, 59] is out of the bounds [0, 32]" inside basic_string's operator+).
# Those warnings are off for GCC with a precompiled header; real out-of-bounds accesses are
# still caught at run time by the sanitizer build's tests and by clang's warnings (fuzz build).
if(VRAMPLAN_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options(-Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread -Wno-restrict)
endif()

# vramplan_precompile(TARGET [HEADER...]): json, fmt and the common standard headers, plus the
# target's own heavy ones (gtest for the test programs).
function(vramplan_precompile target)
  if(NOT VRAMPLAN_PCH)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE <nlohmann/json.hpp> <fmt/format.h> <algorithm>
                            <functional> <map> <memory> <optional> <string> <vector> ${ARGN})
endfunction()

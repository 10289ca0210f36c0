# libFuzzer targets (VRAMPLAN_FUZZ=ON with clang; docs/reliability.md), all in one program,
# fuzz_vramplan, that runs the target VRAMPLAN_FUZZ_TARGET names (fuzz/fuzz_main.cc). It links
# the libraries this build already compiled with coverage hooks (fuzzer-no-link), so the fuzz
# targets cost the sanitizer build a few small compiles and one link, not another build of the
# core. scripts/fuzz.sh builds and runs them with seeds and dictionaries that
# fuzz/make_corpus.py draws from the presets, fixtures and tests.
file(GLOB VRAMPLAN_FUZZ_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/fuzz/*.cc)
add_executable(fuzz_vramplan ${VRAMPLAN_FUZZ_SOURCES})
target_include_directories(fuzz_vramplan PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/fuzz)
target_link_libraries(fuzz_vramplan PRIVATE vramplan_server)
target_link_options(fuzz_vramplan PRIVATE -fsanitize=fuzzer)
vramplan_precompile(fuzz_vramplan)

// parsim tests/fuzz — what every libFuzzer harness shares.
//
// The contract (docs/cli.md): bad input is an InputError — exit status 2 and one line — and never a crash. A harness
// therefore feeds its bytes to a parser, accepts InputError (checking that its message is one non-empty line), and
// aborts on anything else: another exception (the CLI would print "internal error" and exit 3), and, under the
// sanitizers the fuzz build always uses, any memory error or undefined behaviour. Harnesses also assert invariants of
// what a parser accepts (finite, non-negative figures; output that serialises), so wrong answers count as findings too.
//
// The same harness sources build two ways: with -DPARSIM_FUZZ=ON (clang) as libFuzzer targets, and in every normal
// build as replay executables (replay_main.cpp) that ctest runs over the seed corpus and the regression inputs.
#pragma once
#include "sim/core/error.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

namespace parsim::fuzz {

[[noreturn]] inline void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "FUZZ FINDING: %s: %s\n", what, detail.c_str());
  std::fflush(stderr);
  std::abort();
}

#define PARSIM_FUZZ_CHECK(cond, detail)                                        \
  do {                                                                         \
    if (!(cond)) ::parsim::fuzz::fail("invariant " #cond " does not hold", detail); \
  } while (0)

// Runs `f`; an InputError is the expected outcome for bad input, everything else is a finding.
// PARSIM_FUZZ_VERBOSE=1 prints each outcome (accepted, or the InputError) to stderr, to see what a corpus exercises.
template <class F>
void guarded(F&& f) {
  static const bool verbose = std::getenv("PARSIM_FUZZ_VERBOSE") != nullptr;
  try {
    f();
    if (verbose) std::fprintf(stderr, "  accepted\n");
  } catch (const InputError& e) {
    const std::string m = e.what();
    if (m.empty()) fail("InputError with an empty message", "");
    if (verbose) std::fprintf(stderr, "  InputError: %s\n", m.c_str());
  } catch (const std::bad_alloc&) {
    fail("std::bad_alloc", "an input made the parser allocate without bound");
  } catch (const std::exception& e) {
    fail("exception other than InputError (the CLI would exit 3, 'internal error')", e.what());
  } catch (...) {
    fail("unknown exception", "");
  }
}

inline std::string bytes(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A per-process scratch file for parsers that take a path (the file reading is part of what is fuzzed).
// $TMPDIR (e.g. /dev/shm) keeps it in memory.
inline std::string scratch_file(const std::string& name, const std::string& content) {
  static const std::string dir = [] {
    const char* t = std::getenv("TMPDIR");
    return std::string(t && *t ? t : "/tmp");
  }();
  const std::string path = dir + "/parsim_fuzz_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(content.data(), static_cast<std::streamsize>(content.size()));
  return path;
}

// What parsim prints as JSON must read back as JSON (valid UTF-8, no raw NaN).
inline void check_json(const std::string& text, const char* what) {
  try {
    const auto j = nlohmann::json::parse(text);
    if (j.is_discarded()) fail(what, "printed JSON does not parse");
  } catch (const std::exception& e) {
    fail(what, std::string("printed JSON does not parse: ") + e.what());
  }
}

inline bool finite_nonneg(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace parsim::fuzz

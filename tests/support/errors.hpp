#pragma once
// Helpers shared by the tests that check parsim's one-line input errors.
#include "sim/core/error.hpp"

#include <string>

namespace parsim::test {

// The InputError message f() throws, or "" when it does not throw (any other exception propagates and fails the test).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace parsim::test

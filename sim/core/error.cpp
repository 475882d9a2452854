#include "sim/core/error.hpp"

namespace parsim {

void require(bool condition, const std::string& message) {
  if (!condition) throw InputError(message);
}

void fail(const std::string& message) { throw InputError(message); }

}  // namespace parsim

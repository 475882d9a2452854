// parsim — errors that reach the user.
//
// Every problem with the user's input (unknown names, malformed files, plans that cannot map onto the model or
// cluster, non-positive numbers) is an InputError. Its message is one line, names the offending value and says what
// would be valid. The CLI prints it as `parsim: error: <message>` on stderr and exits with status 2; library code
// never prints and never exits.
#pragma once
#include <stdexcept>
#include <string>

namespace parsim {

class InputError : public std::runtime_error {
public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// Throws InputError(message) when `condition` is false.
void require(bool condition, const std::string& message);

// Throws InputError(message). For checks on hot paths: `if (!ok) fail("… " + std::to_string(x));` builds the message
// only when it is needed (require() builds it on every call).
[[noreturn]] void fail(const std::string& message);

}  // namespace parsim

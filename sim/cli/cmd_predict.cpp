#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

namespace parsim::cli {
// placeholder until the predict command lands
void add_predict(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand("predict", "predict (not yet available)");
  sub->allow_extras();
  sub->callback([&action] { action = [] () -> int { throw InputError("'predict' is not available in this build yet"); }; });
}
}  // namespace parsim::cli

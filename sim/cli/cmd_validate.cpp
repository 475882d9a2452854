// `parsim validate --profile FILE... <predict flags>` — the simulated step beside the measured one
// (options: api::validate_options()).
#include "sim/api/api.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/options.hpp"
#include "sim/core/json_strict.hpp"

#include <iostream>

namespace parsim::cli {

void add_validate(CLI::App& root, Action& action) {
  auto* sub = root.add_subcommand(
      "validate", "Simulate a plan and put it beside a measured profile (step, compute, communication, idle, memory)");
  auto given = register_options(sub, api::validate_options());
  sub->callback([&action, given] {
    action = [given]() -> int {
      const api::ValidateRequest req = api::validate_request(given->values());
      const api::ValidationResult v = api::run_validate(req);
      if (req.format == "json") std::cout << validation_json(v.validation, dump_output(v.prediction, -1));
      else std::cout << validation_table(v.validation);
      return 0;
    };
  });
}

}  // namespace parsim::cli

// `parsim [predict]` — simulate one training step of one plan (options: api::predict_options()).
#include "sim/api/api.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/options.hpp"

#include <iostream>

namespace parsim::cli {

void add_predict(CLI::App& root, Action& action) {
  CLI::App* sub = root.add_subcommand("predict", "simulate one training step of one plan (the default command)");
  auto given = register_options(sub, api::predict_options());
  sub->callback([&action, given] {
    action = [given] {
      const api::PredictRequest req = api::predict_request(given->values());
      const api::Prediction p = api::run_predict(req);
      if (req.format == "json") std::cout << report_to_json(p.scenario, p.report, p.train).dump(2) << "\n";
      else std::cout << report_to_table(p.scenario, p.report, p.train);
      return 0;
    };
  });
}

}  // namespace parsim::cli

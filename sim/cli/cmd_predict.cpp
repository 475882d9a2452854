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
      if (req.format == "json") std::cout << api::prediction_json(req, p).dump(2) << "\n";
      else std::cout << report_to_table(p.scenario, p.report, p.train) << advice_table(advise(p.scenario, p.report));
      return 0;
    };
  });
}

}  // namespace parsim::cli

namespace parsim::cli {

void add_compare(CLI::App& root, Action& action) {
  CLI::App* sub = root.add_subcommand(
      "compare", "simulate several plans of the same model and hardware and print them side by side");
  auto given = register_options(sub, api::compare_options());
  sub->callback([&action, given] {
    action = [given] {
      const api::CompareRequest req = api::compare_request(given->values());
      const std::vector<Compared> plans = api::run_compare(req);
      if (req.format == "json") std::cout << compare_json(plans).dump(2) << "\n";
      else std::cout << compare_table(plans);
      return 0;
    };
  });
}

}  // namespace parsim::cli

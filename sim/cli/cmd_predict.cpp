// `parsim [predict]` — simulate one training step of one plan.
#include "sim/cli/command.hpp"
#include "sim/cli/options.hpp"
#include "sim/step/render.hpp"

#include <iostream>
#include <memory>

namespace parsim::cli {

namespace {
struct PredictState {
  ScenarioFlags flags;
  TrainFlags train;
  std::string format = "table", trace, trace_detail = "layers";
};

int run_predict(const PredictState& st) {
  const std::string format = check_choice("--format", st.format, {"table", "json"});
  const std::string detail = check_choice("--trace-detail", st.trace_detail, {"layers", "passes"});
  const TrainValues tv = to_train_values(st.train);
  const Scenario sc = make_scenario(to_args(st.flags));
  Evaluator ev;
  EvalOptions opt;
  opt.keep_timeline = !st.trace.empty();
  const StepReport rep = ev.run(sc, opt);
  std::optional<TrainEstimate> train;
  if (tv.enabled) train = train_estimate(sc, rep, tv.tokens, tv.price, tv.goodput);
  if (!st.trace.empty()) write_trace(st.trace, sc, ev, rep, detail == "layers");
  if (format == "json") std::cout << report_to_json(sc, rep, train).dump(2) << "\n";
  else std::cout << report_to_table(sc, rep, train);
  return 0;
}
}  // namespace

void add_predict(CLI::App& root, Action& action) {
  auto st = std::make_shared<PredictState>();
  CLI::App* sub = root.add_subcommand("predict", "simulate one training step of one plan (the default command)");
  add_scenario_flags(sub, st->flags, true);
  add_train_flags(sub, st->train);
  sub->add_option("--format", st->format, "table | json (default table)");
  sub->add_option("--trace", st->trace, "also write the simulated timeline as Chrome/Perfetto trace JSON");
  sub->add_option("--trace-detail", st->trace_detail, "layers | passes: per-layer detail in the trace (default layers)");
  sub->callback([&action, st] { action = [st] { return run_predict(*st); }; });
}

}  // namespace parsim::cli

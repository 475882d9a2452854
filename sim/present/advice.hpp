// parsim sim/present — what a simulated step says about its plan, in words (`parsim predict` prints it; `--advice`
// adds it to the JSON), and plans side by side (`parsim compare`).
//
// Advice is read off the simulated numbers, never guessed: a note is written when a loss passes a threshold (a
// communication kind exposed for ≥ 10 % of the step, the pipeline bubble ≥ 10 %, pipeline sends ≥ 5 %), naming the
// share, whether the group crosses nodes (group_shape), and the knob that usually helps; for a plan that does not
// fit, the deficit and how many GiB each remedy frees, from estimate_memory() of the modified scenario (the
// simulator's own memory model), and the largest micro-batch that fits.
#pragma once
#include "plans/scenario.hpp"
#include "sim/step/report.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace parsim {

struct MemoryRemedy {
  std::string change;    // "selective recompute", "zero1", "mbs 1", …
  double freed_gib = 0;  // peak_gib(now) − peak_gib(with the change), estimate_memory
  bool enough = false;   // the change alone makes the plan fit
};

struct Advice {
  std::vector<std::string> notes;     // one line each, most costly first
  std::vector<MemoryRemedy> remedies; // for a plan that does not fit (largest saving first)
  std::int64_t max_mbs = 0;           // largest micro-batch that fits (gbs divisible by dp × mbs); 0: none fits
};

Advice advise(const Scenario& sc, const StepReport& r);
nlohmann::json advice_json(const Advice& a);
std::string advice_table(const Advice& a);  // "  advice\n    • …" (empty when there is nothing to say)

// "dp all-reduce across nodes", "tp all-gather / reduce-scatter", "pp send / recv": the collective an axis runs in
// this scenario and whether its group spans nodes.
std::string axis_comm_text(const Scenario& sc, Axis a);

// ---- plans side by side ----
struct Compared {
  Scenario scenario;
  StepReport report;
};
// Index of the fastest plan that fits (the fastest of all when none fits).
std::size_t best_of(const std::vector<Compared>& plans);
// One line per plan: where its time goes compared with the best one, as differences of the step's parts — compute
// and everything else (step − bubble − exposed communication), the bubble (bubble_fraction × step), and each kind of
// exposed communication — largest first, e.g. "+0.8 s exposed dp all-reduce across nodes, +0.3 s pipeline bubble".
std::string versus_best(const std::vector<Compared>& plans, std::size_t i, std::size_t best);
std::string compare_table(const std::vector<Compared>& plans);
nlohmann::json compare_json(const std::vector<Compared>& plans);

}  // namespace parsim

#include "sim/measure/validate.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"
#include "sim/core/types.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace parsim {

Validation measure_for_validation(const ProfileReport& report) {
  Validation v;
  const RankProfile* pick = nullptr;
  double worst = -1;
  for (const auto& r : report.ranks) {
    if (!r.measurable) continue;
    const double n = r.steps_measured > 0 ? r.steps_measured : 1;
    const double load = (r.compute_s + r.exposed_comm_s) / n;
    if (load > worst) {
      worst = load;
      pick = &r;
    }
  }
  if (!pick) throw InputError("validate: the profile has no GPU events to compare with");
  const RankProfile& r = *pick;
  v.measured_rank = r.rank;
  v.steps = r.steps_measured;
  const double n = r.steps_measured > 0 ? r.steps_measured : 1;
  auto& m = v.measured;
  m.step_time_s = r.step_mean_s > 0 ? r.step_mean_s : r.total_s;
  m.compute_s = r.compute_s / n;
  m.comm_s = r.comm_s / n;
  m.exposed_comm_s = r.exposed_comm_s / n;
  m.idle_s = std::max(0.0, m.step_time_s - m.compute_s - m.exposed_comm_s - r.exposed_memcpy_s / n);
  if (r.has_memory) m.memory_peak_gib = r.peak_allocated_bytes / kGiB;
  if (r.steps_measured == 0)
    v.notes.push_back("the trace has no ProfilerStep annotations: its whole GPU window is taken as one step");
  if (report.ranks.size() > 1)
    v.notes.push_back("measured figures are rank " + std::to_string(r.rank) +
                      "'s, the rank with the most compute + exposed communication per step");
  for (const auto& note : r.notes) v.notes.push_back("rank " + std::to_string(r.rank) + ": " + note);
  return v;
}

namespace {
using ojson = nlohmann::ordered_json;

struct Field {
  const char* key;
  double StepFigures::*member;
};
const Field kFields[] = {{"step_time_s", &StepFigures::step_time_s},
                         {"compute_s", &StepFigures::compute_s},
                         {"comm_s", &StepFigures::comm_s},
                         {"exposed_comm_s", &StepFigures::exposed_comm_s},
                         {"idle_s", &StepFigures::idle_s}};

bool has_memory(const Validation& v) { return v.measured.memory_peak_gib >= 0 && v.predicted.memory_peak_gib >= 0; }

ojson rel(double p, double m) { return m != 0 && std::isfinite(p) && std::isfinite(m) ? ojson((p - m) / m) : ojson(nullptr); }
}  // namespace

std::string validation_json(const Validation& v, const std::string& predicted_extra) {
  ojson pred, meas, err;
  for (const auto& f : kFields) {
    pred[f.key] = v.predicted.*f.member;
    meas[f.key] = v.measured.*f.member;
    err[f.key] = rel(v.predicted.*f.member, v.measured.*f.member);
  }
  if (has_memory(v)) {
    pred["memory_peak_gib"] = v.predicted.memory_peak_gib;
    meas["memory_peak_gib"] = v.measured.memory_peak_gib;
    err["memory_peak_gib"] = rel(v.predicted.memory_peak_gib, v.measured.memory_peak_gib);
  }
  ojson root;
  root["predicted"] = pred;
  root["measured"] = meas;
  root["relative_error"] = err;
  root["measured_rank"] = v.measured_rank;
  root["measured_steps"] = v.steps;
  if (!predicted_extra.empty()) root["prediction"] = ojson::parse(predicted_extra);
  root["notes"] = v.notes;
  return dump_output(root) + "\n";
}

std::string validation_table(const Validation& v) {
  std::ostringstream o;
  o << std::left << std::setw(18) << "per step" << std::right << std::setw(14) << "predicted" << std::setw(14)
    << "measured" << std::setw(12) << "error" << "\n";
  auto row = [&](const std::string& name, double p, double m, const std::string& unit, double scale) {
    o << std::left << std::setw(18) << name << std::right << std::setw(14) << (fmt_fixed(p * scale, 3) + unit)
      << std::setw(14) << (fmt_fixed(m * scale, 3) + unit) << std::setw(11)
      << (m != 0 ? fmt_fixed(100 * (p - m) / m, 1) + "%" : std::string("-")) << "\n";
  };
  row("step time", v.predicted.step_time_s, v.measured.step_time_s, " ms", 1e3);
  row("compute", v.predicted.compute_s, v.measured.compute_s, " ms", 1e3);
  row("communication", v.predicted.comm_s, v.measured.comm_s, " ms", 1e3);
  row("exposed comm", v.predicted.exposed_comm_s, v.measured.exposed_comm_s, " ms", 1e3);
  row("idle", v.predicted.idle_s, v.measured.idle_s, " ms", 1e3);
  if (has_memory(v)) row("memory peak", v.predicted.memory_peak_gib, v.measured.memory_peak_gib, " GiB", 1);
  o << "measured: rank " << v.measured_rank << ", " << (v.steps > 0 ? std::to_string(v.steps) + " ProfilerSteps" : std::string("whole window"))
    << "; error = (predicted - measured) / measured\n";
  for (const auto& n : v.notes) o << "note: " << n << "\n";
  return o.str();
}

}  // namespace parsim

// parsim sim/measure — a prediction beside a measurement (`parsim validate`).
//
// The measured side comes from `parsim profile` restricted to the ProfilerStep windows (HTA's step set: all steps but
// the last when there are several), divided by the number of steps, for the rank whose compute + exposed
// communication per step is largest (the analogue of the simulator's critical stage):
//   step_time_s   = mean ProfilerStep duration (the GPU window when the trace has no steps)
//   compute_s, comm_s, exposed_comm_s = the rank's figures over the step windows / steps
//   idle_s        = step_time_s − compute_s − exposed_comm_s − exposed memcpy per step (≥ 0), the simulator's
//                   definition (step − compute − exposed communication) with memcpys counted as busy
//   memory_peak_gib = peak `Total Allocated` of the [memory] events (torch.cuda.max_memory_allocated), when present.
// relative_error[k] = (predicted[k] − measured[k]) / measured[k] (docs/cli.md).
#pragma once
#include "sim/measure/profile.hpp"

#include <string>
#include <vector>

namespace parsim {

struct StepFigures {
  double step_time_s = 0, compute_s = 0, comm_s = 0, exposed_comm_s = 0, idle_s = 0;
  double memory_peak_gib = -1;  // -1: not available
};

struct Validation {
  StepFigures predicted, measured;
  int measured_rank = 0;
  int steps = 0;                // ProfilerSteps the measurement averages over (0: no steps, whole window)
  std::vector<std::string> notes;
};

// The measured per-step figures of a profile (see above). Throws InputError when no rank is measurable.
Validation measure_for_validation(const ProfileReport& report);

// `predicted_extra` is a JSON object text (may be empty) merged into the output under "prediction" (plan, model, …).
std::string validation_json(const Validation& v, const std::string& predicted_extra = "");
std::string validation_table(const Validation& v);

}  // namespace parsim

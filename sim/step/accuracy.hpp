// parsim sim/step/accuracy — the expected error of a prediction: which regime a scenario falls in, and what
// leave-one-source-out cross-validation (or a held-out file) measured of parsim's error there (hardware/accuracy.json).
// The regime of a validation row is the one a prediction of it gets, so the test that recomputes hardware/accuracy.json
// (tests/validation/test_cross_validation.cpp) and `parsim predict` use the same functions.
#pragma once
#include "plans/scenario.hpp"
#include "sim/step/report.hpp"

#include <optional>

namespace parsim {

// A scenario is host-bound when its predicted step moves by more than kHostBoundShift between its program's host
// factor (hardware/calibration.json host_megatron / host_legacy) at kHostProbeLo and at kHostProbeHi: its host issue
// is on the critical path. GPU-bound steps (the host runs ahead) move by < 3 % there, the Megatron-LM CI steps by
// 1.5–3×. The PyTorch-native program has no fitted host factor and is not probed.
constexpr double kHostBoundShift = 0.10;
constexpr double kHostProbeLo = 1.0, kHostProbeHi = 3.0;

enum class AccuracyRegime { HostBound, Moe, Megatron, PyTorch, NewGeneration };
const char* regime_key(AccuracyRegime r);  // hardware/accuracy.json's key

// Host-bound first (its error is the host model's), then a mixture of experts, then the program: a Megatron one
// (Megatron-Core, or legacy Megatron-LM / Megatron-DeepSpeed: one regime, the legacy program alone has too few GPU-bound
// validation sources to measure) or PyTorch-native.
AccuracyRegime accuracy_regime(const Scenario& sc, bool host_bound);
// Two simulations of `sc` (a resolved scenario) at the probe factors; false for the PyTorch-native program.
bool host_bound(const Scenario& sc);
// The figures of hardware/accuracy.json for the regime.
ExpectedError expected_error(AccuracyRegime r);
// The figures of a GPU measured only on held-out runs (hardware/accuracy.json "gpus", matched by the GPU's name), or
// nullopt.
std::optional<ExpectedError> held_out_gpu_error(const Hardware& hw);
// hardware/accuracy.json's key of a GPU generation ("ampere", "hopper", "blackwell", "cdna3", "cdna4").
const char* generation_key(GpuArch a);
// Whether measured GPU-bound runs of the generation are in the cross-validation (accuracy.json
// "validated_generations"; test_cross_validation checks the list against the data).
bool generation_validated(GpuArch a);
// host_bound + accuracy_regime + the figures. A GPU-bound step on a GPU whose held-out runs were measured gets that
// GPU's figure (held_out_gpu_error); one on a generation no measured run was taken on the NewGeneration figure — each
// validated generation predicted with every constant refitted without its rows; either way its program's figure where
// that is larger.
ExpectedError expected_error(const Scenario& sc);

}  // namespace parsim

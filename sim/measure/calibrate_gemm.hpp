// parsim sim/measure — fit the GEMM model of a GPU to a measured matrix-multiply sweep (`parsim calibrate` on a GEMM
// table).
//
// Input: a table of measured GEMMs (issue 9 item 3: "a GPU is its datasheet plus measured kernel curves"), in one of
// two formats, told apart by content:
//   - XLA's GEMM performance table (a GemmPerfTable textproto, openxla/xla
//     xla/service/gpu/model/default_matmul_perf_table.txtpb, or one a user made with xla/tools/matmul_perf_table_gen):
//     `entries { key: "<device>" value { entries { b: m: n: k: flops { key: "<dtype>" value: <FLOP/s> } … } } }`;
//     the entries of the precision fitted are read (key "bf16xbf16->bf16", or "f8e4m3fnxf8e4m3fn->bf16" for fp8);
//   - CSV with a header naming the columns m, n, k and one throughput column in TFLOP/s (`tflops` or a name ending in
//     `_tflops`; `tflop/s` also), optional `b` (or `batch`: that many independent GEMMs in one launch) and `gpu` (or
//     `device`) — e.g. tests/data/hardware/xla_matmul_perf_table.csv, or a GEMM benchmark's own output. Lines
//     starting with '#' are comments.
//
// Model fitted: parsim's GEMM model at kernel level (hardware/compute_cost.cpp with the in-training sustained fraction
// switched off, as a microbenchmark runs): time = max(2·b·m·n·k / (peak · ceiling · tiling), bytes / HBM) + overhead,
// tiling = the best CTA tile and split-K's tile_rel · pad · wave · k/(k + k_half). Its two free GPU constants —
// `gpu.compute.gemm_ceiling` (bf16) and `gpu.compute.gemm_k_half` — are chosen to minimise the mean |ln(model /
// measured)| over the shapes of at least `min_gflop` GFLOP per call (below that a kernel of a few µs is its launch
// ramp, which the model prices as kernel_overhead_us): k_half over a geometric grid 1 … 4096 (32 steps per factor 2)
// and, for each, the ceiling by golden-section search on (0, 1]; deterministic; at most 20,000 shapes are fitted. The GPU's peak, SM count and HBM
// bandwidth come from the base hardware (--gpu); nothing else changes. fp8 (`--precision fp8`: an fp8 sweep, a CSV
// whose TFLOP/s are fp8 GEMMs') fits `gpu.compute.gemm_ceiling_fp8` alone, at the base hardware's k_half — one
// k-loop constant serves both precisions, and a bf16 sweep sets it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

struct Hardware;

struct GemmPoint {
  std::string device;          // the table's device key (XLA) or `gpu` column; empty when the table has none
  std::int64_t b = 1, m = 0, n = 0, k = 0;
  double measured_tflops = 0;  // 2·b·m·n·k / kernel time, in TFLOP/s
  int line = 0;                // 1-based line in the file
};

struct GemmTable {
  std::string format;                // "xla" (GemmPerfTable textproto) or "csv"
  std::vector<GemmPoint> points;
  std::vector<std::string> devices;  // distinct device keys, in file order
};

// True when the text is a GEMM table (either format) rather than nccl-tests output.
bool looks_like_gemm_table(const std::string& text);
// Parses either format; `fp8`: the XLA table's fp8 entries instead of its bf16 ones (a CSV's TFLOP/s column is taken
// as the precision fitted). Throws InputError (one line, naming the file and line) on malformed input or no entry.
GemmTable parse_gemm_table(const std::string& text, const std::string& what, bool fp8 = false);

struct GemmFitOptions {
  std::string device;     // which device of a multi-device table (empty: the only one)
  bool fp8 = false;       // fit gemm_ceiling_fp8 (k_half kept) instead of gemm_ceiling and gemm_k_half
  double min_gflop = 30;  // shapes below this many GFLOP per call are reported, not fitted
};

struct GemmResidual {
  GemmPoint point;
  double before_tflops = 0, fitted_tflops = 0;  // the model with the base hardware's constants / the fitted ones
  bool used = false;                            // at or above min_gflop
};

struct GemmFitSummary {
  double ceiling = 0, k_half = 0;
  double mean_abs_ln = 0;  // mean |ln(model / measured)| over the fitted shapes
  double bias_ln = 0;      // mean ln(model / measured): > 0 the model is faster than measured
  double min_ln = 0, max_ln = 0;
};

struct GemmCalibration {
  std::string file, format, device;
  std::string gpu;         // the base hardware (preset name or file)
  std::string gpu_name;    // its GPU's name
  bool fp8 = false;        // the fit is of gemm_ceiling_fp8 (k_half held at the base's)
  double min_gflop = 30;
  int points_total = 0, points_used = 0;
  GemmFitSummary before, fitted;
  std::vector<GemmResidual> points;  // every shape of the device, in file order
  std::vector<std::string> notes;
};

// The device a fit reads: `requested`, which the table must hold, or the table's only device. Throws InputError
// listing the table's devices otherwise.
std::string gemm_table_device(const GemmTable& table, const std::string& requested);
// The preset that an XLA device key names (sm_80 a100-80gb, sm_90 h100, sm_100_B200 b200, gfx942 mi300x, gfx950
// mi355x), or "" when none does.
std::string preset_for_gemm_device(const std::string& key);
// Fits gemm_ceiling and gemm_k_half of `base` to the table's shapes of one device.
GemmCalibration calibrate_gemm(const GemmTable& table, const Hardware& base, const std::string& base_name,
                               const GemmFitOptions& opt);
// A hardware file (for --gpu): `base` with the fitted ceiling and k_half, each with its provenance in "sources".
std::string gemm_calibration_hardware_json(const GemmCalibration& c, const Hardware& base);
std::string gemm_calibration_json(const GemmCalibration& c);
std::string gemm_calibration_table(const GemmCalibration& c);

}  // namespace parsim

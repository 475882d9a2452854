// parsim sim/measure — fit the network's latency and bandwidth to a collective benchmark (`parsim calibrate`).
//
// Input: nccl-tests / rccl-tests text as users paste it (all_reduce_perf and friends): `srun`-style "0: " prefixes,
// comment headers, device lists ("#  Rank  0 Group  0 Pid … on host device  0 [0x..] NVIDIA H100 80GB HBM3"), one or
// several tables with out-of-place and in-place columns, the "Avg bus bandwidth" footer; also a markdown table of
// payload / busbw / algbw (torch.distributed sweeps such as stas00/ml-engineering's all_reduce_bench.py).
//
// Model. nccl-tests defines algbw = S/t and busbw = algbw · f with f = 2(n−1)/n for all-reduce, (n−1)/n for
// all-gather, reduce-scatter and all-to-all, 1 otherwise (nccl-tests doc/PERFORMANCE.md). The latency–bandwidth model
// is then t(S) = α + S·f/busbw. One (α, busbw) pair cannot hold across a whole table: NCCL switches protocol with the
// size (LL for small messages, LL128, then Simple), each with its own latency and bandwidth, and picks the fastest
// (NCCL src/graph/tuning.cc: time = lat[algo][proto] + S/bw[algo][proto]). parsim therefore fits up to three
// protocol regimes k, each an α–β line, and predicts
//        t(S) = min_k ( α_k + S·f / busbw_k ).
// Each line is a weighted least-squares fit on relative error (Eigen), minimising Σ ((α + S·f/busbw − t)/t)² over
// its contiguous range of sizes; the split points and the number of regimes (1–3) are chosen by BIC on the relative
// error of the whole model. The reported α (alpha_us) is the first regime's — the latency floor of small messages —
// and the reported bus bandwidth (busbw_gbytes_per_s) is the last regime's — what large messages achieve. The plain
// single-line model with that pair, t = α + S·f/busbw, is reported too, with the sizes where it is more than 15 %
// off: those are NCCL's protocol switches.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

struct NcclTestRow {
  double bytes = 0;
  std::int64_t count = -1;
  std::string type;               // element type column (float, bfloat16, …)
  double oop_time_us = -1, oop_algbw_GBps = -1, oop_busbw_GBps = -1;
  double ip_time_us = -1, ip_algbw_GBps = -1, ip_busbw_GBps = -1;
};

struct NcclTestBlock {
  std::string collective;         // all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv
  bool collective_guessed = false;
  std::vector<NcclTestRow> rows;
  double avg_busbw_GBps = -1;     // "# Avg bus bandwidth : x" footer
  int first_line = 0;             // 1-based line of the table header
};

struct NcclTestFile {
  std::vector<NcclTestBlock> blocks;
  int device_ranks = 0;           // distinct ranks in the device list
  std::vector<std::string> hosts; // distinct hosts in the device list
  std::string gpu_name;           // device name of the first listed rank
  std::string text_gpu_hint;      // a GPU model named anywhere in the text (comment lines), when no device list
};

// Parses the benchmark text. Throws InputError when no result table can be found.
NcclTestFile parse_nccl_tests(const std::string& text, const std::string& what);

struct CalibrateOptions {
  int ranks = 0;                  // 0: from the device list, else from the busbw/algbw ratio
  int nodes = 0;                  // 0: from the device list's hosts, else ⌈ranks / gpus_per_node⌉
  int gpus_per_node = 8;
};

struct Regime {
  double alpha_s = 0, busbw_Bps = 0;
  double from_bytes = 0, to_bytes = 0;  // the sizes it was fitted on
};

struct CalibrationPoint {
  double bytes = 0, measured_s = 0, predicted_s = 0, alpha_beta_s = 0;
  int regime = 0;                 // index of the regime whose line gives the prediction
};

struct Calibration {
  std::string collective;
  int ranks = 0, nodes = 1;
  bool intra_node = true;         // the ranks fit in one node (tier measured: intra-node), else inter-node
  std::string gpu_name;
  double bus_factor = 1;
  double alpha_s = 0, busbw_Bps = 0;        // first regime's α, last regime's bus bandwidth
  double r2 = 0;                            // of the fitted model, on times
  double alpha_beta_r2 = 0;                 // of the single line t = α + S·f/busbw
  std::vector<Regime> regimes;
  std::vector<CalibrationPoint> points;
  std::vector<double> failures_bytes;       // |predicted − measured| / measured > 15 % (fitted model)
  std::vector<double> alpha_beta_fails_bytes;  // same for the single line: protocol switches
  double max_error = 0;                     // largest relative error of the fitted model
  double avg_busbw_GBps = -1;               // footer, when present
  double peak_busbw_GBps = -1;              // largest measured busbw
  std::vector<std::string> notes;
};

// Fits one block. Throws InputError when it has fewer than 2 usable rows or the rank count cannot be told.
Calibration calibrate_block(const NcclTestFile& file, std::size_t block, const CalibrateOptions& opt);
// The block calibrate reports by default: the all-reduce block with most rows (else the first block).
std::size_t primary_block(const NcclTestFile& file);

// Fits t = α + S·x by weighted least squares on relative error (weights 1/t²); returns {α, x}. Exposed for tests.
std::pair<double, double> fit_relative_wls(const std::vector<std::pair<double, double>>& size_time);

std::string calibration_json(const std::vector<Calibration>& fits, std::size_t primary);
std::string calibration_table(const std::vector<Calibration>& fits, std::size_t primary);

// calibrate --out (calibrate_hw.cpp): a hardware file that --gpu accepts, based on `base` (a preset name or file; empty
// = from the benchmark's GPU name), with the fitted latency and bandwidth in the tier the benchmark measured. The
// values are set so that parsim's own collective model (hardware/collective_time) reproduces the fitted time of the
// benchmark's smallest and largest message for the benchmark's group shape. Appends what it did to `notes`.
std::string calibration_hardware_json(const Calibration& fit, const std::string& base, int gpus_per_node_override,
                                      std::vector<std::string>& notes);
// Maps a device name ("NVIDIA H100 80GB HBM3", "A100-SXM4-80GB", "AMD Instinct MI300X") to a preset name, or "".
std::string preset_for_gpu_name(const std::string& device_name);

}  // namespace parsim

// fuzz_nccl: what `parsim calibrate` reads — nccl-tests / rccl-tests text and markdown tables (parse, fit every
// block, render table and JSON: JSON output must serialise, valid UTF-8, no NaN where a number is promised; write the
// --out hardware file when the benchmark names a GPU parsim knows) and GEMM tables (XLA GemmPerfTable textproto or
// CSV: parse; fit small ones on the H100 preset, render, write the hardware file).
#include "fuzz_common.hpp"
#include "hardware/hardware.hpp"
#include "sim/measure/calibrate.hpp"
#include "sim/measure/calibrate_gemm.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parsim;
  const std::string text = fuzz::bytes(data, size);
  if (looks_like_gemm_table(text)) {
    fuzz::guarded([&] {
      const GemmTable t = parse_gemm_table(text, "fuzz.csv");
      PARSIM_FUZZ_CHECK(!t.points.empty() && !t.devices.empty(), "parse_gemm_table returned no point without an error");
      for (const GemmPoint& p : t.points)
        PARSIM_FUZZ_CHECK(p.b >= 1 && p.m >= 1 && p.n >= 1 && p.k >= 1 && std::isfinite(p.measured_tflops) &&
                              p.measured_tflops > 0,
                          "a GEMM point out of range");
      if (t.points.size() > 16) return;  // the fit's grid search costs ~20k model calls per point: keep inputs fast
      static const Hardware h100 = resolve_hardware("h100");
      GemmFitOptions o;
      o.device = t.devices.front();
      o.min_gflop = 0;
      GemmCalibration c = calibrate_gemm(t, h100, "h100", o);
      PARSIM_FUZZ_CHECK(c.fitted.ceiling > 0 && c.fitted.ceiling <= 1 && c.fitted.k_half >= 1, "fitted constants");
      fuzz::check_json(gemm_calibration_json(c), "gemm_calibration_json");
      (void)gemm_calibration_table(c);
      (void)gemm_calibration_hardware_json(c, h100);
    });
    return 0;
  }
  fuzz::guarded([&] {
    const NcclTestFile f = parse_nccl_tests(text, "fuzz.txt");
    PARSIM_FUZZ_CHECK(!f.blocks.empty(), "parse_nccl_tests returned no block without an error");
    CalibrateOptions opt;
    std::vector<Calibration> fits;
    for (std::size_t i = 0; i < f.blocks.size(); ++i) fits.push_back(calibrate_block(f, i, opt));
    for (const auto& c : fits) {
      PARSIM_FUZZ_CHECK(c.ranks > 0 && c.nodes > 0, c.collective);
      PARSIM_FUZZ_CHECK(std::isfinite(c.alpha_s) && c.alpha_s > 0, c.collective);
      PARSIM_FUZZ_CHECK(std::isfinite(c.busbw_Bps) && c.busbw_Bps > 0, c.collective);
      PARSIM_FUZZ_CHECK(!c.points.empty() && !c.regimes.empty(), c.collective);
    }
    const std::size_t primary = primary_block(f);
    const std::string json = calibration_json(fits, primary);
    fuzz::check_json(json, "calibration_json");
    (void)calibration_table(fits, primary);
    if (!preset_for_gpu_name(fits[primary].gpu_name).empty()) {
      std::vector<std::string> notes;
      (void)calibration_hardware_json(fits[primary], "", 0, notes);
    }
  });
  return 0;
}

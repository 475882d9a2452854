// fuzz_nccl: nccl-tests / rccl-tests text and markdown tables as `parsim calibrate` reads them — parse, fit every
// block, render table and JSON (JSON output must serialise: valid UTF-8, no NaN where a number is promised), and
// write the --out hardware file when the benchmark names a GPU parsim knows.
#include "fuzz_common.hpp"
#include "sim/measure/calibrate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parsim;
  const std::string text = fuzz::bytes(data, size);
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

// fuzz_merge: sweep shards as `parsim merge` reads them (JSON or CSV, by the first character), merged with a second
// copy of themselves under another shard index when they hold one, and printed in every format. The merge code is
// being refactored (issue 14): this harness uses only the public API of sim/sweep/sweep.hpp.
#include "fuzz_common.hpp"
#include "sim/present/sweep_io.hpp"
#include "sim/sweep/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parsim;
  const std::string path = fuzz::scratch_file("shard", fuzz::bytes(data, size));
  fuzz::guarded([&] {
    const SweepReport r = read_sweep_file(path);
    const SweepReport merged = merge_sweeps({r}, {path}, /*partial=*/true);  // CSV and lone shards reach the output
    for (const bool all : {false, true}) {
      SweepListing l;
      l.all = all;
      l.top = 3;
      fuzz::check_json(sweep_to_json(merged, l), "sweep_to_json");
      (void)sweep_to_csv(merged, l);
      (void)sweep_to_table(merged, l);
    }
  });
  return 0;
}

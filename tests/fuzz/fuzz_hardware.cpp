// fuzz_hardware: the hardware JSON file (`--gpu FILE`, `calibrate --out`), through the file reader, then the round
// trip the schema promises: hardware_to_json writes the complete form, which parse_hardware_json reads back to the
// same hardware (the same JSON again), and a collective on the result takes a finite, positive time.
#include "fuzz_common.hpp"
#include "hardware/hardware.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace parsim;
  const std::string path = fuzz::scratch_file("hardware.json", fuzz::bytes(data, size));
  fuzz::guarded([&] {
    const Hardware hw = resolve_hardware(path);
    const std::string once = hardware_to_json(hw);
    Hardware back;
    try {
      back = parse_hardware_json(once, "round trip");
    } catch (const InputError& e) {
      fuzz::fail("hardware_to_json wrote a file parse_hardware_json rejects", e.what());
    }
    PARSIM_FUZZ_CHECK(hardware_to_json(back) == once, once);
    GroupShape g;
    g.size = 2 * hw.node.gpus_per_node;
    g.nodes = 2;
    g.per_node = hw.node.gpus_per_node;
    g.concurrent_per_node = g.per_node;
    const double t = collective_time(hw, Collective::AllReduce, 1e9, g).time_s;
    PARSIM_FUZZ_CHECK(std::isfinite(t) && t > 0, once);
  });
  return 0;
}

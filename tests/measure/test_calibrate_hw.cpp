// calibrate --out: the written hardware file, loaded back through --gpu's resolver, reproduces the benchmark through
// parsim's own collective model. Needs the hardware library (presets, hardware_io, collectives).
#include "helpers.hpp"

#include "hardware/hardware.hpp"
#include "sim/core/text.hpp"
#include "sim/measure/calibrate.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

using namespace parsim;

TEST_CASE("calibrate --out round trip on the shared tables") {
  struct Case {
    const char* file;
    const char* gpu;  // the AWS tables carry no device list
  };
  for (const Case& k : {Case{"aws_p5_2node_16xH100_all_reduce.txt", "h100"},
                        Case{"gcp_a3mega_2node_16xH100_all_reduce.txt", ""},
                        Case{"aws_p4de_2node_16xA100-80GB_all_reduce.txt", "a100"},
                        Case{"mlengineering_1node_8xH200_torch_all_reduce.txt", "h200"}}) {
    INFO(k.file);
    const auto f = parse_nccl_tests(read_file_text(measure_test::data(std::string("nccl/") + k.file), "t"), k.file);
    const auto c = calibrate_block(f, primary_block(f), {});
    std::vector<std::string> notes;
    const std::string json = calibration_hardware_json(c, k.gpu, 0, notes);
    const auto path = measure_test::write_text(std::string(k.file) + ".hw.json", json);
    const Hardware hw = resolve_hardware(path);
    GroupShape g;
    g.size = c.ranks;
    g.nodes = c.nodes;
    g.per_node = c.ranks / c.nodes;
    g.concurrent_per_node = g.per_node;
    // The fitted times at both ends of the table are what the file must reproduce (0.5 % iteration tolerance;
    // 2 % allowed for the JSON round trip of the values).
    const auto& small = c.points.front();
    const auto& large = c.points.back();
    for (const auto& n : notes) MESSAGE(n);
    const double t_large = collective_time(hw, Collective::AllReduce, large.bytes, g).time_s;
    const double t_small = collective_time(hw, Collective::AllReduce, small.bytes, g).time_s;
    INFO("large: model " << t_large << " s, fit " << large.predicted_s << "; small: model " << t_small << " s, fit "
                         << small.predicted_s);
    CHECK(std::fabs(t_large / large.predicted_s - 1) <= 0.02);
    CHECK(std::fabs(t_small / small.predicted_s - 1) <= 0.02);
  }
}

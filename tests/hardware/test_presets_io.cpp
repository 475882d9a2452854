// Presets (numbers and provenance), name resolution, --gpus-per-node, and the hardware JSON schema (round trip, errors).
#include "hardware/hardware.hpp"
#include "sim/core/error.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

using namespace parsim;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no InputError>";
}

std::string examples_dir() { return std::string(PARSIM_TEST_DATA) + "/../../examples/hardware"; }

fs::path temp_file(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / "parsim_test_hardware";
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

// Every leaf of the file form except free-text names, as source-key paths: "gpu.compute.num_sms",
// "gpu.kernels.megatron.sustained_efficiency", "node.scale_up.efficiency" (a tier is named by its kind), ….
void leaves(const nlohmann::json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.key() == "tiers") {
      for (const auto& t : it.value()) {
        nlohmann::json rest = t;
        rest.erase("kind");
        leaves(rest, prefix + "." + t.at("kind").get<std::string>(), out);
      }
    } else if (it.value().is_object()) {
      leaves(it.value(), path, out);
    } else if (it.key() != "name") {
      out.push_back(path);
    }
  }
}

}  // namespace

TEST_CASE("presets: the eleven GPUs with their datasheet and measured numbers") {
  // Canonical names in the CLI contract (docs/cli.md), one file each in hardware/presets/, listed alphabetically.
  CHECK(hardware_preset_names() == std::vector<std::string>{"a100-40gb", "a100-80gb", "b200", "b300", "gb200", "gb300",
                                                            "h100", "h200", "mi300x", "mi325x", "mi355x"});

  const Hardware h100 = resolve_hardware("h100");
  // Dense bf16 989.4 TFLOP/s, fp8 1,978.9 (domain notes §8).
  CHECK(h100.gpu.peak_bf16 == doctest::Approx(989.4e12));
  CHECK(h100.gpu.peak_fp8 == doctest::Approx(1978.9e12));
  // CUDA-visible 85,018,279,936 B / 2^30 = 79.18 GiB (an "80 GB" H100), inside the 79.2–79.6 GiB the brief expects.
  CHECK(h100.gpu.hbm_capacity_bytes / kGiB == doctest::Approx(79.18).epsilon(1e-3));
  CHECK(h100.gpu.hbm_bandwidth_Bps == doctest::Approx(3.35e12));
  CHECK(h100.gpu.compute.num_sms == 132);
  // NVLink4: 900 GB/s bidirectional = 450 GB/s per direction; 8 × 400 Gb/s NDR = 50 GB/s per GPU.
  CHECK(h100.node.intra().bw_Bps_unidir == doctest::Approx(450e9));
  CHECK(h100.node.intra().nvls);
  CHECK(h100.node.inter().bw_Bps_unidir == doctest::Approx(8 * 400e9 / 8 / 8));

  const Hardware a100 = resolve_hardware("a100-40gb");
  CHECK(!a100.gpu.has_fp8());
  CHECK(a100.gpu.compute.num_sms == 108);
  // 42,297,524,224 B = 39.39 GiB (measured totalGlobalMem of an A100-SXM4-40GB).
  CHECK(a100.gpu.hbm_capacity_bytes / kGiB == doctest::Approx(39.39).epsilon(1e-3));
  // DGX A100: 8 × HDR 200 Gb/s → 25 GB/s per GPU.
  CHECK(a100.node.inter().bw_Bps_unidir == doctest::Approx(25e9));
  CHECK(!a100.node.intra().nvls);
  CHECK(error_of([&] { (void)a100.gpu.peak_flops(Precision::FP8); }).find("no fp8") != std::string::npos);

  const Hardware b200 = resolve_hardware("b200");
  CHECK(b200.gpu.compute.num_sms == 148);
  CHECK(b200.node.intra().bw_Bps_unidir == doctest::Approx(900e9));
  CHECK(b200.node.intra().nvls_min_gpus == 6);  // NCCL enables NVLS from 6 GPUs on B200 (domain notes §7)

  const Hardware mi = resolve_hardware("mi300x");
  CHECK(mi.node.intra().topology == IntraTopology::FullMesh);
  CHECK(mi.node.intra().links_per_gpu == 7);
  // 7 links × 64 GB/s per direction (AMD's 128 GB/s per link read as bidirectional) = 448 GB/s per GPU.
  CHECK(mi.node.intra().bw_Bps_unidir == doctest::Approx(448e9));
  CHECK(mi.gpu.compute.num_sms == 304);
  CHECK(mi.gpu.hbm_capacity_bytes / kGiB == doctest::Approx(191.69).epsilon(1e-3));

  // H200: same GH100 die as H100 (132 SMs), 139.8 GiB CUDA-visible, 4.8 TB/s.
  const Hardware h200 = resolve_hardware("h200");
  CHECK(h200.gpu.compute.num_sms == 132);
  CHECK(h200.gpu.hbm_capacity_bytes / kGiB == doctest::Approx(139.8));
  CHECK(h200.gpu.hbm_bandwidth_Bps == doctest::Approx(4.8e12));

  // The presets built on another ("base") keep what they do not state and state, with sources, what differs.
  // B300: B200's sweep-fitted bf16 ceiling 0.7433 × the measured bf16 MAMF ratio 1,769 / 1,745 at the same 2,250
  // peak (hardware/data/matmul_ceiling.csv) = 0.7535, B200's k_half (332, inherited); 8 × ConnectX-8 800 Gb/s =
  // 100 GB/s per GPU; NVLink and NVLS as B200.
  const Hardware b300 = resolve_hardware("b300");
  CHECK(b300.gpu.compute.gemm_ceiling == doctest::Approx(0.7433 * 1769.0 / 1745.0).epsilon(1e-4));
  CHECK(b300.gpu.compute.gemm_k_half == 332);
  CHECK(b300.node.inter().bw_Bps_unidir == doctest::Approx(8 * 800e9 / 8 / 8));
  CHECK(b300.node.intra().bw_Bps_unidir == doctest::Approx(900e9));
  // GB200 NVL72: the NVLink domain is the node (72 GPUs, NVLS), one 400 Gb/s NIC per GPU = 50 GB/s; Grace hosts.
  const Hardware gb = resolve_hardware("gb200");
  CHECK(gb.node.gpus_per_node == 72);
  CHECK(gb.node.intra().nvls);
  CHECK(gb.node.inter().bw_Bps_unidir == doctest::Approx(72 * 400e9 / 8 / 72));
  CHECK(gb.node.cpu == CpuVendor::Arm);
  CHECK(gb.gpu.peak_bf16 == doctest::Approx(2500e12));
  // MI325X: MI300X's compute die (1,307.4 dense bf16), 256 GB HBM3E at 6 TB/s, AMD's measured bf16 MAF 843
  // (hardware/data/amd_maf.csv).
  const Hardware m325 = resolve_hardware("mi325x");
  CHECK(m325.gpu.peak_bf16 == doctest::Approx(1307.4e12));
  CHECK(m325.gpu.hbm_bandwidth_Bps == doctest::Approx(6e12));
  CHECK(m325.gpu.compute.gemm_ceiling == doctest::Approx(843.0 / 1307.4));
  CHECK(m325.node.intra().topology == IntraTopology::FullMesh);
  // MI355X: CDNA 4, 256 CUs, 2,516.6 dense bf16, MAMF 1,565; 7 Infinity Fabric links × 76.8 GB/s per direction.
  const Hardware m355 = resolve_hardware("mi355x");
  CHECK(m355.gpu.arch == GpuArch::CDNA4);
  CHECK(m355.gpu.compute.num_sms == 256);
  CHECK(m355.gpu.compute.gemm_ceiling == doctest::Approx(1565.0 / 2516.6));
  CHECK(m355.node.intra().bw_Bps_unidir == doctest::Approx(537.6e9));
}

TEST_CASE("presets: the attention kernel's fixed work per query block, from cuDNN's windowed and causal tables") {
  // cudnn-frontend's attention benchmark tables (cuDNN 9.27, bf16, GPT-OSS attention: 64 query / 8 KV heads, d 64,
  // batch 1; sources in the presets). A window of 128 makes each 128-query block visit 2 key tiles of 128; its time
  // per 1,024 tokens is the difference of the 32,768- and 8,192-token rows over 24: 1,024 tiles (8 blocks × 64 heads
  // × 2) of 4 · 128 · 128 · 64 = 4,194,304 FLOP. The full-causal row at 32,768 tokens (128.5 tiles per block) is the
  // long-loop rate. With one time per tile and c tiles' worth of fixed work per block:
  // 2/(2 + c) · R_causal · (128.5 + c)/128.5 = R_window  ⇔  (128.5 + c)/(2 + c) = k = R_window · 128.5/(2 · R_causal)
  // ⇔  c = (128.5 − 2k)/(k − 1).
  auto block_tiles = [](double t8k_ms, double t32k_ms, double causal_tflops) {
    const double window_tflops = 1024.0 * 4 * 128 * 128 * 64 / ((t32k_ms - t8k_ms) / 24 * 1e-3) / 1e12;
    const double k = window_tflops * 128.5 / (2 * causal_tflops);
    return (128.5 - 2 * k) / (k - 1);
  };
  // GB200: 0.106461 / 0.401882 ms → 348.9 TFLOP/s of tiles; causal 1,086.044 TFLOP/s → k = 20.64, c = 4.44.
  const double gb200 = block_tiles(0.106461, 0.401882, 1086.044);
  CHECK(gb200 == doctest::Approx(4.44).epsilon(0.005));
  CHECK(resolve_hardware("gb200").gpu.compute.attn_block_overhead_tiles == doctest::Approx(gb200).epsilon(0.005));
  // H200: 0.135487 / 0.517145 ms → 270.1 TFLOP/s; causal 482.756 → k = 35.95, c = 1.62 (H100: the same die and SMs).
  const double h200 = block_tiles(0.135487, 0.517145, 482.756);
  CHECK(h200 == doctest::Approx(1.62).epsilon(0.005));
  CHECK(resolve_hardware("h200").gpu.compute.attn_block_overhead_tiles == doctest::Approx(h200).epsilon(0.005));
  CHECK(resolve_hardware("h100").gpu.compute.attn_block_overhead_tiles == resolve_hardware("h200").gpu.compute.attn_block_overhead_tiles);
  // The rest scale the measured value by the tensor rate per SM (dense bf16 peak / SMs): the per-block work takes the
  // same time, a tile less where an SM multiplies faster. B200 2,250/148 vs GB200 2,500/148: 4.44 · 0.9 = 4.00;
  // A100 (312/108 = 2.889) vs H100 (989.4/132 = 7.495): 1.62 · 0.3854 = 0.62.
  CHECK(resolve_hardware("b200").gpu.compute.attn_block_overhead_tiles == doctest::Approx(4.44 * 2250 / 2500).epsilon(0.005));
  CHECK(resolve_hardware("a100-80gb").gpu.compute.attn_block_overhead_tiles ==
        doctest::Approx(1.62 * (312.0 / 108) / (989.4 / 132)).epsilon(0.01));
  // The check the source quotes: the GB200 model on the full-causal 8,192-token row (32.5 tiles per block).
  const double long_rate = 1086.044 * (128.5 + gb200) / 128.5;
  CHECK(32.5 / (32.5 + gb200) * long_rate == doctest::Approx(994.722).epsilon(0.01));
}

TEST_CASE("presets: Blackwell Ultra's attention from cuDNN's GB300 vs GB200 tables") {
  // cudnn-frontend's training SDPA tables of 2026-04-24 (cuDNN 9.22, bf16, Llama-3.1 attention: 64 query / 8 KV
  // heads, d 128, batch 2) on GB300 and GB200, whose datasheet peaks are equal: GB200 / GB300 time at 4,096, 8,192,
  // 16,384 and 32,768 tokens, causal and unmasked. Forward: 0.391/0.323, 1.397/1.185, 5.150/4.593, 21.692/18.014 and
  // 0.687/0.579, 2.483/2.181, 10.369/8.734, 43.056/38.317 → mean 1.169; backward: 1.198/1.101, 4.127/3.832,
  // 16.554/14.593, 71.756/59.024 and 2.037/1.924, 7.831/7.181, 32.014/28.638, 139.364/123.272 → mean 1.114. B300 (and
  // GB300 through it) runs B200's cuDNN curve × those ratios.
  const double fwd[][2] = {{0.391, 0.323}, {1.397, 1.185}, {5.150, 4.593}, {21.692, 18.014},
                           {0.687, 0.579}, {2.483, 2.181}, {10.369, 8.734}, {43.056, 38.317}};
  const double bwd[][2] = {{1.198, 1.101}, {4.127, 3.832}, {16.554, 14.593}, {71.756, 59.024},
                           {2.037, 1.924}, {7.831, 7.181}, {32.014, 28.638}, {139.364, 123.272}};
  double rf = 0, rb = 0;
  for (int i = 0; i < 8; ++i) rf += fwd[i][0] / fwd[i][1] / 8, rb += bwd[i][0] / bwd[i][1] / 8;
  CHECK(rf == doctest::Approx(1.169).epsilon(0.001));
  CHECK(rb == doctest::Approx(1.114).epsilon(0.001));
  const Hardware b200_hw = resolve_hardware("b200");
  const KernelProfile& b200 = b200_hw.gpu.kernels.at("megatron");
  for (const std::string name : {"b300", "gb300"}) {
    CAPTURE(name);
    const Hardware hw = resolve_hardware(name);
    const KernelProfile& k = hw.gpu.kernels.at("megatron");
    CHECK(k.attn_fwd_efficiency == doctest::Approx(b200.attn_fwd_efficiency * 1.169).epsilon(1e-4));
    CHECK(k.attn_bwd_efficiency == doctest::Approx(b200.attn_bwd_efficiency * 1.114).epsilon(1e-4));
    CHECK(k.attn_fwd_seq_half == b200.attn_fwd_seq_half);  // the ramp is B200's
  }
}

TEST_CASE("presets: cuDNN's head-dim roll-off, measured on GB200 and H200") {
  // cudnn-frontend's attention tables (cuDNN 9.27, bf16, 64 query / 8 KV heads, batch 1, causal): head dim 64 (GPT-OSS
  // full layers) over head dim 128 (Llama-3.1), TFLOP/s at 2,048 and 8,192 tokens. GB200: 667.711/955.765 = 0.699,
  // 994.722/1,438.125 = 0.692; H200: 348.169/490.416 = 0.710, 457.451/653.556 = 0.700; mean 0.700. The roll-off
  // d/(d + h) normalised at d = 128 equals it when (64/(64 + h)) / (128/(128 + h)) = 0.700 ⇔ 64·(128 + h) =
  // 0.700·128·(64 + h) ⇔ h = (8,192 − 5,734.4)/(89.6 − 64) = 96.
  const double r = (667.711 / 955.765 + 994.722 / 1438.125 + 348.169 / 490.416 + 457.451 / 653.556) / 4;
  CHECK(r == doctest::Approx(0.700).epsilon(0.002));
  const double h = (8192 - r * 128 * 64) / (r * 128 - 64);
  CHECK(h == doctest::Approx(96).epsilon(0.02));
  for (const std::string name : {"h100", "h200", "b200", "gb200", "b300", "gb300"}) {
    CAPTURE(name);
    const Hardware hw = resolve_hardware(name);
    CHECK(hw.gpu.kernels.at("megatron").attn_head_dim_half == 96);
    CHECK(hw.gpu.kernels.at("pytorch").attn_head_dim_half == 0);  // FlashAttention-2: gpu.compute's (FA3's) 40
    // Head dim 64 on the cuDNN curve runs at 0.70 of head dim 128 (at a long sequence, so the ramp is the same).
    const Hardware mc = megatron_compute(hw);
    const double t64 = attention_fwd_time_s(mc, 1e12, 1 << 20, 64, Precision::BF16, false);
    const double t128 = attention_fwd_time_s(mc, 1e12, 1 << 20, 128, Precision::BF16, false);
    const double gap = mc.gpu.compute.kernel_overhead_s;
    CHECK((t128 - gap) / (t64 - gap) == doctest::Approx((64.0 / 160) / (128.0 / 224)).epsilon(1e-9));
  }
}

TEST_CASE("presets: every number carries its source") {
  for (const auto& name : hardware_preset_names()) {
    CAPTURE(name);
    const Hardware hw = resolve_hardware(name);
    const auto j = nlohmann::json::parse(hardware_to_json(hw));
    std::vector<std::string> paths;
    for (const char* sec : {"gpu", "node", "collectives"}) leaves(j.at(sec), sec, paths);
    // 8 gpu (arch + 7 numbers) + 10 compute + 2 × 6 kernel-profile values (measured curves only: the sustained
    // fraction and the causal factor are calibration.json's, not the preset's) + 5 node (gpus, cpu vendor, host
    // cpu and its time factor, the CPU–GPU link) + 8 scale-up (+ 5 scale-out when the node has NICs) + 10
    // collectives, names excluded; + 1 where the GPU has an fp8 fast-accumulation gain (written only when ≠ 1: the
    // Hopper presets); + 1 for the attention kernel's per-query-block work (attn_block_overhead_tiles, written when
    // ≠ 0: every preset); + 1 where the cuDNN (megatron) profile has its own measured head-dim roll-off (Hopper and
    // Blackwell).
    const int fast_accum = hw.gpu.compute.fp8_fast_accum_gain != 1.0 ? 1 : 0;
    const int profile_dh = hw.gpu.kernels.at("megatron").attn_head_dim_half > 0 ? 1 : 0;
    CHECK(hw.gpu.compute.attn_block_overhead_tiles > 0);
    CHECK(hw.node.host_link_gbytes_per_s > 0);  // every preset states its CPU–GPU link
    // The host memory per GPU: stated by the NVIDIA system presets (DGX A100 320 GB: 1 TB / 8 = 125 GB; DGX A100
    // 640 GB, DGX H100 / H200 / B200: 2 TB / 8 = 250 GB; b300: DGX B200's 2 TB assumed; GB200 / GB300: one Grace's
    // 480 GB per two GPUs = 240 GB), not by the AMD platform presets (no vendor system figure: offloading unchecked).
    const std::map<std::string, double> host_gb = {{"a100-40gb", 125}, {"a100-80gb", 250}, {"h100", 250},
                                                   {"h200", 250},      {"b200", 250},      {"b300", 250},
                                                   {"gb200", 240},     {"gb300", 240}};
    const auto hg = host_gb.find(name);
    CHECK(hw.node.host_memory_gbytes_per_gpu == (hg == host_gb.end() ? 0.0 : hg->second));
    const int host_mem = hw.node.host_memory_gbytes_per_gpu > 0 ? 1 : 0;
    CHECK(paths.size() ==
          8 + 10 + 12 + 5 + host_mem + 8 + (hw.node.scale_out() ? 5 : 0) + 10 + fast_accum + 1 + profile_dh);
    for (const auto& p : paths) {
      CAPTURE(p);
      REQUIRE(hw.sources.count(p) == 1);
      CHECK(hw.sources.at(p).size() > 10);
      // A preset states where each number comes from; the generic text is for user files only.
      CHECK(hw.sources.at(p).find("set in hardware file") == std::string::npos);
    }
  }
}

TEST_CASE("names: case-insensitive, alias, unknown names list the valid ones") {
  CHECK(resolve_hardware("H100").name == "h100");
  CHECK(resolve_hardware("a100").name == "a100-80gb");
  const std::string e = error_of([] { (void)resolve_hardware("h900"); });
  CHECK(e.find("'h900'") != std::string::npos);
  for (const char* n : {"a100-40gb", "a100-80gb", "h100", "h200", "mi300x", "b200"}) CHECK(e.find(n) != std::string::npos);
  CHECK(error_of([] { (void)resolve_hardware("/no/such/hw.json"); }).find("/no/such/hw.json") != std::string::npos);
}

TEST_CASE("--gpus-per-node keeps each GPU's NIC share") {
  // h100 with 4 GPUs per node: 8 NICs × 4/8 = 4 NICs, each GPU still 400 Gb/s / 8 = 50 GB/s.
  const Hardware h4 = resolve_hardware("h100", 4);
  CHECK(h4.node.gpus_per_node == 4);
  CHECK(h4.node.inter().nics_per_node == 4);
  CHECK(h4.node.inter().bw_Bps_unidir == doctest::Approx(50e9));
  CHECK(h4.sources.at("node.gpus_per_node").find("--gpus-per-node 4") != std::string::npos);
  // 16 per node: 16 NICs.
  CHECK(resolve_hardware("h100", 16).node.inter().nics_per_node == 16);
  // 0 = keep the preset's 8.
  CHECK(resolve_hardware("h100", 0).node.gpus_per_node == 8);
  CHECK(error_of([] { (void)resolve_hardware("h100", -1); }).find("-1") != std::string::npos);
  // The MI300X mesh has 7 links per GPU: at most 8 GPUs per node.
  CHECK(error_of([] { (void)resolve_hardware("mi300x", 16); }).find("links_per_gpu") != std::string::npos);
  // p4de (4 NICs × 100 Gb/s for 8 GPUs = 50 Gb/s per GPU) at 1 GPU per node: 4·1/8 NICs is not an integer, so the
  // node gets one NIC at the per-GPU share, 4 × 100 / 8 = 50 Gb/s = 6.25 GB/s.
  const Hardware p1 = resolve_hardware(examples_dir() + "/aws-p4de.json", 1);
  CHECK(p1.node.inter().nics_per_node == 1);
  CHECK(p1.node.inter().nic_bits_per_s == doctest::Approx(50e9));
  CHECK(p1.node.inter().bw_Bps_unidir == doctest::Approx(6.25e9));
}

TEST_CASE("JSON: every preset and example round-trips through hardware_to_json identically") {
  std::vector<std::string> inputs = hardware_preset_names();
  for (const char* f : {"aws-p4de.json", "aws-p5.json", "gcp-a3mega.json", "h100-roce-4gpu.json"})
    inputs.push_back(examples_dir() + "/" + f);
  for (const auto& input : inputs) {
    CAPTURE(input);
    const Hardware hw = resolve_hardware(input);
    const std::string name = fs::path(input).stem().string();
    const std::string text = hardware_to_json(hw);
    const fs::path file = temp_file(name + ".json", text);
    const Hardware back = resolve_hardware(file.string());
    CHECK(hardware_to_json(back) == text);
    // Exact equality of the SI values (the writer picks the decimal that converts back bit for bit).
    CHECK(back.name == hw.name);
    CHECK(back.gpu.peak_bf16 == hw.gpu.peak_bf16);
    CHECK(back.gpu.peak_fp8 == hw.gpu.peak_fp8);
    CHECK(back.gpu.hbm_capacity_bytes == hw.gpu.hbm_capacity_bytes);
    CHECK(back.gpu.hbm_bandwidth_Bps == hw.gpu.hbm_bandwidth_Bps);
    CHECK(back.gpu.compute.gemm_ceiling == hw.gpu.compute.gemm_ceiling);
    CHECK(back.gpu.compute.kernel_overhead_s == hw.gpu.compute.kernel_overhead_s);
    CHECK(back.node.intra().latency_s == hw.node.intra().latency_s);
    CHECK(back.node.intra().efficiency == hw.node.intra().efficiency);
    CHECK(back.node.intra().nvls_efficiency == hw.node.intra().nvls_efficiency);
    CHECK(back.node.inter().nic_bits_per_s == hw.node.inter().nic_bits_per_s);
    CHECK(back.node.inter().bw_Bps_unidir == hw.node.inter().bw_Bps_unidir);
    CHECK(back.node.intra().topology == hw.node.intra().topology);
    CHECK(back.sources == hw.sources);
  }
}

TEST_CASE("JSON: base preset plus overrides, units converted at the boundary") {
  const Hardware hw = parse_hardware_json(R"({
    "name": "my-h100", "base": "h100", "description": "test",
    "gpu": { "peak_bf16_tflops": 900, "hbm_gib": 80, "compute": { "kernel_overhead_us": 3 },
             "kernels": { "megatron": { "sustained_efficiency": 0.5 } } },
    "node": { "gpus_per_node": 4,
              "tiers": [ { "kind": "scale_up", "latency_us": 2.5 },
                         { "kind": "scale_out", "nics_per_node": 2, "nic_gbits_per_s": 200 } ] },
    "collectives": { "protocols": ["simple"], "buffsize_bytes": 8388608 },
    "sources": { "gpu.hbm_gib": "my measurement" } })",
                                          "mine.json");
  CHECK(hw.name == "my-h100");
  CHECK(hw.gpu.peak_bf16 == doctest::Approx(900e12));
  CHECK(hw.gpu.hbm_capacity_bytes == doctest::Approx(80 * kGiB));  // GiB = 2^30 bytes
  CHECK(hw.gpu.compute.kernel_overhead_s == doctest::Approx(3e-6));
  // A cluster's own in-training fraction overrides calibration.json's one value per stack, for that stack only.
  CHECK(hw.gpu.kernels.at("megatron").sustained_override == 0.5);
  CHECK(sustained_fraction(megatron_compute(hw)) == 0.5);
  CHECK(hw.gpu.kernels.at("pytorch").sustained_override == 0);
  CHECK(sustained_fraction(hw) == hw.calib.sustained_pytorch);
  CHECK(hw.node.intra().latency_s == doctest::Approx(2.5e-6));
  CHECK(hw.node.intra().bw_Bps_unidir == doctest::Approx(450e9));  // inherited from the preset's scale-up tier
  // 2 NICs × 200 Gb/s / 8 bits / 4 GPUs = 12.5 GB/s per GPU.
  CHECK(hw.node.inter().bw_Bps_unidir == doctest::Approx(12.5e9));
  CHECK(hw.comm.protocols == kProtoSimple);
  CHECK(hw.comm.buffsize_bytes == 8388608);
  CHECK(hw.gpu.peak_fp8 == doctest::Approx(1978.9e12));  // inherited
  CHECK(hw.sources.at("gpu.peak_bf16_tflops") == "set in hardware file 'mine.json'");
  CHECK(hw.sources.at("node.scale_out.nics_per_node") == "set in hardware file 'mine.json'");
  CHECK(hw.sources.at("gpu.hbm_gib") == "my measurement");
  CHECK(hw.sources.at("gpu.peak_fp8_tflops") == resolve_hardware("h100").sources.at("gpu.peak_fp8_tflops"));
  // The attention kernel's per-block work is optional and inherited (H100: the H200's measured 1.62); 0 turns it off.
  CHECK(hw.gpu.compute.attn_block_overhead_tiles == 1.62);
  CHECK(parse_hardware_json(R"({"base": "h100", "gpu": {"compute": {"attn_block_overhead_tiles": 0}}})", "x.json")
            .gpu.compute.attn_block_overhead_tiles == 0);
  // The host memory per GPU is inherited (DGX H100: 2 TB / 8 = 250 GB) and can be restated (a 4 TB node: 500 GB).
  CHECK(hw.node.host_memory_gbytes_per_gpu == 250);
  CHECK(parse_hardware_json(R"({"base": "h100", "node": {"host_memory_gbytes_per_gpu": 500}})", "x.json")
            .node.host_memory_gbytes_per_gpu == 500);
  // fp8 0 means "no fp8 tensor cores" and is allowed.
  CHECK(!parse_hardware_json(R"({"base": "h100", "gpu": {"peak_fp8_tflops": 0}})", "x.json").gpu.has_fp8());
  // Without a name the file path names the hardware.
  CHECK(parse_hardware_json(R"({"base": "b200"})", "b.json").name == "b.json");
  // A calibration file overrides fitted constants of an already loaded hardware, with its own provenance.
  const Hardware cal = apply_hardware_overrides(resolve_hardware("h100"),
                                                R"({"gpu": {"kernels": {"pytorch": {"sustained_efficiency": 0.72}}},
                                                    "sources": {"gpu.kernels.pytorch.sustained_efficiency": "fit"}})",
                                                "calibration.json");
  CHECK(sustained_fraction(cal) == 0.72);  // the active (pytorch) profile is refreshed
  CHECK(cal.sources.at("gpu.kernels.pytorch.sustained_efficiency") == "fit");
}

TEST_CASE("fitted constants: one value per stack in calibration.json, none per GPU in the presets") {
  // Issue 9 item 3: a GPU is its datasheet plus measured kernel curves; the in-training fraction and the causal-kernel
  // factor are calibration.json's, one value per stack (or one in all), shared by every GPU. No preset may carry its
  // own: neither in its JSON text nor in the loaded hardware (an inherited "base" value would show there).
  const FittedConstants& cal = default_fitted_constants();
  for (const auto& name : hardware_preset_names()) {
    CAPTURE(name);
    const std::string text = hardware_preset_text(name);
    CHECK(text.find("sustained_efficiency") == std::string::npos);
    CHECK(text.find("attn_causal_efficiency") == std::string::npos);
    CHECK(text.find("0.926") == std::string::npos);  // no calibrated fp8 fraction folded into a measured ceiling
    const Hardware h = resolve_hardware(name);
    for (const auto& kv : h.gpu.kernels) CHECK(kv.second.sustained_override == 0);
    CHECK(h.gpu.compute.attn_causal_override == 0);
    CHECK(sustained_fraction(hardware_for_stack(h, "megatron")) == cal.sustained_megatron);
    CHECK(sustained_fraction(hardware_for_stack(h, "pytorch")) == cal.sustained_pytorch);
    CHECK(attn_causal_fraction(h) == cal.attn_causal_efficiency);
    // The legacy Megatron program (legacy_compute): the PyTorch profile's kernel curves, the Megatron fraction.
    const Hardware leg = legacy_compute(h), pt = hardware_for_stack(h, "pytorch");
    CHECK(sustained_fraction(leg) == cal.sustained_megatron);
    CHECK(leg.gpu.compute.attn_fwd_efficiency == pt.gpu.compute.attn_fwd_efficiency);
    CHECK(leg.gpu.compute.attn_bwd_seq_half == pt.gpu.compute.attn_bwd_seq_half);
    CHECK(leg.gpu.compute.fp8_cast_bytes_per_element == pt.gpu.compute.fp8_cast_bytes_per_element);
  }
  {
    // A hardware file that pins the Megatron stack's fraction for its own cluster pins the legacy program's with it;
    // a pin of the PyTorch stack's does not reach it.
    const Hardware own = parse_hardware_json(
        R"({"base": "a100-80gb", "gpu": {"kernels": {"megatron": {"sustained_efficiency": 0.7}, "pytorch": {"sustained_efficiency": 0.6}}}})",
        "own.json");
    CHECK(sustained_fraction(legacy_compute(own)) == 0.7);
    CHECK(sustained_fraction(hardware_for_stack(own, "pytorch")) == 0.6);
  }
  // The values compiled in are calibration.json's (read back from the embedded text here, independently of
  // calibration.cpp's parser).
  const auto j = nlohmann::json::parse(calibration_json_text()).at("constants");
  CHECK(cal.sustained_megatron == j.at("sustained_megatron").at("value").get<double>());
  CHECK(cal.sustained_pytorch == j.at("sustained_pytorch").at("value").get<double>());
  CHECK(cal.fp8_training_fraction == j.at("fp8_training_fraction").at("value").get<double>());
  CHECK(cal.attn_causal_efficiency == j.at("attn_causal_efficiency").at("value").get<double>());
  // A hardware file may still pin the causal factor for its own cluster; written back only when set (round trip).
  const Hardware own = parse_hardware_json(R"({"base": "h100", "gpu": {"compute": {"attn_causal_efficiency": 0.7}}})",
                                           "own.json");
  CHECK(attn_causal_fraction(own) == 0.7);
  CHECK(parse_hardware_json(hardware_to_json(own), "back.json").gpu.compute.attn_causal_override == 0.7);
  CHECK(hardware_to_json(resolve_hardware("h100")).find("attn_causal_efficiency") == std::string::npos);
}

TEST_CASE("presets: the measured GEMM ceilings (MAMF / datasheet peak; Blackwell from B200's measured sweep)") {
  // hardware/data/matmul_ceiling.csv and matmul_ceiling_fp8.csv (stas00/ml-engineering MAMF table): each preset's
  // ceiling is its own GPU's measured best-shape TFLOP/s over the datasheet dense peak the preset states — not H100's
  // scaled. bf16: A100 267.9/312, H100/H200 792.1/989.4, MI355X 1565/2516.6. fp8: H100 1402.6/1978.9, H200
  // 1453.4/1978.9. MI300X and MI325X: both precisions from AMD's measured max-achievable FLOPs (hardware/data/
  // amd_maf.csv: bf16 708 and 843 of 1307.4, fp8 1273 and 1519 of 2614.9), one library and method. MI355X has no fp8
  // row: its own bf16 ceiling × its predecessor MI325X's measured fp8/bf16 efficiency ratio (1519/2614.9)/(843/1307.4)
  // = 0.90091 [U] (H100's 0.88265 carries Hopper's split-accumulation cost).
  // Blackwell: B200's ceilings are fitted, with k_half 332, to XLA's measured B200 GEMM sweeps
  // (tests/data/hardware/xla_matmul_perf_table*.csv, `parsim calibrate`): bf16 0.7433, fp8 0.6933; GB200 and B300
  // carry B200's level scaled by their own measured MAMF over B200's (same die; peaks as their presets state):
  // GB200 bf16 0.7433 × 2250/2500 × 1822/1745 = 0.6985, fp8 0.6933 × 4500/5000 × 3615.6/3432.5 = 0.6573;
  // B300 bf16 0.7433 × 1769/1745 = 0.7535, fp8 0.6933 × 3353.3/3432.5 = 0.6773 (docs/gemm-shapes.md).
  struct Row {
    const char* gpu;
    double bf16, bf16_peak, fp8, fp8_peak;  // measured TFLOP/s and the preset's peak (fp8 0: derived, see above)
  };
  const double r = (1519 / 2614.9) / (843 / 1307.4);
  for (const Row& c : {Row{"a100-80gb", 267.9, 312, 0, 0}, Row{"h100", 792.1, 989.4, 1402.6, 1978.9},
                       Row{"h200", 792.1, 989.4, 1453.4, 1978.9}, Row{"mi300x", 708, 1307.4, 1273, 2614.9},
                       Row{"mi325x", 843, 1307.4, 1519, 2614.9}, Row{"mi355x", 1565, 2516.6, 0, 0}}) {
    CAPTURE(c.gpu);
    const Hardware h = resolve_hardware(c.gpu);
    CHECK(h.gpu.peak_bf16 == doctest::Approx(c.bf16_peak * 1e12));
    CHECK(h.gpu.compute.gemm_ceiling == doctest::Approx(c.bf16 / c.bf16_peak).epsilon(1e-4));
    if (!h.gpu.has_fp8()) continue;
    const double fp8 = c.fp8 > 0 ? c.fp8 / c.fp8_peak : r * c.bf16 / c.bf16_peak;
    if (c.fp8 > 0) CHECK(h.gpu.peak_fp8 == doctest::Approx(c.fp8_peak * 1e12));
    CHECK(h.gpu.compute.gemm_ceiling_fp8 == doctest::Approx(fp8).epsilon(1e-4));
  }
  struct Blackwell {
    const char* gpu;
    double bf16_peak, fp8_peak, bf16_mamf, fp8_mamf;
  };
  for (const Blackwell& c : {Blackwell{"b200", 2250, 4500, 1745, 3432.5}, Blackwell{"gb200", 2500, 5000, 1822, 3615.6},
                             Blackwell{"b300", 2250, 4500, 1769, 3353.3}}) {
    CAPTURE(c.gpu);
    const Hardware h = resolve_hardware(c.gpu);
    CHECK(h.gpu.peak_bf16 == doctest::Approx(c.bf16_peak * 1e12));
    CHECK(h.gpu.peak_fp8 == doctest::Approx(c.fp8_peak * 1e12));
    CHECK(h.gpu.compute.gemm_k_half == 332);
    CHECK(h.gpu.compute.gemm_ceiling ==
          doctest::Approx(0.7433 * 2250 / c.bf16_peak * c.bf16_mamf / 1745).epsilon(2e-4));
    CHECK(h.gpu.compute.gemm_ceiling_fp8 ==
          doctest::Approx(0.6933 * 4500 / c.fp8_peak * c.fp8_mamf / 3432.5).epsilon(2e-4));
  }
  // GB300 (hardware/presets/gb300.json): no measured MAMF in our sources, so its MAMF is estimated as B300's measured
  // one times GB200's gain over B200 (the same die at the NVL72 tray's power): bf16 1,769 × 1,822 / 1,745 = 1,847.0,
  // fp8 3,353.3 × 3,615.6 / 3,432.5 = 3,532.1; then the B200 sweep's level as above: 0.7433 × 2,250 / 2,500 ×
  // 1,847.0 / 1,745 = 0.7081 and 0.6933 × 4,500 / 5,000 × 3,532.1 / 3,432.5 = 0.6421. Peaks: the GB300 NVL72
  // datasheet's 360 / 720 PFLOPS BF16 / FP8 with sparsity per 72 GPUs = 2,500 / 5,000 dense; 800 Gb/s ConnectX-8 per
  // GPU (100 GB/s), the 72-GPU NVLink domain and the Grace host of GB200.
  const Hardware gb3 = resolve_hardware("gb300");
  CHECK(gb3.gpu.peak_bf16 == doctest::Approx(2500e12));
  CHECK(gb3.gpu.peak_fp8 == doctest::Approx(5000e12));
  CHECK(gb3.gpu.compute.gemm_ceiling == doctest::Approx(0.7433 * 2250 / 2500 * (1769.0 * 1822 / 1745) / 1745).epsilon(2e-4));
  CHECK(gb3.gpu.compute.gemm_ceiling_fp8 ==
        doctest::Approx(0.6933 * 4500 / 5000 * (3353.3 * 3615.6 / 3432.5) / 3432.5).epsilon(2e-4));
  CHECK(gb3.gpu.compute.num_sms == 160);  // B300's, through the base preset
  CHECK(gb3.gpu.hbm_capacity_bytes == resolve_hardware("b300").gpu.hbm_capacity_bytes);
  CHECK(gb3.node.gpus_per_node == 72);
  CHECK(gb3.node.inter().bw_Bps_unidir == doctest::Approx(72 * 800e9 / 8 / 72));  // nominal; efficiency apart
  CHECK(gb3.node.host_time_factor == resolve_hardware("gb200").node.host_time_factor);
}

TEST_CASE("stack views: the kernel profile of the named stack, everything else shared") {
  const Hardware h = resolve_hardware("h100");
  const Hardware py = hardware_for_stack(h, "pytorch"), mg = hardware_for_stack(h, "megatron");
  CHECK(py.gpu.compute.attn_fwd_efficiency == h.gpu.compute.attn_fwd_efficiency);  // presets load "pytorch"
  CHECK(mg.gpu.compute.attn_fwd_efficiency == h.gpu.kernels.at("megatron").attn_fwd_efficiency);
  // The sustained fraction is the calibration's value of the named stack (one per stack, shared by every GPU).
  CHECK(sustained_fraction(mg) == h.calib.sustained_megatron);
  CHECK(sustained_fraction(py) == h.calib.sustained_pytorch);
  CHECK(mg.gpu.compute.fp8_cast_bytes_per_element == h.gpu.kernels.at("megatron").fp8_cast_bytes_per_element);
  CHECK(mg.gpu.compute.gemm_ceiling == h.gpu.compute.gemm_ceiling);
  CHECK(megatron_compute(h).gpu.compute.attn_bwd_seq_half == mg.gpu.compute.attn_bwd_seq_half);
  const std::string e = error_of([&] { (void)hardware_for_stack(h, "jax"); });
  CHECK(e.find("'jax'") != std::string::npos);
  CHECK(e.find("megatron") != std::string::npos);
}

TEST_CASE("JSON: bad input is one InputError naming the key") {
  auto err = [](const std::string& text) { return error_of([&] { (void)parse_hardware_json(text, "f.json"); }); };
  CHECK(err(R"({"base": "h100", "gpu": {"peak_bf16_tflop": 900}})").find("peak_bf16_tflop") != std::string::npos);
  CHECK(err(R"({"base": "h100", "gpux": {}})").find("gpux") != std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"tiers": [{"kind": "scale_up", "bandwidth": 1}]}})").find("bandwidth") !=
        std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"tiers": [{"kind": "scale_sideways"}]}})").find("scale_up, scale_out") !=
        std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"tiers": [{"name": "x"}]}})").find("kind") != std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"tiers": [{"kind": "scale_up"}, {"kind": "scale_up"}]}})").find("twice") !=
        std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"compute": {"gemm_ceilling": 0.5}}})").find("gemm_ceilling") != std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"kernels": {"jax": {}}}})").find("jax") != std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"kernels": {"pytorch": {"sustained_efficiency": 0}}}})")
            .find("gpu.kernels.pytorch.sustained_efficiency must be a fraction in (0, 1]") != std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"peak_bf16_tflops": 0}})").find("gpu.peak_bf16_tflops must be a number > 0") !=
        std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"peak_fp8_tflops": -1}})").find("peak_fp8_tflops") != std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"kernels": {"megatron": {"attn_head_dim_half": 0}}}})")
            .find("gpu.kernels.megatron.attn_head_dim_half must be a number > 0") != std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"compute": {"attn_block_overhead_tiles": -1}}})")
            .find("gpu.compute.attn_block_overhead_tiles must be") != std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"compute": {"gemm_ceiling": 1.5}}})").find("(0, 1]") != std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"arch": "volta"}})").find("ampere, hopper") != std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"tiers": [{"kind": "scale_out", "efficiency": -0.5}]}})")
            .find("node.scale_out.efficiency") != std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"gpus_per_node": 0}})").find("gpus_per_node") != std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"host_memory_gbytes_per_gpu": -1}})")
            .find("node.host_memory_gbytes_per_gpu must be a number > 0") != std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"host_link_gbytes_per_s": 0}})")
            .find("node.host_link_gbytes_per_s must be a number > 0") != std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"cpu_vendor": "via"}})").find("intel, amd, arm") != std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"tiers": [{"kind": "scale_up", "topology": "ring"}]}})")
            .find("switch, full_mesh") != std::string::npos);
  CHECK(err(R"({"base": "h100", "node": {"tiers": [{"kind": "scale_up", "topology": "full_mesh"}]}})")
            .find("full_mesh") != std::string::npos);
  CHECK(err(R"({"base": "h100", "collectives": {"protocols": ["LL", "turbo"]}})").find("ll, ll128, simple") !=
        std::string::npos);
  CHECK(err(R"({"base": "h100", "collectives": {"algorithms": []}})").find("non-empty") != std::string::npos);
  CHECK(err(R"({"base": "h100", "collectives": {"library": "mpi"}})").find("nccl or rccl") != std::string::npos);
  CHECK(err(R"({"base": "h100", "collectives": {"min_channels": 80}})").find("max_channels") != std::string::npos);
  CHECK(err(R"({"base": "h100", "gpu": {"peak_bf16_tflops": "fast"}})").find("must be a number") != std::string::npos);
  CHECK(err(R"({"base": "h100", "sources": {"gpu.hbm_gib": 80}})").find("gpu.hbm_gib") != std::string::npos);
  CHECK(err(R"({"base": "h900"})").find("h900") != std::string::npos);
  CHECK(err(R"({"gpu": {"name": "x"}})").find("missing key") != std::string::npos);  // no base: everything required
  CHECK(err(R"({"base": "h100", )").find("not valid JSON") != std::string::npos);
  // A tier the base lacks must be given in full.
  CHECK(err(R"({"base": "h100", "node": {"tiers": [{"kind": "scale_out", "name": "x"}]}})").find("missing key") ==
        std::string::npos);  // h100 has a scale-out tier: a partial override is fine
}

TEST_CASE("examples/hardware: every example file loads") {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(examples_dir())) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    const Hardware hw = resolve_hardware(entry.path().string());
    CHECK(hw.gpu.peak_bf16 > 0);
    ++n;
  }
  CHECK(n >= 4);
  // aws-p5: 32 EFA × 100 Gb/s = 400 GB/s per node = 50 GB/s per GPU.
  CHECK(resolve_hardware(examples_dir() + "/aws-p5.json").node.inter().bw_Bps_unidir == doctest::Approx(50e9));
}

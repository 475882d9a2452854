// Helpers for tests/measure: temporary files and small synthetic Kineto traces.
#pragma once
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace measure_test {

// A per-process scratch directory, removed when the test program exits.
inline std::filesystem::path temp_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() : path(std::filesystem::temp_directory_path() / ("parsim_measure_tests_" + std::to_string(::getpid()))) {
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

inline std::string write_text(const std::string& name, const std::string& text) {
  const auto p = temp_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

inline std::string write_gz(const std::string& name, const std::string& text) {
  const auto p = (temp_dir() / name).string();
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return p;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

inline std::string data(const std::string& rel) { return std::string(PARSIM_TEST_DATA) + "/" + rel; }

// A synthetic trace: events are added with helpers that mirror Kineto's shapes.
struct TraceBuilder {
  nlohmann::json events = nlohmann::json::array();
  nlohmann::json top = nlohmann::json::object();
  int next_corr = 1000;

  // A CPU launch (cudaLaunchKernel at `cpu_ts`) of a GPU event on stream 7, with ac2g flows; returns the correlation.
  int launch(const std::string& cat, const std::string& name, double ts, double dur, bool flows = true,
             const std::string& flow_cat = "ac2g", double cpu_ts = -1, nlohmann::json extra_args = {}) {
    const int corr = next_corr++;
    const double cts = cpu_ts >= 0 ? cpu_ts : ts - 5;
    events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 100}, {"tid", 100},
                      {"ts", cts}, {"dur", 2}, {"args", {{"External id", corr}, {"correlation", corr}}}});
    nlohmann::json args = {{"External id", corr}, {"correlation", corr}, {"stream", 7}, {"device", 0}};
    for (auto& [k, v] : extra_args.items()) args[k] = v;
    events.push_back({{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", ts}, {"dur", dur},
                      {"args", args}});
    if (flows) {
      events.push_back({{"ph", "s"}, {"id", corr}, {"pid", 100}, {"tid", 100}, {"ts", cts}, {"cat", flow_cat},
                        {"name", flow_cat}});
      events.push_back({{"ph", "f"}, {"id", corr}, {"pid", 0}, {"tid", 7}, {"ts", ts}, {"cat", flow_cat},
                        {"name", flow_cat}, {"bp", "e"}});
    }
    return corr;
  }
  // A GPU event nobody launched (no runtime call, no flow).
  void orphan(const std::string& cat, const std::string& name, double ts, double dur) {
    events.push_back({{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", ts}, {"dur", dur},
                      {"args", {{"stream", 7}, {"correlation", next_corr++}}}});
  }
  void step(int number, double ts, double dur) {
    events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(number)},
                      {"pid", 100}, {"tid", 100}, {"ts", ts}, {"dur", dur}});
  }
  void cpu_op(const std::string& name, double ts, double dur, nlohmann::json args = nlohmann::json::object()) {
    events.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 100}, {"tid", 100}, {"ts", ts},
                      {"dur", dur}, {"args", args}});
  }
  void memory(double ts, double allocated, double reserved, int device_type = 1) {
    events.push_back({{"ph", "i"}, {"cat", "cpu_instant_event"}, {"name", "[memory]"}, {"pid", 100}, {"tid", 100},
                      {"ts", ts}, {"s", "t"},
                      {"args", {{"Total Allocated", allocated}, {"Total Reserved", reserved}, {"Bytes", 1},
                                {"Device Type", device_type}, {"Device Id", 0}}}});
  }
  void distributed(int rank, int world) { top["distributedInfo"] = {{"backend", "nccl"}, {"rank", rank}, {"world_size", world}}; }
  std::string text() const {
    nlohmann::json j = top;
    j["schemaVersion"] = 1;
    j["deviceProperties"] = nlohmann::json::array({{{"id", 0}, {"name", "Test GPU"}}});
    j["traceEvents"] = events;
    return j.dump();
  }
};

}  // namespace measure_test

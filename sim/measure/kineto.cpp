#include "sim/measure/kineto.hpp"

#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"
#include "sim/core/file_io.hpp"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <istream>
#include <memory>
#include <streambuf>
#include <unordered_map>

namespace parsim::kineto {
namespace {

constexpr std::uint64_t kMaxTokenBytes = 64 * kMebibyte;  // one string or number (kernel names are a few KB)
constexpr int kMaxTraceDepth = 64;                         // traces nest 6 levels
constexpr std::int64_t kMaxRanks = std::int64_t{1} << 24;  // rank, world size, group sizes: 16,777,216 at most
constexpr double kMaxTimeUs = 1e18;                        // |ts|, dur in µs: 31,700 years
constexpr std::int64_t kMaxElements = std::int64_t{1} << 53;  // element counts: sizes stay exact in doubles and JSON

// ---- a std::streambuf that inflates as it is read ----------------------------------------------------------------
// gzread passes plain (uncompressed) files through unchanged, so one reader serves both.
// It also bounds what one JSON token may cost: the parser keeps a whole string or number in memory, so the handler
// marks the position after every token and a token longer than kMaxTokenBytes ends the read (a 1 GB string in a
// trace must not take 1 GB).
class GzStreamBuf : public std::streambuf {
public:
  explicit GzStreamBuf(gzFile f) : file_(f), buffer_(1 << 18) {}
  bool failed() const { return failed_; }
  bool token_too_long() const { return token_too_long_; }
  const std::string& message() const { return message_; }
  std::uint64_t bytes() const { return bytes_; }
  // Bytes handed to the parser so far.
  std::uint64_t consumed() const { return bytes_ - static_cast<std::uint64_t>(egptr() - gptr()); }
  void mark() { mark_ = consumed(); }
  std::uint64_t mark_position() const { return mark_; }

protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (failed_) return traits_type::eof();
    if (bytes_ - mark_ > kMaxTokenBytes) {
      failed_ = token_too_long_ = true;
      return traits_type::eof();
    }
    const int n = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    int err = Z_OK;
    const char* msg = gzerror(file_, &err);
    if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) {
      failed_ = true;
      message_ = msg ? msg : "read error";
      if (n <= 0) return traits_type::eof();
    }
    if (n <= 0) return traits_type::eof();
    bytes_ += static_cast<std::uint64_t>(n);
    setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

private:
  gzFile file_;
  std::vector<char> buffer_;
  bool failed_ = false, token_too_long_ = false;
  std::string message_;
  std::uint64_t bytes_ = 0, mark_ = 0;
};

struct GzCloser {
  void operator()(gzFile_s* f) const {
    if (f) gzclose(f);
  }
};

// ---- the SAX handler -------------------------------------------------------------------------------------------
enum class Role : std::uint8_t {
  Top, TraceEvents, Event, Args, DistInfo, PgConfigList, PgConfig, DeviceProps, DeviceProp, Other
};

// Fields of the event being read; reset at the start of every traceEvents entry.
struct Current {
  std::string ph, cat, name;
  Key pid = kNoKey, tid = kNoKey, id = kNoKey;
  double ts = NAN, dur = NAN;
  bool has_args = false;
  Key correlation = kNoKey, external_id = kNoKey;
  std::int64_t stream = -1;
  CommMeta meta;
  double total_allocated = NAN, total_reserved = NAN;
  std::int64_t device_type = -1;
  void reset() {
    ph.clear();
    cat.clear();
    name.clear();
    pid = tid = id = kNoKey;
    ts = dur = NAN;
    has_args = false;
    correlation = external_id = kNoKey;
    stream = -1;
    meta = CommMeta{};
    total_allocated = total_reserved = NAN;
    device_type = -1;
  }
};

// A scalar as the handler sees it, before it is stored in a field.
struct Scalar {
  enum Type { Null, Bool, Int, Float, String } type = Null;
  std::int64_t i = 0;
  double f = 0;
  const std::string* s = nullptr;
};

bool contains_ci(const std::string& hay, const char* needle) {
  const std::size_t n = std::strlen(needle);
  if (hay.size() < n) return false;
  for (std::size_t i = 0; i + n <= hay.size(); ++i) {
    std::size_t j = 0;
    while (j < n && std::tolower(static_cast<unsigned char>(hay[i + j])) == needle[j]) ++j;
    if (j == n) return true;
  }
  return false;
}

class Handler : public nlohmann::json_sax<nlohmann::json> {
public:
  Handler(TraceData& out, GzStreamBuf* buf) : out_(out), buf_(buf) {}

  std::string error;        // set by parse_error
  bool bare_array = false;  // the document is a bare array (Chrome's "JSON Array Format")

  bool null() override { return value(Scalar{}); }
  // Every callback ends a token: tell the stream buffer (bounded token length, see GzStreamBuf).
  void mark() {
    if (buf_) buf_->mark();
  }
  bool boolean(bool v) override {
    Scalar s;
    s.type = Scalar::Bool;
    s.i = v ? 1 : 0;
    return value(s);
  }
  bool number_integer(number_integer_t v) override {
    Scalar s;
    s.type = Scalar::Int;
    s.i = v;
    s.f = static_cast<double>(v);
    return value(s);
  }
  bool number_unsigned(number_unsigned_t v) override {
    Scalar s;
    if (v <= static_cast<number_unsigned_t>(INT64_MAX)) {
      s.type = Scalar::Int;
      s.i = static_cast<std::int64_t>(v);
    } else {
      s.type = Scalar::Float;
    }
    s.f = static_cast<double>(v);
    return value(s);
  }
  bool number_float(number_float_t v, const string_t&) override {
    Scalar s;
    s.type = Scalar::Float;
    s.f = v;
    return value(s);
  }
  bool string(string_t& v) override {
    Scalar s;
    s.type = Scalar::String;
    s.s = &v;
    return value(s);
  }
  bool binary(binary_t&) override { return value(Scalar{}); }

  bool start_object(std::size_t) override {
    if (!deeper()) return false;
    Role parent = stack_.empty() ? Role::Other : stack_.back();
    Role role = Role::Other;
    if (stack_.empty()) role = Role::Top;
    else if (parent == Role::TraceEvents) role = Role::Event;
    else if (parent == Role::Event && key_ == "args") role = Role::Args;
    else if (parent == Role::Top && key_ == "distributedInfo") role = Role::DistInfo;
    else if (parent == Role::PgConfigList) role = Role::PgConfig;
    else if (parent == Role::DeviceProps) role = Role::DeviceProp;
    if (role == Role::Event) {
      cur_.reset();
      ++out_.events;
    }
    if (role == Role::Args) cur_.has_args = true;
    if (role == Role::PgConfig) out_.process_groups.emplace_back();
    if (role == Role::DeviceProp) ++device_index_;
    stack_.push_back(role);
    key_.clear();
    return true;
  }
  bool end_object() override {
    mark();
    const Role role = stack_.back();
    stack_.pop_back();
    if (role == Role::Event) finish_event();
    key_.clear();
    return true;
  }
  bool start_array(std::size_t) override {
    if (!deeper()) return false;
    Role parent = stack_.empty() ? Role::Other : stack_.back();
    Role role = Role::Other;
    if (stack_.empty()) {  // a bare Chrome-trace array of events
      role = Role::TraceEvents;
      bare_array = true;
    }
    else if (parent == Role::Top && key_ == "traceEvents") role = Role::TraceEvents;
    else if (parent == Role::Top && key_ == "deviceProperties") role = Role::DeviceProps;
    else if (parent == Role::DistInfo && key_ == "pg_config") role = Role::PgConfigList;
    if (role == Role::TraceEvents) out_.has_trace_events = true;
    if (role == Role::DeviceProps) out_.has_device_properties = true;
    stack_.push_back(role);
    return true;
  }
  bool end_array() override {
    mark();
    stack_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    mark();
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error while parsing …" → the reason only
    const auto colon = what.find(": ", what.find("parse error"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    error = "JSON error at byte " + std::to_string(position) + ": " + what;
    return false;
  }

private:
  // Kineto traces nest 6 levels at most (traceEvents → event → args → a list of shapes → a shape); the reader's own
  // stack grows one entry per level, so a file of 100 million '[' must end here, not in memory exhaustion.
  bool deeper() {
    mark();
    if (stack_.size() < static_cast<std::size_t>(kMaxTraceDepth)) return true;
    error = "JSON nested deeper than " + std::to_string(kMaxTraceDepth) + " levels";
    return false;
  }

  Key key_of(const Scalar& s) {
    switch (s.type) {
      case Scalar::Int: return s.i;
      case Scalar::Float:
        if (std::isfinite(s.f) && s.f == std::floor(s.f) && std::fabs(s.f) < 4e18) return static_cast<Key>(s.f);
        return intern_key(std::to_string(s.f));
      case Scalar::String: return intern_key(*s.s);
      case Scalar::Bool: return s.i;
      default: return kNoKey;
    }
  }
  Key intern_key(const std::string& s) {
    auto it = key_strings_.find(s);
    if (it != key_strings_.end()) return it->second;
    const Key k = kStringKeyBase + static_cast<Key>(key_strings_.size());
    key_strings_.emplace(s, k);
    return k;
  }
  static double num(const Scalar& s) {
    if (s.type == Scalar::Int || s.type == Scalar::Float) return s.f;
    if (s.type == Scalar::String) {  // a few exporters write numbers as strings
      char* end = nullptr;
      const double v = std::strtod(s.s->c_str(), &end);
      if (end && *end == '\0' && end != s.s->c_str()) return v;
    }
    return NAN;
  }
  // An integer field (stream, rank, world size, group size, element counts): the value when it is a whole number in
  // [0, hi], else -1, the reader's "unknown" (a float such as 1e30 must not be cast: undefined behaviour).
  static std::int64_t int_of(const Scalar& s, std::int64_t hi = INT64_MAX) {
    if (s.type == Scalar::Int) return s.i >= 0 && s.i <= hi ? s.i : -1;
    const auto v = exact_int64(num(s));
    return v && *v >= 0 && *v <= hi ? *v : -1;
  }
  static std::string str(const Scalar& s) {
    if (s.type == Scalar::String) return *s.s;
    if (s.type == Scalar::Int) return std::to_string(s.i);
    return {};
  }

  bool value(const Scalar& s) {
    mark();
    if (stack_.empty()) return true;
    switch (stack_.back()) {
      case Role::Event: event_field(s); break;
      case Role::Args: arg_field(s); break;
      case Role::DistInfo:
        if (key_ == "rank") out_.rank = int_of(s, kMaxRanks);
        else if (key_ == "world_size") out_.world_size = int_of(s, kMaxRanks);
        else if (key_ == "backend") out_.backend = str(s);
        break;
      case Role::PgConfig: {
        auto& pg = out_.process_groups.back();
        if (key_ == "pg_name") pg.name = str(s);
        else if (key_ == "pg_desc") pg.desc = str(s);
        else if (key_ == "pg_size") pg.size = int_of(s, kMaxRanks);
        break;
      }
      case Role::DeviceProp:
        if (device_index_ == 1 && key_ == "name") out_.device_name = str(s);
        break;
      default: break;
    }
    return true;
  }

  void event_field(const Scalar& s) {
    if (key_ == "ph") cur_.ph = str(s);
    else if (key_ == "cat") cur_.cat = str(s);
    else if (key_ == "name") cur_.name = str(s);
    else if (key_ == "pid") cur_.pid = key_of(s);
    else if (key_ == "tid") cur_.tid = key_of(s);
    else if (key_ == "id") cur_.id = key_of(s);
    else if (key_ == "ts") cur_.ts = num(s);
    else if (key_ == "dur") cur_.dur = num(s);
  }

  void arg_field(const Scalar& s) {
    if (key_ == "correlation") cur_.correlation = key_of(s);
    else if (key_ == "External id") cur_.external_id = key_of(s);
    else if (key_ == "stream") cur_.stream = int_of(s);
    else if (key_ == "Collective name") cur_.meta.collective = str(s);
    else if (key_ == "dtype") cur_.meta.dtype = str(s);
    else if (key_ == "In msg nelems") cur_.meta.in_nelems = int_of(s, kMaxElements);
    else if (key_ == "Out msg nelems") cur_.meta.out_nelems = int_of(s, kMaxElements);
    else if (key_ == "Group size") cur_.meta.group_size = int_of(s, kMaxRanks);
    else if (key_ == "Process Group Name") cur_.meta.pg_name = str(s);
    else if (key_ == "Process Group Description") cur_.meta.pg_desc = str(s);
    else if (key_ == "Process Group Ranks") cur_.meta.pg_ranks = str(s);
    else if (key_ == "Total Allocated") cur_.total_allocated = num(s);
    else if (key_ == "Total Reserved") cur_.total_reserved = num(s);
    else if (key_ == "Device Type") cur_.device_type = int_of(s);
  }

  std::int32_t intern_name(const std::string& n) {
    auto it = names_.find(n);
    if (it != names_.end()) return it->second;
    const auto idx = static_cast<std::int32_t>(out_.names.size());
    out_.names.push_back(n);
    names_.emplace(n, idx);
    return idx;
  }

  std::int32_t store_meta() {
    out_.metas.push_back(cur_.meta);
    return static_cast<std::int32_t>(out_.metas.size() - 1);
  }

  void finish_event() {
    const std::string& ph = cur_.ph;
    const std::string& cat = cur_.cat;
    if (ph == "X") {
      const double ts = cur_.ts, dur = std::isfinite(cur_.dur) ? cur_.dur : 0.0;
      if (!std::isfinite(ts)) return;
      // A negative duration has no length to measure, and a time beyond ±10^18 µs (31,700 years) is not a clock
      // reading: such events are left out of every figure and counted (profile adds a note), so that they can
      // neither make compute time negative nor turn ts + dur into infinity.
      if (dur < 0 || std::fabs(ts) > kMaxTimeUs || dur > kMaxTimeUs) {
        ++out_.unusable_events;
        return;
      }
      GpuKind kind{};
      bool gpu = true;
      if (cat == "kernel" || cat == "Kernel") kind = GpuKind::Kernel;
      else if (cat == "gpu_memcpy" || cat == "Memcpy") kind = GpuKind::Memcpy;
      else if (cat == "gpu_memset" || cat == "Memset") kind = GpuKind::Memset;
      else gpu = false;
      if (gpu) {
        GpuEvent g;
        g.ts_us = ts;
        g.dur_us = dur;
        g.pid = cur_.pid;
        g.tid = cur_.tid;
        g.correlation = cur_.correlation;
        g.external_id = cur_.external_id;
        g.stream = cur_.stream;
        g.kind = kind;
        g.name = intern_name(cur_.name);
        if (cur_.meta.present()) g.meta = store_meta();
        out_.gpu.push_back(g);
        return;
      }
      if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") {
        RuntimeEvent r;
        r.ts_us = ts;
        r.pid = cur_.pid;
        r.tid = cur_.tid;
        r.correlation = cur_.correlation;
        r.external_id = cur_.external_id;
        r.graph_launch = cur_.name == "cudaGraphLaunch" || cur_.name == "hipGraphLaunch";
        if (!out_.seen_launch && contains_ci(cur_.name, "launch")) {
          out_.seen_launch = true;
          out_.link_by_correlation = cur_.correlation != kNoKey;
        }
        out_.runtime.push_back(r);
        return;
      }
      if (cur_.name == "record_param_comms") {
        ParamCommsEvent p;
        p.ts_us = ts;
        p.dur_us = dur;
        p.pid = cur_.pid;
        p.tid = cur_.tid;
        p.external_id = cur_.external_id;
        if (cur_.meta.present()) p.meta = store_meta();
        out_.param_comms.push_back(p);
        return;
      }
      if (cur_.name.rfind("ProfilerStep#", 0) == 0 && cat != "gpu_user_annotation") {
        StepAnnotation st;
        st.ts_us = ts;
        st.dur_us = dur;
        char* end = nullptr;
        const long long n = std::strtoll(cur_.name.c_str() + 13, &end, 10);
        st.number = (end && end != cur_.name.c_str() + 13) ? n : -1;
        out_.steps.push_back(st);
      }
      return;
    }
    if (ph == "s" || ph == "f") {
      const bool ac2g = cat == "ac2g";
      const bool legacy = cat == "async_cpu_to_gpu";
      if (!ac2g && !legacy) return;
      FlowEvent f;
      f.id = cur_.id;
      f.pid = cur_.pid;
      f.tid = cur_.tid;
      f.start = ph == "s";
      f.legacy = legacy;
      out_.flows.push_back(f);
      return;
    }
    if ((ph == "i" || ph == "I") && cur_.name == "[memory]") {
      if (cur_.device_type <= 0) return;  // 0 = CPU; CUDA is 1, HIP 6 (c10::DeviceType)
      out_.has_memory = true;
      if (std::isfinite(cur_.total_allocated) && cur_.total_allocated > out_.peak_allocated_bytes)
        out_.peak_allocated_bytes = cur_.total_allocated;
      if (std::isfinite(cur_.total_reserved) && cur_.total_reserved > out_.peak_reserved_bytes)
        out_.peak_reserved_bytes = cur_.total_reserved;
    }
  }

  TraceData& out_;
  GzStreamBuf* buf_;
  std::vector<Role> stack_;
  std::string key_;
  Current cur_;
  int device_index_ = 0;
  std::unordered_map<std::string, std::int32_t> names_;
  std::unordered_map<std::string, Key> key_strings_;
};

}  // namespace

TraceData read_trace(const std::string& path) {
  check_input_path(path, "trace file");  // missing, directory, socket: one line, before zlib sees it
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file) throw InputError("cannot open trace file '" + path + "'");
  gzbuffer(file.get(), 1 << 17);
  TraceData data;
  data.path = path;
  GzStreamBuf buf(file.get());
  std::istream in(&buf);
  Handler handler(data, &buf);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(in, &handler);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError("trace '" + path + "' could not be read: " + e.what());
  }
  if (buf.token_too_long())
    throw InputError("trace '" + path + "' holds a single JSON value longer than " + limit_text(kMaxTokenBytes) +
                     " starting at byte " + std::to_string(buf.mark_position()) +
                     " (the reader keeps one value in memory at a time and stops there)");
  if (buf.failed()) {
    std::string why = buf.message();  // zlib writes "<path>: <reason>"
    if (why.rfind(path + ": ", 0) == 0) why = why.substr(path.size() + 2);
    if (buf.bytes() > 0) why += " after " + std::to_string(buf.bytes()) + " bytes";
    throw InputError("trace '" + path + "' is corrupt or truncated gzip (" + why + ")");
  }
  if (!ok) {
    std::string why = handler.error.empty() ? std::string("not valid JSON") : handler.error;
    if (why.size() > 200) why = why.substr(0, 200) + "...";
    throw InputError("trace '" + path + "' is truncated or not valid JSON (" + why + ")");
  }
  if (!data.has_trace_events || (handler.bare_array && data.events == 0))
    throw InputError("'" + path + "' is not a PyTorch-profiler (Kineto) trace: it has no 'traceEvents' list");
  return data;
}

}  // namespace parsim::kineto

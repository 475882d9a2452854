#include "sim/core/file_io.hpp"

#include "sim/core/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace parsim {
namespace {

std::string quoted(const std::string& what, const std::string& path) { return what + " '" + path + "'"; }

// A short article for "the limit for a model file" / "an nccl-tests log".
std::string with_article(const std::string& what) {
  const bool vowel = !what.empty() && std::strchr("aeiouAEIOU", what.front()) != nullptr;
  return (vowel ? "an " : "a ") + what;
}

[[noreturn]] void too_large(const std::string& path, const std::string& what, std::uint64_t limit, const char* after) {
  throw InputError(quoted(what, path) + " is larger than " + limit_text(limit) + after + " (the limit for " +
                   with_article(what) + ")");
}

// The file-type part of an error, or "" when the type can be read.
std::string type_problem(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "is a directory, not a file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a file";
  return "";
}

class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

std::string gunzip(const std::string& raw, const std::string& path, const std::string& what, std::uint64_t limit) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InputError(quoted(what, path) + ": cannot initialise gzip");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = static_cast<uInt>(raw.size());  // raw.size() ≤ limit ≤ 1 GiB < 2^32
  std::string out;
  std::vector<char> buf(1 << 16);
  int rc = Z_OK;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      throw InputError(quoted(what, path) + " is corrupt or truncated gzip");
    }
    const std::size_t got = buf.size() - zs.avail_out;
    if (out.size() + got > limit) {
      inflateEnd(&zs);
      too_large(path, what, limit, " once decompressed");
    }
    out.append(buf.data(), got);
  } while (rc != Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

}  // namespace

std::string limit_text(std::uint64_t bytes) {
  constexpr std::uint64_t gib = kMebibyte * 1024;
  if (bytes >= gib && bytes % gib == 0) return std::to_string(bytes / gib) + " GiB";
  if (bytes >= kMebibyte && bytes % kMebibyte == 0) return std::to_string(bytes / kMebibyte) + " MiB";
  return std::to_string(bytes) + " bytes";
}

void check_input_path(const std::string& path, const std::string& what) {
  if (path.empty()) throw InputError(what + " path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) throw InputError(quoted(what, path) + " does not exist");
    throw InputError(quoted(what, path) + " cannot be read: " + std::strerror(e));
  }
  const std::string problem = type_problem(st);
  if (!problem.empty()) throw InputError(quoted(what, path) + " " + problem);
}

std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t limit) {
  check_input_path(path, what);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw InputError(quoted(what, path) + " cannot be read: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0) {  // the path may have changed since check_input_path
    const std::string problem = type_problem(st);
    if (!problem.empty()) throw InputError(quoted(what, path) + " " + problem);
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > limit) too_large(path, what, limit, "");
  }
  std::string raw;
  std::vector<char> buf(1 << 16);
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(quoted(what, path) + " cannot be read: " + std::strerror(errno));
    }
    if (n == 0) break;
    if (raw.size() + static_cast<std::size_t>(n) > limit) too_large(path, what, limit, "");
    raw.append(buf.data(), static_cast<std::size_t>(n));
  }
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b)
    return gunzip(raw, path, what, limit);
  return raw;
}

std::ofstream open_output_file(const std::string& path, const std::string& what) {
  if (path.empty()) throw InputError("cannot write " + what + ": the path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw InputError("cannot write " + quoted(what, path) + ": it is a directory");
  errno = 0;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) {
    const int e = errno;
    throw InputError("cannot write " + quoted(what, path) + ": " + (e ? std::strerror(e) : "it cannot be opened"));
  }
  return f;
}

void write_output_file(const std::string& path, const std::string& content, const std::string& what) {
  std::ofstream f = open_output_file(path, what);
  errno = 0;
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  f.flush();
  if (f) f.close();
  if (!f) {
    const int e = errno;
    throw InputError("cannot write " + quoted(what, path) + ": " + (e ? std::strerror(e) : "the write failed"));
  }
}

}  // namespace parsim

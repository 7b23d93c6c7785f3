#include "base/files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "base/diagnostics.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::string read_file(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw UserError(Location{path}, "", fmt::format("cannot read: {}", std::strerror(errno)));
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw UserError(Location{path}, "", fmt::format("cannot read: {}", std::strerror(err)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      throw UserError(Location{path}, "", fmt::format("file is larger than {} KiB; is this the right file?", max_bytes / 1024));
    }
  }
  ::close(fd);
  return out;
}

std::vector<std::string> tail_lines(const std::string& path, size_t max_bytes, long long from) {
  std::vector<std::string> lines;
  std::ifstream in(path, std::ios::binary);
  if (!in) return lines;
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) return lines;
  in.seekg(std::max({std::streamoff{0}, size - static_cast<std::streamoff>(max_bytes), static_cast<std::streamoff>(from)}));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string line;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      if (!line.empty()) lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string absolute_path(const std::string& p) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(p, ec);
  if (ec) return p;
  // "runs/x/" as "runs/x" (a shell's completion ends a folder with "/"):
  // its last name is the folder's, as a run's id is.
  std::filesystem::path n = abs.lexically_normal();
  if (!n.has_filename() && n.has_relative_path()) n = n.parent_path();
  return n.string();
}

namespace {

// `content` into a temporary file beside `path`, renamed over it; with
// `flush`, the data and the rename are on disk before it returns.
void replace_file(const std::string& path, const std::string& content, mode_t mode, bool flush) {
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  auto fail = [&](const char* what) {
    int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(tmpl.c_str());
    throw UserError(Location{path}, "", fmt::format("cannot write ({}): {}", what, std::strerror(err)));
  };
  if (fd < 0) throw UserError(Location{path}, "", fmt::format("cannot write: {}", std::strerror(errno)));
  for (size_t done = 0; done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write");
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, mode) != 0) fail("chmod");
  if (flush && ::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    fd = -1;
    fail("close");
  }
  fd = -1;
  if (::rename(tmpl.c_str(), path.c_str()) != 0) fail("rename");
  if (!flush) return;
  // Make the rename itself durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content, mode_t mode) {
  replace_file(path, content, mode, true);
}

bool write_file_exclusive(const std::string& path, const std::string& content) {
  const std::string aside = path + "." + std::to_string(::getpid()) + ".new";
  write_file_atomic(aside, content);
  int rc = ::link(aside.c_str(), path.c_str());
  int err = errno;
  std::error_code ec;
  fs::remove(aside, ec);
  if (rc == 0) return true;
  if (err == EEXIST) return false;
  throw UserError(Location{path}, "", std::string("cannot create it: ") + std::strerror(err));
}

FileBatch::FileBatch(std::string dir, mode_t mode) : dir_(std::move(dir)), mode_(mode) {}

void FileBatch::write(const std::string& name, const std::string& content) {
  fs::path target = fs::path(dir_) / name;
  std::string folder = target.parent_path().string();
  if (folder != made_) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) throw UserError(Location{folder}, "", "cannot create the folder for " + name + ": " + ec.message());
    made_ = folder;
  }
  replace_file(target.string(), content, mode_, false);
}

void FileBatch::commit() {
  int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::syncfs(fd) != 0) {
    int err = errno;
    if (fd >= 0) ::close(fd);
    throw UserError(Location{dir_}, "", fmt::format("cannot flush the files written there: {}", std::strerror(err)));
  }
  ::close(fd);
}

void write_files_atomic(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files,
                        mode_t mode) {
  FileBatch batch(dir, mode);
  for (const auto& [name, content] : files) batch.write(name, content);
  batch.commit();
}

ScratchDir::ScratchDir(const std::string& prefix) {
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec) {
    const char* env = std::getenv("TMPDIR");
    throw UserError(Location{env && *env ? env : "/tmp"}, "",
                    "no folder for temporary files (" + ec.message() + "); create it, or set TMPDIR to one");
  }
  std::string pattern = (tmp / (prefix + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw UserError(Location{pattern}, "", std::string("cannot create a scratch folder: ") + std::strerror(errno));
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ddpctl

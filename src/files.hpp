#pragma once
#include <string>
#include <sys/types.h>
#include <vector>

namespace ddpctl {

// Reads a whole file; throws UserError naming the path when it cannot be read
// or is larger than `max_bytes`.
std::string read_file(const std::string& path, size_t max_bytes = 1 << 20);

// The lines of a log's last `max_bytes` (logs can be large; the tail is what
// matters): '\n' and '\r' both end a line, empty lines are dropped. None when
// the file cannot be read.
// `from`: no byte before this offset (what a file held before an in-job
// restart appended to it).
std::vector<std::string> tail_lines(const std::string& path, size_t max_bytes = 4 << 20, long long from = 0);

// Writes `content` to `path` atomically: a temporary file in the same folder is
// written, flushed to disk and renamed over `path`, so readers see the old file
// or the new one, never a part. Throws UserError on failure.
void write_file_atomic(const std::string& path, const std::string& content, mode_t mode = 0644);

// `p` made absolute (against the working directory) and normalized; `p`
// itself when that cannot be done.
std::string absolute_path(const std::string& p);

// A fresh folder under the system's temporary directory (prefix-XXXXXX),
// removed with everything in it when this goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ddpctl

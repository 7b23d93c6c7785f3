#include "progress_file.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <unistd.h>

namespace ddptrain {

namespace {

void write_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) return;  // progress is best effort; training goes on
  }
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace

void ProgressFile::update(const char* phase, int epoch, long step, long steps, double rate, double eta, bool force) {
  if (path_.empty()) return;
  if (!force && seconds_since(last_) < 0.25) return;
  last_ = Clock::now();
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"phase\": \"%s\", \"epoch\": %d, \"epochs\": %d, \"step\": %ld, \"steps\": %ld, "
                "\"samples_per_s\": %.1f, \"eta_s\": %.0f, \"updated\": %ld",
                phase, epoch, epochs_, step, steps, rate, eta, static_cast<long>(std::time(nullptr)));
  write_atomic(path_, buf + rank_work_ + "}\n");
}

void ProgressFile::set_rank_work(const double* work, int world) {
  if (path_.empty()) return;
  rank_work_ = ", \"rank_work_s\": [";
  char num[32];
  for (int r = 0; r < world; ++r) {
    std::snprintf(num, sizeof num, "%s%.3f", r ? ", " : "", work[r]);
    rank_work_ += num;
  }
  rank_work_ += "]";
}

}  // namespace ddptrain

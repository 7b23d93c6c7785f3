#include "memory_sampler.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

namespace ddptrain {

long rss_mib() {
  static const long page = sysconf(_SC_PAGESIZE);
  std::ifstream statm("/proc/self/statm");
  long size = 0, rss = 0;
  if (statm >> size >> rss) return rss * page / (1 << 20);
  return -1;
}

double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

MemorySampler::MemorySampler(std::function<long()> read_mib)
    : read_mib_(std::move(read_mib)), thread_([this] { run(); }) {}

MemorySampler::~MemorySampler() {
  done_ = true;
  thread_.join();
}

MemorySampler::Stats MemorySampler::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s;
  long n = 0, best = 0;
  double sum = 0;
  for (auto& [mib, count] : hist_) {
    s.peak_mib = std::max(s.peak_mib, static_cast<double>(mib));
    sum += static_cast<double>(mib) * static_cast<double>(count);
    n += count;
    if (count > best) best = count, s.mode_mib = static_cast<double>(mib);
  }
  if (n) s.avg_mib = sum / static_cast<double>(n);
  return s;
}

void MemorySampler::run() {
  while (!done_) {
    long mib = read_mib_();
    if (mib >= 0) {
      std::lock_guard<std::mutex> lock(mu_);
      hist_[mib]++;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace ddptrain

#pragma once
// This process's memory for rank 0's metrics: sampled every 100 ms by a
// thread (peak, average and most common value), and its peak so far. On CPU
// the resident set, read here; on CUDA the caching allocator's bytes, which
// the caller reads (compat::cuda_memory), so that this file needs no LibTorch.
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace ddptrain {

// The resident set in MiB now (/proc/self/statm), or -1 when unreadable.
long rss_mib();
// The peak resident set in MiB (getrusage).
double peak_rss_mib();

class MemorySampler {
 public:
  // Samples `read_mib` (MiB now, or -1 for no sample) until destroyed.
  explicit MemorySampler(std::function<long()> read_mib);
  ~MemorySampler();
  MemorySampler(const MemorySampler&) = delete;
  MemorySampler& operator=(const MemorySampler&) = delete;
  struct Stats {
    double peak_mib = 0, avg_mib = 0, mode_mib = 0;
  };
  Stats stats();

 private:
  void run();
  std::function<long()> read_mib_;
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::map<long, long> hist_;
  std::thread thread_;
};

}  // namespace ddptrain

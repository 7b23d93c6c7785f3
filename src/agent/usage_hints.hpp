#pragma once
// The guides' troubleshooting over a job's usage samples (docs/running.md):
// a job bound by its input, short of memory or of GPU memory, said in words
// beside status's usage (and the watchdog's log).
#include <map>
#include <string>
#include <vector>

#include "runs/usage.hpp"

namespace ddpctl {

// The guides' troubleshooting over a job's recent samples (every node).
struct Hint {
  std::string kind;  // input-bound, memory, gpu-memory
  std::string node;
  std::string text;
};
// `window_s`: how far back a rule looks (minutes, so a passing dip is no news).
std::vector<Hint> usage_hints(const std::map<std::string, std::vector<UsageSample>>& samples, double now,
                              double window_s = 180);

}  // namespace ddpctl

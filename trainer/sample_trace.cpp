#include "sample_trace.hpp"

#include <unistd.h>

namespace ddptrain {

SampleTrace::SampleTrace(const std::string& prefix, int rank) {
  if (!prefix.empty())
    out_.open(prefix + ".rank" + std::to_string(rank) + "." + std::to_string(getpid()), std::ios::app);
}

void SampleTrace::add(int epoch, const std::vector<size_t>& indices) {
  if (!out_.is_open()) return;
  pending_ += std::to_string(epoch);
  for (size_t i : indices) pending_ += " " + std::to_string(i);
  pending_ += "\n";
}

void SampleTrace::step_done() {
  if (!out_.is_open()) return;
  out_ << pending_ << std::flush;
  pending_.clear();
}

}  // namespace ddptrain

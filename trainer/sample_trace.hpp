#pragma once
// --trace-samples (tests): one line "EPOCH IDX..." per micro-batch, appended
// to PREFIX.rank<R>.<pid> once its optimizer step is done, so a stopped run
// lists what it trained on.
#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

namespace ddptrain {

class SampleTrace {
 public:
  // An empty `prefix` traces nothing.
  SampleTrace(const std::string& prefix, int rank);
  // A micro-batch of `epoch` (counted from 1) trained on these samples.
  void add(int epoch, const std::vector<size_t>& indices);
  // Its optimizer step is done: the lines since the last step go out.
  void step_done();

 private:
  std::ofstream out_;
  std::string pending_;
};

}  // namespace ddptrain

#pragma once
// A reader for the pickles torch.distributed's Flight Recorder writes
// (docs/running.md "Flight Recorder"): plain dicts, lists, tuples, strings,
// ints, floats, bools and None, as protocol 2 to 5 spell them. Anything else
// (a class, a reduce, bytes, persistent ids) is refused with the opcode and
// its byte offset: nothing in a dump calls code, and this runs nothing. A
// C++ reader, so that `ddpctl` reads dumps on a login host without torch or
// Python.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace ddpctl {

class PickleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Tuples become arrays; a dict's keys must be strings or ints (an int key
// becomes its decimal text). A truncated pickle (a dump still being
// written) is a PickleError that says "truncated".
nlohmann::json read_pickle(std::string_view data);

}  // namespace ddpctl

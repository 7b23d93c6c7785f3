#pragma once
// --json-into FILE (submit, race, sweep, status --watch; docs/json.md): the
// human view stays on the terminal, and the events of the runs the command
// makes (from their first) or shows (from when it first shows them) go
// into FILE as `ddpctl events` prints them, a cursor on each line, while
// the command runs; what is left is written before it ends. FILE is
// appended to: a program may read it as it grows.
#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runs/events.hpp"

namespace ddpctl::cli {

class JsonInto {
 public:
  explicit JsonInto(const std::string& file);
  ~JsonInto();
  JsonInto(const JsonInto&) = delete;
  JsonInto& operator=(const JsonInto&) = delete;
  // Follows the run at `run_dir`: all its events, or only those after now.
  void follow(const std::string& run_dir, bool from_start);
  // Writes what is left and stops.
  void finish();

 private:
  void loop();
  void drain();
  std::string file_;
  std::ofstream out_;
  std::mutex mutex_;
  std::map<std::string, std::pair<std::string, EventPosition>> runs_;  // by run id: its folder, where it is read to
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int observer_ = 0;
};

// Starts the process's --json-into (the option's parse calls it); one per process.
void start_json_into(const std::string& file);
// The process's, or nullptr.
JsonInto* json_into();
// Drains and ends it (app.cpp, as the command ends).
void finish_json_into();

}  // namespace ddpctl::cli

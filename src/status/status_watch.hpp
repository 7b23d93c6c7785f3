#pragma once
// `ddpctl status` as it is printed, and its --watch loop: each poll's report
// becomes a StatusFrame (the lines shown, and per row what identifies it and
// what counts as news), and watch_status decides from one frame to the next
// what the screen shows and how long to wait. The CLI (src/cli/status.cpp)
// supplies the poll and says whether stdout is a terminal; unit tests run the
// loop on a fake clock over the fake Slurm.
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "status/status.hpp"

namespace ddpctl {

// The longest wait between two polls of --watch while nothing changes.
constexpr double kWatchMaxPollS = 30;

struct StatusFrame {
  std::vector<std::string> lines;       // the table, header first; or the JSON, or the one "no runs" line
  std::vector<std::string> keys, news;  // per row (lines[i + 1]): what identifies it, what counts as a change
  bool all_done = true;                 // every job shown has ended
};

// The report as `status` prints it: with request.json the rows' JSON, else
// the table (its STATE cells coloured by `paint`), the line on older runs
// and, for named runs, what code each runs and what each job ran with.
StatusFrame status_frame(const StatusReport& report, const StatusRequest& request,
                         const std::function<std::string(const std::string&, Tone)>& paint);

struct StatusWatch {
  std::function<StatusFrame()> poll;  // one refresh (its warnings are its own to print)
  // On a terminal the frame is redrawn in place (like watch); into a file or
  // a pipe, the first table is printed whole and then only the rows that
  // changed (state, reason, progress, nodes), each as it changed.
  bool terminal = false;
  bool json = false;   // off a terminal, JSON is printed whole at each poll
  double poll_s = 2;   // the wait while something changes (PollBackoff)
};

// Polls until a frame says every job has ended, printing onto `out`; waits
// on `clock`, slower while nothing changes (clock.hpp's PollBackoff).
void watch_status(const StatusWatch& watch, Clock& clock, std::ostream& out);

}  // namespace ddpctl

#pragma once
// A run's events (docs/json.md "Events"): what happened to it, in the order
// it happened, for programs to follow: <run dir>/events.ndjson, one JSON
// object a line, appended where each fact happens (submit's ledger writes,
// cancel, a race's claim and the coordinator's grants, the job's agent on
// any node) and never rewritten.
//
// Each event: {"schema": "ddpctl.event/1", "seq": N, "time": ISO-8601 UTC,
// "t": Unix seconds, "type": ..., "run": id} and the keys the documents use
// for what it is about (job, attempt, shape, cell, site, cluster) and its
// own. `seq` counts the run's events from 1 with no gap: each writer takes
// events.lock (flock), reads the last event's number, and appends its line
// with one write. A writer that died mid-line (a node crashed) leaves a torn
// line: the next writer ends it first, and a reader skips it and says so.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

// What an event says happened; each type's name never changes (programs
// match on it).
enum class EventType {
  Submitting,       // the ledger's intent: sbatch is about to run
  Submitted,        // sbatch's answer: the job id (or rejected: why)
  CancelAsked,      // cancel was asked of the job
  RaceWon,          // a shape won its group's claim
  RaceLost,         // a shape stood down: another won, or the coordinator stood its site down
  Granted,          // across sites: the coordinator granted a job
  StoodDown,        // across sites: a site told to stand down
  RoundOpened,      // across sites: a re-race after the winner was requeued
  Started,          // an attempt of the job started training (its first node's agent)
  NodeCheckFailed,  // the node check found a node unfit
  FabricChecked,    // the fabric check's figures and verdict (fabric_check.hpp)
  NodeExcluded,     // a node left out of the next attempt or step
  Stalled,          // the watchdog found the job stalled (with the culprit rank when named)
  Straggler,        // the watchdog named a slow rank
  Restarted,        // the in-job restart started the step again (on a spare)
  Preempted,        // Slurm's preemption reached the step
  Requeued,         // the job is requeued (why)
  Resumed,          // training resumed from a checkpoint's step
  Progress,         // training's progress, at most one a minute a job
  Metric,           // a metric line the job wrote
  Ended,            // the job ended for good, with the reason status gives
  RunEnded,         // every job of the run ended
};
const std::vector<EventType>& event_types();
std::string event_type_name(EventType t);  // "submitted", "node_check_failed", ...
std::optional<EventType> parse_event_type(const std::string& name);

// The log of the run at `run_dir`.
std::string events_path(const std::string& run_dir);

// Told of every event this process appends, after it is written: a
// command in JSON mode states what it did from them (the runs and jobs it
// made, the jobs it asked to cancel). nullptr: none.
using EventObserver = std::function<void(const std::string& run_dir, const nlohmann::json& event)>;
// Returns what stops it (remove_event_observer).
int add_event_observer(EventObserver observer);
void remove_event_observer(int id);

// Now, in Unix seconds (the events' clock: the wall clock of the writer).
double event_now();

// Appends one event of `type` with `fields` (the run's id is taken from the
// folder's name) at `t` (Unix seconds; < 0: now, taken under the lock so
// that time never goes back as seq rises); returns its seq. Throws
// UserError when the log cannot be written.
long long append_event(const std::string& run_dir, EventType type, nlohmann::json fields, double t = -1);
// As append_event, but only the first call with `once_key` in this run
// writes it (an end found by every status that looks): returns 0 for the
// others. The keys are kept as files in events.once/.
long long append_event_once(const std::string& run_dir, const std::string& once_key, EventType type,
                            const nlohmann::json& fields, double t = -1);
// Whether the event of `once_key` was written (append_event_once).
bool event_written_once(const std::string& run_dir, const std::string& once_key);
// As append_event, never throwing: false when it could not be written (a
// watcher's event is never the job's failure). An empty `run_dir` (a job
// ddpctl did not submit) writes nothing.
bool try_append_event(const std::string& run_dir, EventType type, const nlohmann::json& fields, double t = -1);

// What reading a log from a byte offset gives: the whole events after it,
// the torn or damaged lines skipped (each said with its offset), and the
// offset to read on from (the start of a last line not yet ended).
struct EventsRead {
  std::vector<nlohmann::json> events;
  std::vector<long long> ends;  // each event's end: the offset after its line
  std::vector<std::string> skipped;
  long long next_offset = 0;
};
// At most `max_bytes` are read (events split across the limit wait for the
// next read): a follower of a large log reads it in constant memory.
EventsRead read_events(const std::string& run_dir, long long from_offset, long long max_bytes = 1 << 20);

// The byte offset of the event after `seq` (0 for seq 0), found by reading
// the log from its start in chunks; nullopt when the log has no event
// `seq` (of another run, or not yet written).
std::optional<long long> offset_after(const std::string& run_dir, long long seq);

// The newest event's seq (0: none).
long long last_event_seq(const std::string& run_dir);

// Where a follower of several runs' events is (ddpctl events): per run id,
// the seq of the last event it got and the offset after its line.
struct EventPosition {
  long long seq = 0, offset = 0;
  // Which log: its first event's time in ms (0: none yet). A log that was
  // replaced or cut has another: the cursor's place is gone from it.
  long long origin = 0;
};
using EventCursor = std::map<std::string, EventPosition>;
// The log's origin (EventPosition::origin): its first event's time in ms.
long long event_log_origin(const std::string& run_dir);
// Opaque to programs: "c1." and base64url of {"RUN": [seq, offset, origin], ...}.
std::string encode_cursor(const EventCursor& c);
// A UserError naming --since when `text` is no cursor of encode_cursor's.
EventCursor decode_cursor(const std::string& text);

}  // namespace ddpctl

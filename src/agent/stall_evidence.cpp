#include "agent/stall_evidence.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <optional>

#include "agent/culprit.hpp"
#include "agent/stacks_file.hpp"
#include "agent/flight_recorder.hpp"
#include "agent/flight_recorder_pipe.hpp"
#include "agent/job_stacks.hpp"
#include "agent/log_folder.hpp"
#include "base/files.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

bool recorded(const StallRecord& record, const std::string& path) {
  return std::find(record.stacks.begin(), record.stacks.end(), path) != record.stacks.end();
}

// The Flight Recorder's dumps of the ranks the samplers asked (their
// stacks files say which), into the record; its verdict when the stacks
// name no culprit.
void gather_flight_recorder(const StallEvidenceAsk& o, Clock& clock, double asked_at,
                            const std::map<int, FileId>& before, const CulpritVerdict* stacks, StallRecord& record) {
  if (o.fr_dump_prefix.empty()) return;
  std::vector<FrAsk> asks;
  for (const auto& node : o.nodes) {
    std::string path = stacks_path(o.log_base, o.attempt, node);
    if (!recorded(record, path)) continue;
    try {
      for (auto& a : read_fr_asks(read_file(path, 16 << 20), node)) asks.push_back(a);
    } catch (const std::exception&) {
    }
  }
  std::map<int, std::string> nodes;
  std::vector<int> asked, not_asked;
  std::map<PipeAsk, std::vector<int>> by_outcome;
  for (const auto& a : asks) {
    nodes[a.rank] = a.node;
    (a.outcome == PipeAsk::Asked ? asked : not_asked).push_back(a.rank);
    by_outcome[a.outcome].push_back(a.rank);
  }
  if (asks.empty()) {
    record.flight_recorder = "no rank was asked for a dump (no dump pipe to ask, or no node's agent answered)";
  } else if (asked.empty()) {
    std::vector<std::string> why;
    for (const auto& [outcome, ranks] : by_outcome) why.push_back(describe_rank_numbers(ranks, nodes) + ": " + pipe_ask_name(outcome));
    record.flight_recorder =
        by_outcome.size() == 1 && by_outcome.count(PipeAsk::NoPipe)
            ? "no dumps: no rank has a dump pipe (its torch has no Flight Recorder, as 1.13, or no process group yet)"
            : "no dumps: " + join(why, "; ");
  } else {
    double wait_s = std::max(kFlightRecorderGrace, asked_at + kFlightRecorderWait - clock.monotonic());
    FrCollected got = collect_fr_dumps(o.fr_dump_prefix, asked, before, clock, wait_s);
    record.flight_recorder_count = fmt::format("{} of {} ranks dumped", got.dumps.size(), asks.size());
    record.flight_recorder_dumps = got.paths;
    std::vector<int> missing = got.missing;
    missing.insert(missing.end(), not_asked.begin(), not_asked.end());
    for (const auto& p : got.problems) std::cerr << "ddpctl: watchdog: flight recorder: " << p << "\n";
    if (got.dumps.empty()) {
      record.flight_recorder = fmt::format("no dump within {:.0f}s of the ask", clock.monotonic() - asked_at);
    } else {
      FrVerdict v = analyze_flight_recorder(got.dumps, missing, nodes);
      record.flight_recorder = v.text;
      if (auto named = flight_recorder_culprit(stacks ? *stacks : CulpritVerdict{}, v, nodes)) {
        record.flight_recorder_named = true;
        record.stopped.clear();
        for (const auto& r : named->culprits) record.stopped.push_back({r.task, r.rank, r.node});
      }
    }
  }
  std::string dir = o.fr_dump_prefix.substr(0, o.fr_dump_prefix.rfind('/') + 1);
  std::cerr << fmt::format("ddpctl: watchdog: flight recorder{}: {}{}\n",
                           record.flight_recorder_count.empty() ? "" : ": " + record.flight_recorder_count,
                           record.flight_recorder, record.flight_recorder_dumps.empty() ? "" : " (dumps in " + dir + ")");
}

// Who hung it, from the stacks; recorded before the act.
std::optional<CulpritVerdict> decide_from_stacks(const StallEvidenceAsk& o, const Observation& last,
                                                 StallRecord& record) {
  std::vector<RankEvidence> ranks;
  for (const auto& node : o.nodes) {
    std::string path = stacks_path(o.log_base, o.attempt, node);
    if (!recorded(record, path)) continue;
    try {
      for (auto& r : read_stacks_file(read_file(path, 16 << 20), node)) ranks.push_back(std::move(r));
    } catch (const std::exception& e) {
      std::cerr << "ddpctl: watchdog: error: cannot read " << path << " (" << e.what() << ")\n";
    }
  }
  for (auto& r : ranks)
    for (const auto& t : last.tasks)
      if (t.node == r.node && (r.rank ? t.rank == r.rank : t.task == r.task)) r.cpu_pct = t.cpu_pct;
  std::optional<CulpritVerdict> c;
  if (!ranks.empty()) {
    c = decide_culprit(ranks);
    record.culprit = c->text;
    record.stacks_by = describe_stack_sources(ranks);
    record.culprit_named = c->kind == CulpritKind::Named;
    if (record.culprit_named) {
      record.stopped.clear();
      for (const auto& r : c->culprits) record.stopped.push_back({r.task, r.rank, r.node});
    }
  }
  return c;
}

}  // namespace

// What every rank was doing, before they are killed: each node's sampler
// dumps its node's ranks when the request file appears.
bool gather_stall_evidence(const StallEvidenceAsk& o, const Observation& last, Clock& clock, double now,
                           StallRecord& record) {
  // The dumps already there: only one written after the ask counts.
  std::map<int, FileId> fr_before;
  if (!o.fr_dump_prefix.empty()) fr_before = existing_dumps(o.fr_dump_prefix);
  double asked_at = clock.monotonic();
  try {
    write_file_atomic(stacks_request_path(o.log_base, o.attempt), fmt::format("{}\n", now));
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: watchdog: error: cannot ask for the stacks (" << e.what() << ")\n";
    return false;
  }
  auto all_written = [&] {
    revalidate_folder(o.log_base);
    for (const auto& n : o.nodes)
      if (file_stat(stacks_path(o.log_base, o.attempt, n)).size <= 0) return false;
    return true;
  };
  double until = clock.monotonic() + o.stacks_wait_s;
  while (clock.monotonic() < until && !all_written()) clock.sleep(0.25);
  for (const auto& n : o.nodes) {
    std::string path = stacks_path(o.log_base, o.attempt, n);
    if (file_stat(path).size > 0) record.stacks.push_back(path);
  }
  if (record.stacks.size() < o.nodes.size())
    std::cerr << fmt::format("ddpctl: watchdog: stacks recorded on {} of {} node(s) within {:.0f}s\n",
                             record.stacks.size(), o.nodes.size(), o.stacks_wait_s);
  std::optional<CulpritVerdict> c = decide_from_stacks(o, last, record);
  gather_flight_recorder(o, clock, asked_at, fr_before, c ? &*c : nullptr, record);
  return true;
}

}  // namespace ddpctl

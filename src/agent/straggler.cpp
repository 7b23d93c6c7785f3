// The watchdog's straggler monitor (straggler.hpp): the loop that reads the
// ranks' work, decides and keeps the record, and which nodes a requeue leaves out.
#include "agent/straggler.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <sys/stat.h>

#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/job_files.hpp"

namespace ddpctl {

std::vector<std::string> slow_nodes_to_exclude(const std::vector<SlowRank>& named, const std::vector<std::string>& nodes,
                                               std::string* note) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (std::any_of(named.begin(), named.end(), [&](const SlowRank& s) { return s.id.node == n; })) out.push_back(n);
  if (!out.empty() && out.size() == nodes.size()) {
    if (note)
      *note = nodes.size() == 1 ? "its only node is not excluded"
                                : "every node has a slow rank: the ranks, not the nodes, are slower; none is excluded";
    return {};
  }
  return out;
}

double straggler_window(double slow_after_s, double interval_s) {
  return std::max({slow_after_s / 5, 4 * interval_s, 10.0});
}

StragglerMonitor::StragglerMonitor(StragglerOptions o, double started_at)
    : o_(std::move(o)), started_at_(started_at), window_(straggler_window(o_.slow_after_s, o_.interval_s)),
      watch_(o_.slow_after_s) {
  record_.attempt = o_.attempt;
  record_.slow_after_s = o_.slow_after_s;
  record_.exclude = o_.exclude;
}

void StragglerMonitor::save() {
  try {
    write_file_atomic(job_files::slow(o_.log_base), slow_record_json(record_).dump() + "\n");
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: watchdog: error: the slow ranks' record could not be written (" << e.what()
              << "); the watchdog goes on\n";
  }
  saved_at_ = record_.updated;
}

void StragglerMonitor::say_named(double now) {
  for (const auto& r : record_.slow)
    if (said_.insert(r.id.key()).second)
      job_event(events_, EventType::Straggler,
                {{"rank", r.id.key()}, {"node", r.id.node}, {"speed", r.speed}, {"reason", describe_slow(record_, now)}});
}

void StragglerMonitor::tick(double now) try {
  std::optional<std::vector<RankWork>> reading;
  auto use = [&](SpeedBasis b) {
    if (basis_ != b) {  // the trainer's own numbers from now on (or, first, the samples')
      window_.clear();
      watch_.reset();
      basis_ = b;
    }
  };
  // The bundled trainer's numbers, once this attempt's progress file has them.
  std::string progress = job_files::progress(o_.log_base);
  struct stat st {};
  if (::stat(progress.c_str(), &st) == 0) {
    double mtime = static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9;
    if (mtime >= started_at_ - 5 && mtime != progress_mtime_) {
      progress_mtime_ = mtime;
      std::optional<std::vector<double>> work;
      try {
        work = progress_rank_work(read_file(progress, 4 << 20));
      } catch (const std::exception&) {
      }
      if (work && work->size() >= 2) {
        use(SpeedBasis::TrainerWork);
        size_t world = work->size(), nodes = std::max<size_t>(1, o_.nodes.size());
        std::vector<RankCounter> counters;
        for (size_t r = 0; r < world; r++) {
          // ddpctl's launch puts the same number of ranks on every node, in order.
          size_t node = std::min(nodes - 1, r * nodes / world);
          RankId id{o_.per_gpu ? static_cast<int>(r) : static_cast<int>(node), static_cast<int>(r),
                    node < o_.nodes.size() ? o_.nodes[node] : ""};
          counters.push_back({id, (*work)[r], mtime});
        }
        reading = window_.push(mtime, counters);
      }
    }
  }
  if (basis_ != SpeedBasis::TrainerWork) {
    std::vector<RankCounter> counters = samples_.add(read_usage(o_.log_base, o_.attempt, 64 << 10));
    if (counters.size() >= 2) {
      use(SpeedBasis::CpuDemand);
      reading = window_.push(now, counters);
    }
  }
  if (!reading || !basis_) return;
  StragglerVerdict v = watch_.observe(now, *basis_, *reading);
  if (v.speeds.empty()) return;
  record_.basis = speed_basis_name(*basis_);
  record_.updated = now;
  record_.speeds = v.speeds;
  record_.slow = v.named;
  record_.recovered = watch_.recovered();
  record_.exclude_note.clear();
  record_.exclude_nodes = slow_nodes_to_exclude(v.named, o_.nodes, &record_.exclude_note);
  if (v.changed) {
    std::string now_slow = describe_slow(record_, now);
    std::cerr << "ddpctl: watchdog: " << (now_slow.empty() ? "no rank is slow any more" : "slow: " + now_slow) << '\n';
    say_named(now);
  }
  if (v.changed || !have_reading_ || now - saved_at_ >= 60) save();
  have_reading_ = true;
} catch (const std::exception& e) {
  // Never the end of the stall watch: said, and tried again at the next look.
  std::cerr << "ddpctl: watchdog: error: the ranks' speeds could not be read (" << e.what() << ")\n";
}

}  // namespace ddpctl

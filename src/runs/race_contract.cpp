#include "runs/race_contract.hpp"

#include <fmt/format.h>
#include <sstream>

#include "slurm/slurm_job.hpp"

namespace ddpctl {

namespace {

struct FileRow {
  RaceFile file;
  const char* var;   // render's race_<var>, fixed whatever the name
  const char* name;  // on disk: a name, or a prefix before a job id, label or number
};
const FileRow kFiles[] = {
    {RaceFile::Claim, "claim", "claim"},
    {RaceFile::Winner, "winner", "winner"},
    {RaceFile::Jobs, "jobs", "jobs"},
    {RaceFile::Generation, "gen", "gen."},
    {RaceFile::Why, "why", "why"},
    {RaceFile::Cancelled, "cancelled", "cancelled."},
    {RaceFile::StoodDown, "stood_down", "stood-down."},
    {RaceFile::Ranking, "ranking", "ranking.json"},
    {RaceFile::Gate, "gate", "gate"},
    {RaceFile::GateSite, "gate_site", "site.json"},
    {RaceFile::Round, "round", "round."},
    {RaceFile::Opened, "opened", "opened"},
    {RaceFile::AtGate, "at", "at."},
    {RaceFile::Grant, "grant", "grant"},
    {RaceFile::StandDown, "stand_down", "stand-down"},
    {RaceFile::Passed, "passed", "passed."},
    {RaceFile::Timeout, "timeout", "timeout."},
};

const FileRow& row_of(RaceFile f) {
  for (const auto& r : kFiles)
    if (r.file == f) return r;
  return kFiles[0];
}

}  // namespace

const std::vector<RaceFile>& race_files_in_table() {
  static const std::vector<RaceFile> all = [] {
    std::vector<RaceFile> v;
    for (const auto& r : kFiles) v.push_back(r.file);
    return v;
  }();
  return all;
}

std::string race_file_name(RaceFile f) { return row_of(f).name; }
std::string race_file_var(RaceFile f) { return row_of(f).var; }

std::string race_event_line(const RaceLine& l) {
  return fmt::format("{} {} {:.3f} {}", l.job_id, l.label, l.at, l.attempt);
}

std::optional<RaceLine> parse_race_event_line(const std::string& text) {
  std::istringstream in(text);
  RaceLine l;
  std::string second;
  if (!(in >> l.job_id >> second) || !is_slurm_job_id(l.job_id)) return std::nullopt;
  // "<job> <time>" (cancelled.<id>) or "<job> <label> <time> [<attempt>]".
  try {
    size_t used = 0;
    double t = std::stod(second, &used);
    if (used == second.size()) {
      l.at = t;
      return l;
    }
  } catch (const std::exception&) {
  }
  l.label = second;
  if (!(in >> l.at)) return std::nullopt;
  int attempt = 0;
  if (in >> attempt) l.attempt = attempt;
  return l;
}

std::string cancelled_line(const std::string& job_id, double at) { return fmt::format("{} {:.3f}", job_id, at); }

std::string grant_line(const GrantLine& g) { return fmt::format("{} {} {:.3f}", g.job_id, g.site, g.at); }

std::optional<GrantLine> parse_grant_line(const std::string& text) {
  std::istringstream in(text);
  GrantLine g;
  if (!(in >> g.job_id >> g.site >> g.at) || !is_slurm_job_id(g.job_id)) return std::nullopt;
  return g;
}

}  // namespace ddpctl

#include "runs/site_records.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "slurm/slurm_job.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

std::string grant_path(const std::string& dir, int round) {
  return round <= 1 ? dir + "/grant" : fmt::format("{}/grant.{}", dir, round);
}

bool plain_word(const std::string& s) {
  return !s.empty() && s.size() <= 200 && s.find_first_of(" \t\r\n\"'\\") == std::string::npos &&
         !script_value_problem(s);
}

std::optional<SiteGrant> read_grant_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  const std::string text = read_file(path);
  SiteGrant g;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_object()) {
    if (!j["site"].is_string() || !j["job"].is_string() || !j["at"].is_number()) return std::nullopt;
    g = {j["site"].get<std::string>(), j["job"].get<std::string>(), j["at"].get<double>()};
  } else {
    // Recorded by an earlier version: "SITE JOB TIME".
    std::istringstream in(text);
    std::string rest;
    if (!(in >> g.site >> g.job >> g.at) || (in >> rest)) return std::nullopt;
  }
  if (!plain_word(g.site) || !is_slurm_job_id(g.job)) return std::nullopt;
  return g;
}

// The newest round recorded here (round.N), 1 without one.
int newest_round(const std::string& dir) {
  int n = 1;
  std::error_code ec;
  while (fs::exists(fmt::format("{}/round.{}", dir, n + 1), ec)) ++n;
  return n;
}

}  // namespace

std::optional<SiteGrant> read_site_grant(const std::string& dir) {
  for (int n = newest_round(dir); n >= 1; --n)
    if (auto g = read_grant_file(grant_path(dir, n))) return g;
  return std::nullopt;
}

int site_race_round(const std::string& dir) { return newest_round(dir); }

std::optional<SiteGrant> site_round_grant(const std::string& dir, int n) { return read_grant_file(grant_path(dir, n)); }

std::string site_round_why(const std::string& dir, int n) {
  try {
    return nlohmann::json::parse(read_file(fmt::format("{}/round.{}", dir, n))).value("why", "");
  } catch (const std::exception&) {
    return "";
  }
}

SiteGrant record_site_grant(const std::string& dir, const SiteGrant& grant, int round) {
  if (!plain_word(grant.site) || !is_slurm_job_id(grant.job))
    throw std::logic_error("record_site_grant: not a site and a job id");
  const std::string path = grant_path(dir, round);
  nlohmann::json j = {{"site", grant.site}, {"job", grant.job}, {"at", grant.at}};
  write_file_exclusive(path, j.dump() + "\n");
  auto g = read_grant_file(path);
  if (!g) throw UserError(Location{path}, "", "the race's grant cannot be read (not written by ddpctl?)");
  return *g;
}

RaceRounds read_rounds(const std::string& dir, int most) {
  RaceRounds rr;
  rr.rounds = most;
  rr.round = newest_round(dir);
  rr.grant = read_grant_file(grant_path(dir, rr.round));
  rr.relayed = true;
  if (rr.round >= 2) {
    nlohmann::json j = nlohmann::json::parse(read_file(fmt::format("{}/round.{}", dir, rr.round)), nullptr, false);
    if (j.is_object()) {
      rr.why = j.value("why", "");
      rr.from_site = j.value("from_site", "");
      rr.from_job = j.value("from_job", "");
    }
    if (auto before = read_grant_file(grant_path(dir, rr.round - 1))) rr.checkpoint_site = before->site;
    std::error_code ec;
    rr.relayed = fs::exists(fmt::format("{}/relay.{}", dir, rr.round), ec);
  }
  return rr;
}

std::string recorded_site_run(const std::string& dir, const std::string& name) {
  std::error_code ec;
  const std::string path = fmt::format("{}/site.{}.run", dir, name);
  return fs::exists(path, ec) ? trim(read_file(path)) : std::string();
}

std::string check_site_run(const std::string& dir, const std::string& name, const std::string& run) {
  std::string recorded = recorded_site_run(dir, name);
  if (recorded.empty()) {
    try {
      write_file_exclusive(fmt::format("{}/site.{}.run", dir, name), run + "\n");
    } catch (const UserError&) {
      // another process recorded it first: that one holds
    }
    recorded = recorded_site_run(dir, name);
  }
  if (recorded == run) return "";
  return fmt::format("its answer names run {}, but this race's run there is {} (as the site first said it)",
                     printable(run, 80), recorded);
}

std::string relay_error(const std::string& dir, int n) {
  std::error_code ec;
  const std::string path = fmt::format("{}/relay.{}.error", dir, n);
  if (!fs::exists(path, ec) || fs::exists(fmt::format("{}/relay.{}", dir, n), ec)) return "";
  return plain_line(trim(read_file(path)), 400);
}

std::vector<SiteOfRace> read_race_sites(const std::string& dir) {
  const std::string path = dir + "/sites.json";
  nlohmann::json record = nlohmann::json::parse(read_file(path), nullptr, false);
  if (!record.is_object() || !record.contains("sites") || !record["sites"].is_array())
    throw UserError(Location{path}, "sites", "is not the record of a race across sites that ddpctl writes");
  std::vector<SiteOfRace> sites;
  for (const auto& s : record["sites"]) {
    if (!s.is_object() || !s.value("name", nlohmann::json()).is_string() ||
        !s.value("host", nlohmann::json()).is_string())
      throw UserError(Location{path}, "sites", "names a site without its name and host");
    sites.push_back({s.value("name", ""), s.value("host", ""), s.value("remote_dir", ""),
                     s.value("labels", std::vector<std::string>{})});
  }
  return sites;
}

}  // namespace ddpctl

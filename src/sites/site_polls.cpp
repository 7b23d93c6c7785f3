#include "sites/site_polls.hpp"

#include <ctime>
#include <exception>
#include <filesystem>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/text.hpp"
#include "sites/site_answer.hpp"
#include "runs/site_records.hpp"

namespace ddpctl {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

SitePolls::SitePolls(SiteCaller& caller, std::vector<SiteOfRace> sites)
    : caller_(caller), sites_(std::move(sites)), shared_(std::make_shared<Shared>()) {
  shared_->slots.resize(sites_.size());
}

SitePolls::~SitePolls() {
  for (auto& s : shared_->slots) {
    bool busy;
    {
      std::lock_guard<std::mutex> hold(shared_->mutex);
      busy = s.busy;
    }
    if (!s.thread.joinable()) continue;
    if (busy) s.thread.detach();
    else s.thread.join();
  }
}

std::vector<SiteCall> SitePolls::ask(const Words& words, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  Shared& sh = *shared_;
  for (size_t i = 0; i < sh.slots.size(); ++i) {
    Slot& slot = sh.slots[i];
    {
      std::lock_guard<std::mutex> hold(sh.mutex);
      if (slot.busy) continue;
    }
    if (slot.thread.joinable()) slot.thread.join();  // its call ended: its answer was taken
    std::vector<std::string> w = words(sites_[i]);
    {
      std::lock_guard<std::mutex> hold(sh.mutex);
      slot.busy = true;
      slot.call = SiteCall{false, "", "", steady_seconds(), static_cast<long long>(std::time(nullptr))};
    }
    slot.thread = std::thread([shared = shared_, &caller = caller_, site = sites_[i], i, w = std::move(w)] {
      std::string out, error;
      try {
        out = caller.call(site, w, error);
      } catch (const std::exception& e) {
        error = e.what();  // nothing thrown in a call's thread may escape it
      } catch (...) {
        error = "the call failed";
      }
      std::lock_guard<std::mutex> hold(shared->mutex);
      shared->slots[i].call.answered = true;
      shared->slots[i].call.out = std::move(out);
      shared->slots[i].call.error = std::move(error);
      shared->slots[i].busy = false;
      shared->changed.notify_all();
    });
  }
  std::unique_lock<std::mutex> hold(sh.mutex);
  sh.changed.wait_until(hold, deadline, [&] {
    for (const auto& s : sh.slots)
      if (s.busy) return false;
    return true;
  });
  std::vector<SiteCall> out;
  for (auto& s : sh.slots) out.push_back(s.call);
  return out;
}

std::vector<SiteCall> SitePolls::ask_all(SiteCaller& caller, const std::vector<SiteOfRace>& sites, const Words& words) {
  SitePolls polls(caller, sites);
  return polls.ask(words, std::chrono::hours(24 * 365));
}

Background::~Background() {
  if (!thread_.joinable()) return;
  if (running()) thread_.detach();
  else thread_.join();
}

bool Background::running() const {
  std::lock_guard<std::mutex> hold(shared_->mutex);
  return shared_->running;
}

void Background::run(std::function<std::string()> task) {
  {
    std::lock_guard<std::mutex> hold(shared_->mutex);
    if (shared_->running) return;
    shared_->running = true;
    shared_->result.reset();
  }
  if (thread_.joinable()) thread_.join();
  thread_ = std::thread([shared = shared_, task = std::move(task)] {
    std::string said;
    try {
      said = task();
    } catch (const std::exception& e) {
      said = e.what();
    } catch (...) {
      said = "it failed";
    }
    std::lock_guard<std::mutex> hold(shared->mutex);
    shared->result = std::move(said);
    shared->running = false;
  });
}

std::optional<std::string> Background::finished() {
  std::lock_guard<std::mutex> hold(shared_->mutex);
  if (shared_->running || !shared_->result) return std::nullopt;
  std::optional<std::string> r = std::move(shared_->result);
  shared_->result.reset();
  return r;
}

SitePoll site_poll_of(const std::string& dir, const SiteOfRace& site, const SiteCall& call) {
  SitePoll p;
  p.name = site.name;
  std::error_code ec;
  namespace fs = std::filesystem;
  const std::string rc = fmt::format("{}/site.{}.submit.rc", dir, site.name);
  p.submission_ended = fs::exists(rc, ec);
  p.submission_failed = p.submission_ended && trim(read_file(rc)) != "0";
  if (!call.answered) {
    // The same words for as long as the call lasts: the log says it once.
    char at[16] = "?";
    const std::time_t asked = static_cast<std::time_t>(call.asked_wall);
    std::tm tm{};
    if (gmtime_r(&asked, &tm)) std::strftime(at, sizeof at, "%H:%M:%SZ", &tm);
    p.error = fmt::format("still answering the call made at {} (a call ends within 2 min)", at);
    return p;
  }
  if (!call.error.empty()) {
    p.error = plain_line(call.error, 300);
    return p;
  }
  if (!read_site_answer(call.out, p)) return p;
  // What the site says is data: its gate must be the one asked for, and
  // its run the one this race recorded for it.
  std::string wrong;
  if (!p.site.empty() && p.site != site.host)
    wrong = fmt::format("its answer is of site {}, not of {}", printable(p.site, 80), printable(site.host, 80));
  else if (p.submitted)
    wrong = check_site_run(dir, site.name, p.run);
  if (!wrong.empty()) {
    SitePoll bad;
    bad.name = p.name;
    bad.submission_ended = p.submission_ended;
    bad.submission_failed = p.submission_failed;
    bad.error = wrong;
    return bad;
  }
  return p;
}

}  // namespace ddpctl

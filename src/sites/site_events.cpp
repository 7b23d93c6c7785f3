#include "sites/site_events.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <tuple>

#include "runs/events.hpp"

namespace ddpctl {

namespace {

// The keys a relayed event keeps from its site: all but those the log here
// writes itself (its own seq, time and run).
nlohmann::json relayed_fields(const nlohmann::json& e, const std::string& site, const std::string& run) {
  nlohmann::json f = nlohmann::json::object();
  for (auto it = e.begin(); it != e.end(); ++it)
    if (it.key() != "schema" && it.key() != "seq" && it.key() != "time" && it.key() != "t" && it.key() != "run" &&
        it.key() != "cursor")
      f[it.key()] = it.value();
  f["site"] = site;
  f["site_run"] = run;
  f["site_seq"] = e["seq"];
  f["site_t"] = e["t"];
  return f;
}

}  // namespace

SiteEventRelay::SiteEventRelay(std::string dir) : dir_(std::move(dir)) {
  for (long long offset = 0;;) {
    EventsRead r = read_events(dir_, offset, 1 << 20);
    for (const auto& e : r.events) {
      if (!e.contains("site_seq") || !e["site_seq"].is_number_integer() || !e.value("site", nlohmann::json()).is_string())
        continue;
      seq_[e["site"].get<std::string>()] = e["site_seq"].get<long long>();
    }
    if (r.next_offset <= offset) break;
    offset = r.next_offset;
  }
}

long long SiteEventRelay::after(const std::string& site) const {
  if (refused_.count(site)) return -1;
  auto it = seq_.find(site);
  return it == seq_.end() ? 0 : it->second;
}

void SiteEventRelay::refused(const std::string& site, const std::string& error, const Say& say) {
  if (refused_.count(site) || error.find("--events-after") == std::string::npos) return;
  refused_.insert(site);
  say(fmt::format("site {}: its ddpctl does not send its run's events (an older version): the race's events here "
                  "leave that site's out",
                  site));
}

void SiteEventRelay::relay(const std::vector<SitePoll>& polls, const Say& say) {
  // Each site's new events in its own order, then merged by time: a site's
  // seq order is kept, and the sites' events interleave as they happened.
  struct Queue {
    const SitePoll* poll;
    std::vector<const nlohmann::json*> events;
    size_t next = 0;
  };
  std::vector<Queue> queues;
  for (const auto& p : polls) {
    if (!p.reached || !p.submitted || refused_.count(p.name)) continue;
    const long long last = std::max(after(p.name), 0LL);
    Queue q{&p, {}, 0};
    for (const auto& e : p.events)
      if (e["seq"].get<long long>() > last) q.events.push_back(&e);
    if (!q.events.empty()) queues.push_back(std::move(q));
  }
  for (;;) {
    Queue* first = nullptr;
    for (auto& q : queues)
      if (q.next < q.events.size() &&
          (!first || std::make_tuple((*q.events[q.next])["t"].get<double>(), q.poll->name) <
                         std::make_tuple((*first->events[first->next])["t"].get<double>(), first->poll->name)))
        first = &q;
    if (!first) return;
    const nlohmann::json& e = *first->events[first->next++];
    const std::string& site = first->poll->name;
    // A site's own end of its run is not the race's: the race ends here.
    if (e["type"] != "run_ended") {
      try {
        append_event(dir_, *parse_event_type(e["type"].get<std::string>()), relayed_fields(e, site, first->poll->run));
      } catch (const std::exception& x) {
        say(fmt::format("warning: site {}'s events were not all written here (asked again at the next poll): {}", site,
                        x.what()));
        return;
      }
    }
    seq_[site] = e["seq"].get<long long>();
  }
}

}  // namespace ddpctl

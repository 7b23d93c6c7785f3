#include "agent/flight_recorder.hpp"

#include <algorithm>
#include <dirent.h>
#include <fmt/format.h>
#include <set>
#include <stdexcept>

#include "base/files.hpp"
#include "base/pickle.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

using Json = nlohmann::json;

std::string string_of(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

long long int_of(const Json& j, const char* key, long long fallback = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : fallback;
}

bool bool_of(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

// torch's and Python's own files are not where the program is.
bool library_file(const std::string& f) {
  for (const char* part : {"/torch/", "site-packages/", "dist-packages/", "/lib/python3", "<frozen"})
    if (f.find(part) != std::string::npos) return true;
  return f.empty();
}

// The innermost frame of the program itself among an entry's frames (innermost first).
std::string where_of(const Json& entry) {
  auto frames = entry.find("frames");
  if (frames == entry.end() || !frames->is_array()) return "";
  for (const auto& f : *frames) {
    if (!f.is_object()) continue;
    std::string file = string_of(f, "filename");
    if (library_file(file)) continue;
    return fmt::format("{}:{} in {}", file_name_of(file), int_of(f, "line"), string_of(f, "name"));
  }
  return "";
}

// "[0, 1, 3]" (pg_config keeps a group's ranks as text).
std::vector<int> ranks_of(const std::string& text) {
  std::vector<int> out;
  std::string digits;
  for (char c : text + ",") {
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (!digits.empty()) {
      out.push_back(std::stoi(digits));
      digits.clear();
    }
  }
  return out;
}

}  // namespace

FrDump parse_fr_dump(const Json& dump, int rank) {
  if (!dump.is_object() || !dump.contains("version"))
    throw std::runtime_error("not a Flight Recorder dump (no \"version\" in it)");
  FrDump d;
  d.rank = rank;
  d.version = string_of(dump, "version");
  if (auto cfg = dump.find("pg_config"); cfg != dump.end() && cfg->is_object())
    for (const auto& [key, g] : cfg->items()) {
      if (!g.is_object()) continue;
      std::string name = string_of(g, "name");
      // torch 2.14's Gloo records every group's ranks under an empty name,
      // the last one's winning (gloo-4ranks-rank3-sleeps/: ranks 0 and 1
      // have their pair's [0, 1] there): no group can be told from it.
      if (!name.empty()) d.group_ranks[name] = ranks_of(string_of(g, "ranks"));
    }
  auto entries = dump.find("entries");
  if (entries == dump.end()) return d;  // dumped with nothing recorded
  if (!entries->is_array()) throw std::runtime_error("not a Flight Recorder dump (\"entries\" is not a list)");
  for (const auto& e : *entries) {
    if (!e.is_object()) continue;
    FrEntry x;
    if (auto pg = e.find("process_group"); pg != e.end() && pg->is_array() && pg->size() == 2 && (*pg)[0].is_string()) {
      x.group = (*pg)[0].get<std::string>();
      if ((*pg)[1].is_string()) x.group_desc = (*pg)[1].get<std::string>();
    } else {
      x.group = std::to_string(int_of(e, "pg_id"));
    }
    x.p2p = bool_of(e, "is_p2p");
    x.seq = x.p2p ? int_of(e, "p2p_seq_id") : int_of(e, "collective_seq_id");
    std::string name = string_of(e, "profiling_name");
    size_t colon = name.find(':');
    x.backend = colon == std::string::npos ? "" : name.substr(0, colon);
    x.op = colon == std::string::npos ? name : name.substr(colon + 1);
    x.state = string_of(e, "state");
    x.retired = bool_of(e, "retired");
    x.done = x.state == "completed" || (x.backend == "gloo" && x.retired);
    if (auto s = e.find("input_sizes"); s != e.end()) x.sizes = s->dump();
    x.where = where_of(e);
    d.entries.push_back(std::move(x));
  }
  return d;
}

FrDump read_fr_dump(std::string_view pickle_bytes, int rank) { return parse_fr_dump(read_pickle(pickle_bytes), rank); }

std::string describe_rank_numbers(const std::vector<int>& ranks, const std::map<int, std::string>& nodes) {
  std::vector<int> r = ranks;
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  if (r.empty()) return "";
  std::vector<std::string> runs, where;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) j++;
    // Three or more in a row read as a range: "0–2".
    if (j - i >= 2) {
      runs.push_back(fmt::format("{}–{}", r[i], r[j]));
    } else {
      for (size_t k = i; k <= j; k++) runs.push_back(std::to_string(r[k]));
    }
    i = j + 1;
  }
  for (int x : r)
    if (auto n = nodes.find(x); n != nodes.end() && !n->second.empty() &&
                                std::find(where.begin(), where.end(), n->second) == where.end())
      where.push_back(n->second);
  return fmt::format("{} {}{}", r.size() == 1 ? "rank" : "ranks", join(runs, ", "),
                     where.empty() ? "" : " (" + join(where, ", ") + ")");
}

namespace {

std::string group_label(const std::string& name, const std::string& desc) {
  // A group made without a description is "undefined" (gloo-4ranks-rank3-sleeps/).
  if (desc.empty() || desc == "default_pg" || desc == "undefined" || desc == name) return "process group " + name;
  return fmt::format("process group {} ({})", name, desc);
}

// One rank's place in one group: its last collective.
struct Place {
  int rank = 0;
  const FrEntry* last = nullptr;  // null: none in this group
  long long seq() const { return last ? last->seq : 0; }
  bool done() const { return !last || last->done; }
};

struct GroupVerdict {
  FrVerdictKind kind = FrVerdictKind::NothingRecorded;
  std::vector<int> culprits;
  std::string text;
};

using RanksByKind = std::vector<std::pair<std::string, std::vector<int>>>;

// What each rank at the top is in, by op (and sizes): the most common first.
RanksByKind kinds_at_top(const std::vector<const Place*>& at_top) {
  RanksByKind kinds;
  for (const auto* p : at_top) {
    std::string k = p->last->op + " " + p->last->sizes;
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& x) { return x.first == k; });
    if (it == kinds.end()) it = kinds.insert(kinds.end(), {k, {}});
    it->second.push_back(p->rank);
  }
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  return kinds;
}

// The ranks at collective #`top` of `label` are in different ops (or sizes).
GroupVerdict judge_mismatch(const RanksByKind& kinds, const std::vector<const Place*>& at_top,
                            const std::vector<int>& behind, long long top, const std::string& label,
                            const std::map<int, std::string>& nodes) {
  GroupVerdict v;
  std::set<std::string> ops;
  for (const auto* p : at_top) ops.insert(p->last->op);
  std::vector<std::string> each;
  for (const auto& [k, ranks] : kinds) {
    const FrEntry* e = nullptr;
    for (const auto* p : at_top)
      if (p->rank == ranks.front()) e = p->last;
    // Sizes only when the ops agree and the sizes do not.
    each.push_back(fmt::format("{} in {}{}", describe_rank_numbers(ranks, nodes), e->op, ops.size() == 1 ? " " + e->sizes : ""));
  }
  v.kind = FrVerdictKind::Mismatch;
  v.text = fmt::format("ranks disagree on collective #{} of {}: {}", top, label, join(each, "; "));
  // A minority stands out only against a majority.
  if (behind.empty() && 2 * kinds.front().second.size() > at_top.size())
    for (size_t i = 1; i < kinds.size(); i++)
      v.culprits.insert(v.culprits.end(), kinds[i].second.begin(), kinds[i].second.end());
  if (!behind.empty()) {
    v.kind = FrVerdictKind::Named;
    v.culprits = behind;
    v.text = fmt::format("{} never entered collective #{} of {}; {}", describe_rank_numbers(behind, nodes), top, label,
                         join(each, "; "));
  }
  return v;
}

GroupVerdict judge_group(const std::string& group, const std::vector<Place>& places,
                         const std::map<int, std::string>& nodes) {
  GroupVerdict v;
  long long top = 0;
  std::string desc;
  for (const auto& p : places) {
    top = std::max(top, p.seq());
    if (p.last && desc.empty()) desc = p.last->group_desc;
  }
  if (top == 0) return v;
  std::string label = group_label(group, desc);
  std::vector<int> behind, in, finished;
  std::vector<const Place*> at_top;
  for (const auto& p : places) {
    if (p.seq() < top) {
      behind.push_back(p.rank);
    } else {
      at_top.push_back(&p);
      (p.done() ? finished : in).push_back(p.rank);
    }
  }
  RanksByKind kinds = kinds_at_top(at_top);
  const FrEntry& first = *at_top.front()->last;
  std::string where;
  for (const auto* p : at_top)
    if (!p->last->where.empty()) {
      where = p->last->where;
      break;
    }
  if (kinds.size() > 1) return judge_mismatch(kinds, at_top, behind, top, label, nodes);
  std::string op = first.p2p ? first.op + " (point to point)" : first.op;
  if (!behind.empty()) {
    v.kind = FrVerdictKind::Named;
    v.culprits = behind;
    std::vector<int> others = in;
    others.insert(others.end(), finished.begin(), finished.end());
    v.text = fmt::format("{} never entered {} #{} ({}); {} {} in it{}", describe_rank_numbers(behind, nodes), op, top, label,
                         describe_rank_numbers(others, nodes), others.size() == 1 ? "is" : "are",
                         where.empty() ? "" : " (at " + where + ")");
    return v;
  }
  if (finished.empty()) {
    v.kind = FrVerdictKind::AllInCollective;
    v.text = fmt::format("every rank is in {} #{} ({}) and none has finished it{}", op, top, label,
                         where.empty() ? "" : " (at " + where + ")");
  } else if (in.empty()) {
    v.kind = FrVerdictKind::NoneInCollective;
    v.text = fmt::format("every rank finished {} #{} ({}), its last collective", op, top, label);
  } else {
    v.kind = FrVerdictKind::AllInCollective;
    v.text = fmt::format("{} finished {} #{} ({}); {} {} still in it", describe_rank_numbers(finished, nodes), op, top, label,
                         describe_rank_numbers(in, nodes), in.size() == 1 ? "is" : "are");
  }
  return v;
}

}  // namespace

FrVerdict analyze_flight_recorder(const std::vector<FrDump>& dumps, const std::vector<int>& missing,
                                  const std::map<int, std::string>& nodes) {
  FrVerdict v;
  std::string no_dump = missing.empty() ? "" : "; no dump from " + describe_rank_numbers(missing, nodes);
  if (dumps.empty()) {
    v.text = "no dump to read" + no_dump;
    return v;
  }
  // Every group any rank recorded, in the order first seen (the default group first).
  std::vector<std::string> groups;
  for (const auto& d : dumps)
    for (const auto& e : d.entries)
      if (std::find(groups.begin(), groups.end(), e.group) == groups.end()) groups.push_back(e.group);
  std::vector<GroupVerdict> verdicts;
  for (const auto& g : groups) {
    // Its members: the ranks its config lists (in any dump), else those that recorded in it.
    std::set<int> members;
    for (const auto& d : dumps)
      if (auto it = d.group_ranks.find(g); it != d.group_ranks.end()) members.insert(it->second.begin(), it->second.end());
    std::vector<Place> places;
    for (const auto& d : dumps) {
      Place p;
      p.rank = d.rank;
      // Collectives only: a group's sends and receives involve two of its ranks, not all.
      for (const auto& e : d.entries)
        if (e.group == g && !e.p2p && (!p.last || e.seq >= p.last->seq)) p.last = &e;
      if (p.last || members.count(d.rank)) places.push_back(p);
    }
    if (places.size() < 2) continue;  // one rank's view compares with nothing
    verdicts.push_back(judge_group(g, places, nodes));
  }
  auto pick = [&](FrVerdictKind k) {
    std::vector<const GroupVerdict*> out;
    for (const auto& gv : verdicts)
      if (gv.kind == k) out.push_back(&gv);
    return out;
  };
  for (FrVerdictKind k : {FrVerdictKind::Named, FrVerdictKind::Mismatch, FrVerdictKind::AllInCollective,
                          FrVerdictKind::NoneInCollective}) {
    auto found = pick(k);
    if (found.empty()) continue;
    v.kind = k;
    std::vector<std::string> texts;
    for (const auto* gv : found) {
      texts.push_back(gv->text);
      for (int c : gv->culprits)
        if (std::find(v.culprits.begin(), v.culprits.end(), c) == v.culprits.end()) v.culprits.push_back(c);
    }
    v.text = join(texts, "; ") + no_dump;
    return v;
  }
  v.kind = FrVerdictKind::NothingRecorded;
  if (dumps.size() == 1) {
    // Nothing to compare with; what the one rank says is still worth saying.
    const FrEntry* last = nullptr;
    for (const auto& e : dumps[0].entries)
      if (!e.p2p && (!last || e.seq >= last->seq)) last = &e;
    std::string one = describe_rank_numbers({dumps[0].rank}, nodes);
    v.text = !last ? fmt::format("only {}'s dump came, and it records no collective", one)
                   : fmt::format("only {}'s dump came, nothing to compare it with: it {} {} #{} ({})", one,
                                 last->done ? "finished" : "is in", last->op, last->seq,
                                 group_label(last->group, last->group_desc));
  } else {
    v.text = "the dumps record no collective that two ranks share";
  }
  v.text += no_dump;
  return v;
}

std::optional<CulpritVerdict> flight_recorder_culprit(const CulpritVerdict& stacks, const FrVerdict& fr,
                                                      const std::map<int, std::string>& nodes) {
  if (stacks.kind == CulpritKind::Named || fr.culprits.empty()) return std::nullopt;
  CulpritVerdict v;
  v.kind = CulpritKind::Named;
  for (int r : fr.culprits) {
    auto n = nodes.find(r);
    v.culprits.push_back({r, r, n == nodes.end() ? "" : n->second, ""});
  }
  v.text = fr.text;
  return v;
}

FrCollected collect_fr_dumps(const std::string& prefix, const std::vector<int>& ranks,
                             const std::map<int, FileId>& before, Clock& clock, double wait_s) {
  constexpr size_t kMaxDump = 256 << 20;  // 2000 entries with their stacks are a few MB
  std::map<int, FrDump> got;
  std::map<int, std::string> last_problem;
  double until = clock.monotonic() + wait_s;
  while (true) {
    // A folder on NFS caches its entries: opening it revalidates them.
    if (size_t slash = prefix.rfind('/'); slash != std::string::npos)
      if (DIR* d = ::opendir(prefix.substr(0, slash).c_str())) ::closedir(d);
    for (int r : ranks) {
      if (got.count(r)) continue;
      std::string path = fr_dump_path(prefix, r);
      FileId now = file_id(path);
      auto was = before.find(r);
      if (now.size <= 0 || (was != before.end() && was->second == now)) continue;
      try {
        got[r] = read_fr_dump(read_file(path, kMaxDump), r);
      } catch (const std::exception& e) {
        last_problem[r] = e.what();  // half written: again at the next poll
      }
    }
    // A rank whose hook could not dump says why (ddpctl's Gloo pipe): not waited for.
    size_t answered = got.size();
    for (int r : ranks)
      if (!got.count(r) && file_id(fr_dump_path(prefix, r) + ".error").size > 0) answered++;
    if (answered == ranks.size() || clock.monotonic() >= until) break;
    clock.sleep(0.25);
  }
  FrCollected c;
  for (int r : ranks) {
    if (auto it = got.find(r); it != got.end()) {
      c.dumps.push_back(std::move(it->second));
      c.paths.push_back(fr_dump_path(prefix, r));
    } else {
      c.missing.push_back(r);
      std::string error_path = fr_dump_path(prefix, r) + ".error";
      if (auto p = last_problem.find(r); p != last_problem.end())
        c.problems.push_back(fmt::format("rank {}'s dump {} does not read: {}", r, fr_dump_path(prefix, r), p->second));
      else if (file_id(error_path).size > 0)
        c.problems.push_back(fmt::format("rank {} could not dump: {} (from {})", r,
                                         printable(trim(read_file(error_path, 4096)), 300), error_path));
    }
  }
  return c;
}

}  // namespace ddpctl

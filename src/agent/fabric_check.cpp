#include "agent/fabric_check.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

#include "agent/job_events.hpp"
#include "agent/job_place.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/job_files.hpp"
#include "runs/node_check_record.hpp"
#include "spec/fabric_settings.hpp"

namespace ddpctl {

namespace {

// A host ddp-train names, as one of `nodes`: the same, or its first label
// (a node's hostname may be its full name).
std::string as_node(const std::string& host, const std::vector<std::string>& nodes) {
  for (const auto& n : nodes)
    if (host == n || host.rfind(n + ".", 0) == 0 || n.rfind(host + ".", 0) == 0) return n;
  return host;
}

std::string gbs(std::optional<double> v) { return v ? fmt::format("{:.3g}", *v) : std::string("-"); }

}  // namespace

std::vector<FabricTiming> parse_fabric_lines(const std::string& out, const std::vector<std::string>& nodes,
                                              bool pairs) {
  std::vector<FabricTiming> found;
  for (const auto& line : split(out, '\n')) {
    const char* key = pairs ? "{\"allreduce_pair\"" : "{\"allreduce\"";
    if (line.rfind(key, 0) != 0) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    try {
      const auto& m = j.at(pairs ? "allreduce_pair" : "allreduce");
      FabricTiming x;
      x.busbw_gbs = m.at("busbw_gbs").get<double>();
      x.seconds = m.at("seconds").get<double>();
      if (pairs) {
        x.round = 1 + m.at("round").get<int>();  // round 1 is the whole set's
        for (const auto& h : m.at("hosts")) x.nodes.push_back(as_node(h.get<std::string>(), nodes));
      } else {
        x.nodes = nodes;
        if (!found.empty()) found.clear();  // the largest size is the last line
      }
      found.push_back(x);
    } catch (const nlohmann::json::exception&) {
    }
  }
  return found;
}

namespace {

struct PairTally {
  std::set<std::string> slow_with, fine_with;
};

// Bisection's verdict: a node slow with two partners, or with one that is
// fine with another, is the node; a pair slow while each is fine with
// another is their link.
void name_culprits(FabricRecord& r, double floor) {
  std::map<std::string, PairTally> t;
  std::vector<const FabricTiming*> slow_pairs;
  for (const auto& m : r.measures) {
    if (m.round < 2 || m.nodes.size() != 2 || !m.busbw_gbs) continue;
    bool slow = *m.busbw_gbs < floor;
    for (int i = 0; i < 2; ++i) (slow ? t[m.nodes[i]].slow_with : t[m.nodes[i]].fine_with).insert(m.nodes[1 - i]);
    if (slow) slow_pairs.push_back(&m);
  }
  for (const auto& n : r.nodes) {
    const PairTally& p = t[n];
    if (!p.fine_with.empty() || p.slow_with.empty()) continue;
    bool partner_fine = std::any_of(p.slow_with.begin(), p.slow_with.end(),
                                    [&](const std::string& o) { return !t[o].fine_with.empty(); });
    if (p.slow_with.size() >= 2 || partner_fine) r.bad_nodes.push_back(n);
  }
  for (const auto* m : slow_pairs)
    if (!t[m->nodes[0]].fine_with.empty() && !t[m->nodes[1]].fine_with.empty())
      r.bad_links.emplace_back(m->nodes[0], m->nodes[1]);
}

std::string pair_words(const FabricRecord& r, const std::string& node) {
  std::vector<std::string> with;
  for (const auto& m : r.measures)
    if (m.round >= 2 && m.nodes.size() == 2 && (m.nodes[0] == node || m.nodes[1] == node))
      with.push_back(fmt::format("{} {}", m.nodes[0] == node ? m.nodes[1] : m.nodes[0], gbs(m.busbw_gbs)));
  return join(with, ", ");
}

}  // namespace

void decide_fabric(FabricRecord& r) {
  const FabricTiming* whole = r.measures.empty() || r.measures[0].round != 1 ? nullptr : &r.measures[0];
  std::string size = format_bytes(r.bytes);
  if (!whole || !whole->busbw_gbs) {
    r.level = r.problem.empty() || r.problem.find("did not finish") != std::string::npos ? FabricLevel::Fail
                                                                                        : FabricLevel::Unmeasured;
  } else {
    double share = *whole->busbw_gbs / r.expected_gbs;
    r.level = share >= r.warn_below ? FabricLevel::Ok : share >= r.fail_below ? FabricLevel::Warn : FabricLevel::Fail;
  }
  std::string head =
      whole && whole->busbw_gbs
          ? fmt::format("{} nodes: {} GB/s bus bandwidth at {} ({:.0f}% of the expected {} GB/s)", r.nodes.size(),
                        gbs(whole->busbw_gbs), size, 100 * *whole->busbw_gbs / r.expected_gbs, gbs(r.expected_gbs))
          : fmt::format("{} nodes: not measured ({})", r.nodes.size(), r.problem.empty() ? "no figure" : r.problem);
  std::string took = fmt::format("; {} round(s) in {:.1f} s", r.rounds, r.seconds);
  if (r.level == FabricLevel::Ok) {
    r.text = head + took;
    return;
  }
  if (r.level == FabricLevel::Unmeasured) {
    r.text = head + ": the fabric is not checked; training goes on" + took;
    return;
  }
  if (r.level == FabricLevel::Warn) {
    r.text = fmt::format("{}, below the warning level ({:.0f}%); training goes on{}", head, 100 * r.warn_below, took);
    return;
  }
  name_culprits(r, r.fail_below * r.expected_gbs);
  std::vector<std::string> said;
  for (const auto& n : r.bad_nodes) {
    said.push_back(fmt::format("node {} is slow with every partner ({} GB/s)", n, pair_words(r, n)));
    r.exclude.push_back(n);
  }
  for (const auto& [a, b] : r.bad_links) {
    if (std::find(r.exclude.begin(), r.exclude.end(), a) != r.exclude.end() ||
        std::find(r.exclude.begin(), r.exclude.end(), b) != r.exclude.end())
      continue;
    said.push_back(fmt::format("the link between {} and {} is slow while each is fine with another ({}: {} GB/s)", a,
                               b, b, pair_words(r, b)));
    r.exclude.push_back(b);
  }
  // Most nodes slow with everyone: the fabric, or the figure, not a node.
  if (r.exclude.size() * 2 > r.nodes.size()) {
    r.exclude.clear();
    said = {fmt::format("{} of {} nodes are slow with every partner: the fabric as a whole, not one node (is "
                        "busbw_gbs this fabric's figure? `ddpctl calibrate` measures it); training goes on",
                        r.bad_nodes.size(), r.nodes.size())};
  } else if (said.empty()) {
    said = {r.nodes.size() < 3 ? "with 2 nodes a slow node cannot be told from a slow link; training goes on"
                               : "no node or link could be named; training goes on"};
  } else {
    said.push_back("excluding " + join(r.exclude, ", "));
  }
  r.text = fmt::format("{}, below the failure level ({:.0f}%): {}{}", head, 100 * r.fail_below, join(said, "; "), took);
}

namespace {

std::vector<std::string> srun_argv(const FabricCheckRequest& q, bool pairs) {
  std::vector<std::string> argv = {"env", "-u", "RANK", "-u", "WORLD_SIZE", "-u", "LOCAL_RANK", "-u",
                                   "LOCAL_WORLD_SIZE", "DDPCTL_AGENT_PROCESS=1", "MASTER_ADDR=" + q.master_addr,
                                   "MASTER_PORT=" + std::to_string(q.master_port)};
  int n = static_cast<int>(q.nodes.size());
  std::vector<std::string> step = {"srun", "--nodes=" + std::to_string(n), "--ntasks=" + std::to_string(n * q.tasks_per_node),
                                   "--ntasks-per-node=" + std::to_string(q.tasks_per_node),
                                   "--nodelist=" + join(q.nodes, ","), "--kill-on-bad-exit=1", "--quiet", q.trainer,
                                   "--allreduce-bench", q.size, "--bench-iters", std::to_string(q.iters), "--device",
                                   q.gpus ? "cuda" : "cpu"};
  argv.insert(argv.end(), step.begin(), step.end());
  if (pairs) argv.push_back("--allreduce-pairs");
  return argv;
}

// One srun of ddp-train: its measurements, or why none.
std::vector<FabricTiming> measure(const FabricCheckRequest& q, bool pairs, double timeout_s, Context& ctx,
                                   std::string& problem) {
  CommandResult res = ctx.runner.run(srun_argv(q, pairs), std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000)));
  auto found = parse_fabric_lines(res.out, q.nodes, pairs);
  if (res.timed_out)
    problem = fmt::format("the {} did not finish within {:.0f} s", pairs ? "pairs' all-reduces" : "all-reduce", timeout_s);
  else if (!res.ok() && found.empty())
    problem = plain_line(res.describe(), 300);
  return found;
}

}  // namespace

FabricRecord run_fabric_check(const FabricCheckRequest& q, Context& ctx) {
  double t0 = ctx.clock.monotonic();
  FabricRecord r;
  r.nodes = q.nodes;
  r.expected_gbs = q.expected_gbs;
  r.warn_below = q.warn_below;
  r.fail_below = q.fail_below;
  r.bytes = 0;
  if (auto b = fabric_size_bytes(q.size)) r.bytes = *b;
  r.measures = measure(q, false, q.timeout_s, ctx, r.problem);
  r.seconds = ctx.clock.monotonic() - t0;
  decide_fabric(r);
  if (r.level == FabricLevel::Fail && q.nodes.size() >= 2) {
    // The bisection: ⌈log2 n⌉ rounds of pairs in one step, bounded as each round is.
    int rounds = 0;
    for (size_t bit = 1; bit < q.nodes.size(); bit <<= 1) ++rounds;
    std::string why;
    auto pairs = measure(q, true, q.timeout_s * rounds, ctx, why);
    r.measures.insert(r.measures.end(), pairs.begin(), pairs.end());
    if (!why.empty()) r.problem = r.problem.empty() ? why : r.problem + "; " + why;
    r.rounds = 1;
    for (const auto& m : r.measures) r.rounds = std::max(r.rounds, m.round);
    r.bad_nodes.clear();
    r.bad_links.clear();
    r.exclude.clear();
    r.seconds = ctx.clock.monotonic() - t0;
    decide_fabric(r);
  }
  JobPlace place = job_place(ctx.env);
  write_file_atomic(job_files::fabric(q.log_base, place.attempt), fabric_record_json(r).dump() + "\n");
  const FabricTiming* whole = r.measures.empty() || r.measures[0].round != 1 ? nullptr : &r.measures[0];
  job_event(job_event_source(ctx.env), EventType::FabricChecked,
            {{"level", fabric_level_name(r.level)}, {"nodes", r.nodes},
             {"busbw_gbs", whole && whole->busbw_gbs ? nlohmann::json(*whole->busbw_gbs) : nlohmann::json()},
             {"expected_gbs", r.expected_gbs}, {"rounds", r.rounds}, {"exclude", r.exclude},
             {"seconds", r.seconds}, {"text", r.text}});
  return r;
}

std::optional<std::string> fabric_check_once(const FabricCheckRequest& q, Context& ctx) {
  int attempt = job_place(ctx.env).attempt;
  if (read_fabric_record(q.log_base, attempt)) return std::nullopt;
  if (q.nodes.size() < 2) return "one node: nothing to check";
  for (const auto& n : q.nodes) {
    std::optional<NodeCheckResult> r;
    try {
      r = parse_node_check(read_file(node_check_path(q.log_base, attempt, n)));
    } catch (const std::exception&) {
    }
    if (r && !r->ok) return "not run: the node check failed on " + n;
  }
  return run_fabric_check(q, ctx).text;
}

}  // namespace ddpctl

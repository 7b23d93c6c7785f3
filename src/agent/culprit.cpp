#include "agent/culprit.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

#include "base/regex.hpp"
#include "base/text.hpp"

namespace ddpctl {

std::string stack_format_name(StackFormat f) {
  switch (f) {
    case StackFormat::Gdb: return "gdb";
    case StackFormat::PySpy: return "py-spy";
    case StackFormat::Faulthandler: return "faulthandler";
  }
  return "gdb";
}

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out = split(text, '\n');
  for (auto& l : out)
    if (!l.empty() && l.back() == '\r') l.pop_back();
  return out;
}

// A Python stack's outermost frame is <module> on the main thread only, or
// runpy's _run_module_as_main for a program run as `python -m` (torchrun's).
void mark_python_main(ThreadStack& t) {
  if (!t.frames.empty() && (t.frames.back().function == "<module>" || t.frames.back().function == "_run_module_as_main"))
    t.main = true;
}

}  // namespace

// "Thread 5 (Thread 0x7ffb5393e6c0 (LWP 17783) "pt_tcpstore"):" then
// "#3  0x00007ffb791c5f76 in poll () from /usr/lib/.../libc.so.6",
// "#1  futex_wait_simple (private=...) at ../sysdeps/nptl/futex-internal.h:177"
// (an inlined frame has no address), a long frame going on in "   from LIB".
// A bare `bt` (a core's) has frames and no thread line: one thread.
std::vector<ThreadStack> parse_gdb_stacks(const std::string& text) {
  static const Regex thread_line(R"re(^Thread (\d+) \((.*)\):$)re");
  static const Regex frame_line(R"re(^#(\d+) +(?:0x[0-9a-fA-F]+ in )?(.*)$)re");
  static const Regex at_file(R"re( at (\S+):(\d+)$)re");
  static const Regex from_lib(R"re(^\s*from ?(\S+)$)re");
  std::vector<ThreadStack> out;
  for (const auto& line : lines_of(text)) {
    RegexMatch m;
    if (thread_line.search(line, &m)) {
      ThreadStack t;
      t.format = StackFormat::Gdb;
      t.name = "Thread " + m.str(1) + " (" + m.str(2) + ")";
      t.main = m.str(1) == "1";
      out.push_back(t);
      continue;
    }
    if (frame_line.search(line, &m)) {
      if (out.empty() || (m.str(1) == "0" && !out.back().frames.empty())) {
        ThreadStack t;  // a bare backtrace
        t.format = StackFormat::Gdb;
        t.name = "the backtrace";
        t.main = true;
        out.push_back(t);
      }
      std::string rest = m.str(2);
      StackFrame f;
      // The name runs to its argument list: "c10d::Work::wait(std::chrono::...) ()",
      // "poll ()", "futex_wait (private=...)".
      size_t paren = rest.find('(');
      f.function = trim(paren == std::string::npos ? rest : rest.substr(0, paren));
      // glibc's internal aliases, with its debugging symbols: "__GI___clock_nanosleep" is clock_nanosleep.
      if (f.function.rfind("__GI_", 0) == 0) f.function = f.function.substr(f.function.find_first_not_of('_', 5));
      RegexMatch fm;
      if (at_file.search(rest, &fm)) {
        f.file = fm.str(1);
        f.line = std::stoi(fm.str(2));
      } else if (size_t from = rest.rfind(" from "); from != std::string::npos) {
        f.file = trim(rest.substr(from + 6));
      }
      out.back().frames.push_back(f);
      continue;
    }
    if (!out.empty() && !out.back().frames.empty() && from_lib.search(line, &m) &&
        out.back().frames.back().file.empty())
      out.back().frames.back().file = m.str(1);
  }
  return out;
}

// `Thread 688514 (idle): "MainThread"` then `    wait (threading.py:306)`;
// --native adds native frames the same way (`    ncclKernel (libnccl.so.2)`).
std::vector<ThreadStack> parse_py_spy_stacks(const std::string& text) {
  static const Regex thread_line(R"re(^Thread (0x[0-9A-Fa-f]+|\d+) \(([^)]*)\)(?:: "(.*)")?$)re");
  static const Regex frame_line(R"re(^    (\S.*?) \(([^():]+?)(?::(\d+))?\)$)re");
  std::vector<ThreadStack> out;
  bool in_thread = false;
  for (const auto& line : lines_of(text)) {
    RegexMatch m;
    if (thread_line.search(line, &m)) {
      ThreadStack t;
      t.format = StackFormat::PySpy;
      t.name = m.matched(3) ? m.str(3) : "Thread " + m.str(1);
      t.main = m.str(3) == "MainThread";
      out.push_back(t);
      in_thread = true;
      continue;
    }
    if (in_thread && frame_line.search(line, &m)) {
      StackFrame f;
      f.function = m.str(1);
      f.file = m.str(2);
      f.line = m.matched(3) ? std::stoi(m.str(3)) : 0;
      f.python = f.file.size() > 3 && f.file.compare(f.file.size() - 3, 3, ".py") == 0;
      out.back().frames.push_back(f);
      continue;
    }
    // Locals (--locals) are indented deeper; anything else ends the thread.
    if (line.rfind("        ", 0) != 0) in_thread = false;
  }
  for (auto& t : out) mark_python_main(t);
  return out;
}

// Python's faulthandler: `Thread 0x00007f... (most recent call first):` or,
// for the thread that took the signal, `Current thread 0x... [python3] (most
// recent call first):` (3.14 names the thread in brackets), then
// `  File "/tmp/hang.py", line 15 in on_step_end`.
std::vector<ThreadStack> parse_faulthandler_stacks(const std::string& text) {
  static const Regex thread_line(R"re(^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[(.*)\])? \(most recent call first\):$)re");
  static const Regex frame_line(R"re(^  File "(.*)", line (\d+|\?\?\?) in (.*)$)re");
  std::vector<ThreadStack> out;
  bool in_thread = false;
  for (const auto& line : lines_of(text)) {
    RegexMatch m;
    if (thread_line.search(line, &m)) {
      ThreadStack t;
      t.format = StackFormat::Faulthandler;
      t.name = m.str(1) + " " + m.str(2) + (m.matched(3) ? " [" + m.str(3) + "]" : "");
      out.push_back(t);
      in_thread = true;
      continue;
    }
    if (in_thread && frame_line.search(line, &m)) {
      StackFrame f;
      f.file = m.str(1);
      f.line = m.str(2) == "???" ? 0 : std::stoi(m.str(2));
      f.function = m.str(3);
      f.python = true;
      out.back().frames.push_back(f);
      continue;
    }
    in_thread = false;
  }
  for (auto& t : out) mark_python_main(t);
  return out;
}

std::vector<ThreadStack> parse_stacks(const std::string& text) {
  std::vector<ThreadStack> out = parse_faulthandler_stacks(text);
  for (auto& t : parse_py_spy_stacks(text)) out.push_back(std::move(t));
  for (auto& t : parse_gdb_stacks(text)) out.push_back(std::move(t));
  return out;
}

namespace {

// The frames the decision knows, innermost first in a thread deciding. Each
// has a recorded example in tests/unit/data/stacks/ (README.md there).
enum class FrameMeans { Waits, Idle };
struct KnownFrame {
  const char* function;  // a native name's prefix (gdb's, py-spy --native's)
  FrameMeans means;
};
const KnownFrame kNativeFrames[] = {
    // The caller of a collective waiting for its result (gloo-gdb-rank0-all_reduce.txt, main thread).
    {"c10d::Work::wait", FrameMeans::Waits},
    // A Gloo worker running the collective, waiting for a peer's data (the same file, a pt_gloo_runloop thread).
    {"gloo::transport::tcp::UnboundBuffer::waitRecv", FrameMeans::Waits},
    {"c10d::ProcessGroupGloo::AsyncWork::execute", FrameMeans::Waits},
    // DDP's end of backward on the main thread, waiting for its gradient
    // buckets' all_reduce (ddp-gdb-rank0-finalize_backward-torch*.txt).
    {"c10d::Reducer::finalize_backward", FrameMeans::Waits},
    // Threads every rank has, idle or not: a Gloo worker waiting for work, Gloo's
    // event loop (both files), NCCL's watchdog thread (gdb-nccl-workcleanuploop-core.txt).
    {"c10d::ProcessGroupGloo::runLoop", FrameMeans::Idle},
    {"gloo::transport::tcp::Loop::run", FrameMeans::Idle},
    {"c10d::ProcessGroupNCCL::workCleanupLoop", FrameMeans::Idle},
};

// torch.distributed's Python collectives (distributed_c10d.py): the
// faulthandler and py-spy fixtures show all_reduce and broadcast.
const std::set<std::string>& python_collectives() {
  static const std::set<std::string> names = {
      "all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "reduce", "reduce_scatter",
      "reduce_scatter_tensor", "broadcast", "broadcast_object_list", "barrier", "monitored_barrier", "all_to_all",
      "all_to_all_single", "gather", "gather_object", "scatter", "scatter_object_list", "send", "recv"};
  return names;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Autograd's entry into the C++ engine as the innermost Python frame: the
// thread is inside backward and no Python code of its own runs there (a
// custom autograd Function's would be innermost). Under DDP a rank stays
// there while it waits for the gradient all_reduce its hooks started; the
// Python stack shows nothing else of it (ddp-faulthandler-rank0-backward-*.txt).
bool in_autograd_engine(const StackFrame& f) {
  return (f.function == "backward" && ends_with(f.file, "torch/autograd/__init__.py")) ||
         (f.function == "_engine_run_backward" && ends_with(f.file, "torch/autograd/graph.py"));
}

}  // namespace

std::optional<CollectiveWait> thread_collective(const ThreadStack& t) {
  for (const auto& f : t.frames) {
    if (f.python) {
      if (ends_with(f.file, "distributed_c10d.py") && python_collectives().count(f.function))
        return CollectiveWait{f.function, f.function + " (" + f.file + ")"};
      if (&f == &t.frames.front() && in_autograd_engine(f))
        return CollectiveWait{"backward (the gradient all_reduce)", f.function + " (" + f.file + ")"};
      continue;
    }
    for (const auto& k : kNativeFrames)
      if (f.function.rfind(k.function, 0) == 0) {
        if (k.means == FrameMeans::Idle) return std::nullopt;
        return CollectiveWait{fmt::format("a collective ({})", k.function), f.function};
      }
  }
  return std::nullopt;
}

namespace {

// Library code, not where the program itself is: the interpreter's standard
// library and packages (absolute paths), torch, the standard modules py-spy
// names by a bare file name, and the interpreter's frozen modules
// ("<frozen runpy>").
bool library_frame(const StackFrame& f) {
  static const std::set<std::string> stdlib = {"threading.py", "queue.py", "selectors.py", "socket.py",
                                               "subprocess.py", "ssl.py", "connection.py", "synchronize.py",
                                               "popen_fork.py", "tempfile.py", "shutil.py", "os.py"};
  const std::string& p = f.file;
  if (p.find("site-packages/") != std::string::npos || p.find("dist-packages/") != std::string::npos) return true;
  if (p.find("/lib/python3") != std::string::npos || p.rfind("torch/", 0) == 0 || p.rfind("<frozen ", 0) == 0) return true;
  for (const char* d : {"multiprocessing/", "concurrent/", "asyncio/", "importlib/"})
    if (p.rfind(d, 0) == 0) return true;
  return stdlib.count(p) > 0;
}

std::string python_place(const StackFrame& f) {
  std::string file = !f.file.empty() && f.file[0] == '/' ? base_name(f.file) : f.file;
  return f.line > 0 ? fmt::format("{}:{} in {}", file, f.line, f.function) : fmt::format("{} in {}", file, f.function);
}

const ThreadStack* main_thread(const std::vector<ThreadStack>& threads, bool python) {
  const ThreadStack* any = nullptr;
  for (const auto& t : threads) {
    bool is_python = t.format != StackFormat::Gdb;
    if (is_python != python || t.frames.empty()) continue;
    if (t.main) return &t;
    if (!any) any = &t;
  }
  return any;
}

bool has_frames(const std::vector<ThreadStack>& threads) {
  return std::any_of(threads.begin(), threads.end(), [](const ThreadStack& t) { return !t.frames.empty(); });
}

// A DataLoader's worker process at work in the program's own code (its
// Dataset's __getitem__, a collate_fn): the innermost frame of the program
// inside torch's worker loop; none when it waits for work in the loop
// itself, or is no DataLoader worker (a multiprocessing forkserver).
std::optional<std::string> worker_place(const ChildStacks& c) {
  const ThreadStack* py = main_thread(c.threads, true);
  if (!py) return std::nullopt;
  const StackFrame* own = nullptr;
  for (const auto& f : py->frames) {
    if (f.function == "_worker_loop" && ends_with(f.file, "torch/utils/data/_utils/worker.py"))
      return own ? std::optional<std::string>(python_place(*own)) : std::nullopt;
    if (!own && !library_frame(f)) own = &f;
  }
  return std::nullopt;
}

// "waits for its DataLoader: worker pid 812 at data.py:20 in __getitem__",
// when its main thread is inside torch's DataLoader between `frames`' inner
// and its program's frame `user`.
std::optional<std::string> loader_wait(const RankEvidence& r, const std::vector<StackFrame>& frames, const StackFrame* user) {
  bool in_loader = false;
  for (const auto& f : frames) {
    if (&f == user) break;
    if (ends_with(f.file, "torch/utils/data/dataloader.py")) in_loader = true;
  }
  if (!in_loader) return std::nullopt;
  std::vector<std::pair<std::string, std::vector<std::string>>> at;  // place, worker pids
  for (const auto& c : r.children)
    if (auto place = worker_place(c)) {
      auto a = std::find_if(at.begin(), at.end(), [&](const auto& x) { return x.first == *place; });
      if (a == at.end()) a = at.insert(at.end(), {*place, {}});
      a->second.push_back(std::to_string(c.pid));
    }
  if (at.empty()) return "waits for its DataLoader's workers";
  std::vector<std::string> parts;
  for (const auto& [place, pids] : at)
    parts.push_back(fmt::format("{} pid {} at {}", pids.size() == 1 ? "worker" : "workers", join(pids, ", "), place));
  return "waits for its DataLoader: " + join(parts, "; ");
}

// Where a rank is: its main thread's innermost frame of the program itself,
// and, in parentheses, what it is inside (its DataLoader's workers and where
// they are, a library frame, else gdb's innermost named native frame).
std::string where_of(const RankEvidence& r) {
  // A rank whose own process shows no Python (a shell wrapper that did not
  // exec its program) is where its Python child is.
  auto python = [](const std::vector<ThreadStack>& ts) { return main_thread(ts, true) != nullptr; };
  const std::vector<ThreadStack>* threads = &r.threads;
  if (!python(r.threads))
    for (const auto& c : r.children)
      if (python(c.threads) || (!has_frames(*threads) && has_frames(c.threads))) {
        threads = &c.threads;
        if (python(c.threads)) break;
      }
  const ThreadStack* py = main_thread(*threads, true);
  const ThreadStack* native = main_thread(*threads, false);
  std::string native_inner;
  if (native)
    for (const auto& f : native->frames)
      if (f.function != "??" && !f.function.empty()) {
        native_inner = f.function;
        break;
      }
  if (py) {
    const StackFrame* user = nullptr;
    for (const auto& f : py->frames)
      if (!library_frame(f)) {
        user = &f;
        break;
      }
    const StackFrame& inner = py->frames.front();
    if (!user) return python_place(inner) + (native_inner.empty() ? "" : " (" + native_inner + ")");
    std::string inside = user != &inner ? fmt::format("{} in {}", inner.function, base_name(inner.file)) : native_inner;
    if (auto loader = loader_wait(r, py->frames, user)) inside = *loader;
    return python_place(*user) + (inside.empty() ? "" : " (" + inside + ")");
  }
  if (!native_inner.empty()) return native_inner;
  return "an unknown frame";
}

std::string rank_name(const RankEvidence& r) {
  return r.rank ? fmt::format("rank {}", *r.rank) : fmt::format("task {}", r.task);
}

// "rank 1 (g1)", "ranks 0, 2, 3 (g1, g2)"
std::string describe(const std::vector<const RankEvidence*>& rs) {
  if (rs.empty()) return "";
  if (rs.size() == 1) return rank_name(*rs[0]) + (rs[0]->node.empty() ? "" : " (" + rs[0]->node + ")");
  // Ranks, then processes known by their task only (a launcher beside its
  // workers): "ranks 0, 1, 2, 3 and tasks 0, 1 (g1, g2)".
  std::vector<std::string> ranks, tasks, nodes;
  for (const auto* r : rs) {
    (r->rank ? ranks : tasks).push_back(std::to_string(r->rank ? *r->rank : r->task));
    if (!r->node.empty() && std::find(nodes.begin(), nodes.end(), r->node) == nodes.end()) nodes.push_back(r->node);
  }
  auto some = [](const char* one, const char* many, const std::vector<std::string>& ids) {
    return ids.empty() ? std::string() : fmt::format("{} {}", ids.size() == 1 ? one : many, join(ids, ", "));
  };
  std::string who = some("rank", "ranks", ranks);
  if (!tasks.empty()) who += (who.empty() ? "" : " and ") + some("task", "tasks", tasks);
  return who + (nodes.empty() ? "" : " (" + join(nodes, ", ") + ")");
}

std::string collectives_text(const std::vector<std::string>& labels) {
  std::vector<std::string> distinct;
  for (const auto& l : labels)
    if (std::find(distinct.begin(), distinct.end(), l) == distinct.end()) distinct.push_back(l);
  return distinct.size() == 1 ? distinct[0] : "collectives (" + join(distinct, ", ") + ")";
}

}  // namespace

std::string describe_ranks(const std::vector<const RankEvidence*>& ranks) { return describe(ranks); }

CulpritVerdict decide_culprit(const std::vector<RankEvidence>& ranks) {
  CulpritVerdict by_stacks = decide_by_stacks(ranks);
  std::optional<CulpritVerdict> by_counters = decide_by_collectives(ranks);
  if (!by_counters) return by_stacks;
  if (by_counters->kind == CulpritKind::Named) return *by_counters;
  if (by_stacks.kind == CulpritKind::Named) {
    by_stacks.text += "; " + by_counters->text;
    return by_stacks;
  }
  by_counters->text += "; " + by_stacks.text;
  return *by_counters;
}

CulpritVerdict decide_by_stacks(const std::vector<RankEvidence>& ranks) {
  CulpritVerdict v;
  std::vector<const RankEvidence*> with, without, in, out;
  std::vector<std::string> labels;
  for (const auto& r : ranks) {
    bool any = has_frames(r.threads) ||
               std::any_of(r.children.begin(), r.children.end(), [](const ChildStacks& c) { return has_frames(c.threads); });
    (any ? with : without).push_back(&r);
    if (!any) continue;
    // A Python frame names the collective best, then the main thread's wait;
    // the rank's own processes count (where a wrapper started the program).
    std::optional<CollectiveWait> wait;
    int best = -1;
    auto consider = [&](const std::vector<ThreadStack>& threads) {
      for (const auto& t : threads)
        if (auto w = thread_collective(t)) {
          int score = (w->collective.rfind("a collective", 0) != 0 ? 2 : 0) + (t.main ? 1 : 0);
          if (score > best) wait = w, best = score;
        }
    };
    consider(r.threads);
    for (const auto& c : r.children) consider(c.threads);
    if (wait) {
      in.push_back(&r);
      labels.push_back(wait->collective);
    } else {
      out.push_back(&r);
    }
  }
  std::string missing;
  if (!without.empty() && !with.empty()) {
    std::vector<std::string> whys;
    for (const auto* r : without)
      if (!r->no_stacks_why.empty() && std::find(whys.begin(), whys.end(), r->no_stacks_why) == whys.end())
        whys.push_back(r->no_stacks_why);
    missing = "; no stacks from " + describe(without) + (whys.empty() ? "" : ": " + join(whys, "; "));
  }
  if (with.empty()) {
    v.kind = CulpritKind::NoStacks;
    std::vector<std::string> whys;
    for (const auto& r : ranks)
      if (!r.no_stacks_why.empty() && std::find(whys.begin(), whys.end(), r.no_stacks_why) == whys.end())
        whys.push_back(r.no_stacks_why);
    v.text = "no stacks to tell the ranks apart" + (whys.empty() ? std::string() : " (" + join(whys, "; ") + ")");
    return v;
  }
  if (with.size() == 1) {
    v.kind = CulpritKind::OneRank;
    v.text = fmt::format("only {}'s stacks were read, nothing to compare them with ({} {}){}", describe(with),
                         in.empty() ? "not in a collective, at" : "waiting in", in.empty() ? where_of(*out[0]) : labels[0],
                         missing);
    return v;
  }
  if (out.empty()) {
    v.kind = CulpritKind::AllInCollective;
    v.text = fmt::format("every rank's stacks show it waiting in {}, so none stands out by its stack{}",
                         collectives_text(labels), missing);
    return v;
  }
  if (in.empty()) {
    v.kind = CulpritKind::NoneInCollective;
    v.text = fmt::format("no rank is in a collective, so the stacks name no culprit{}", missing);
    return v;
  }
  v.kind = CulpritKind::Named;
  std::vector<std::string> wheres;
  for (const auto* r : out) {
    std::string w = where_of(*r);
    if (r->cpu_pct && *r->cpu_pct > 5) w += fmt::format(", using {:.0f}% of a core", *r->cpu_pct);
    wheres.push_back(w);
    v.culprits.push_back({r->task, r->rank, r->node, w});
  }
  std::string at;
  if (std::all_of(wheres.begin(), wheres.end(), [&](const std::string& w) { return w == wheres[0]; })) {
    at = "at " + wheres[0];
  } else {
    std::vector<std::string> each;
    for (size_t i = 0; i < out.size(); i++) each.push_back(rank_name(*out[i]) + " at " + wheres[i]);
    at = join(each, "; ");
  }
  v.text = fmt::format("{} {} not in a collective — {}; {} {} in {}{}", describe(out), out.size() == 1 ? "is" : "are", at,
                       describe(in), in.size() == 1 ? "waits" : "wait", collectives_text(labels), missing);
  return v;
}

std::string describe_stack_sources(const std::vector<RankEvidence>& ranks) {
  std::vector<std::pair<std::string, std::vector<const RankEvidence*>>> ways;
  for (const auto& r : ranks) {
    std::vector<std::string> names;
    for (StackFormat f : r.taken_by) names.push_back(stack_format_name(f));
    std::string how = names.empty() ? "none" : join(names, " and ");
    auto w = std::find_if(ways.begin(), ways.end(), [&](const auto& x) { return x.first == how; });
    if (w == ways.end()) w = ways.insert(ways.end(), {how, {}});
    w->second.push_back(&r);
  }
  std::vector<std::string> parts;
  for (const auto& [how, rs] : ways) parts.push_back(how + ": " + describe(rs));
  return join(parts, "; ");
}

std::vector<RankEvidence> read_stacks_file(const std::string& text, const std::string& node) {
  static const Regex header(
      R"re(^(## )?pid (\d+) \((rank|task) (-?\d+)(?:, (launcher|child of pid \d+))?\), state [^:]*:(.*)$)re");
  static const Regex state_line(R"re(^pid (\d+): (.*)$)re");
  std::vector<RankEvidence> out;
  std::vector<std::pair<int, TrainerState>> states;  // pid, the bundled trainer's answer
  bool asked = false;  // in the trainer's answers
  std::vector<std::pair<int, int>> main_pids;  // (pid, index in out)
  struct Child {
    bool rank;
    int id;
    ChildStacks stacks;
  };
  std::vector<Child> children;
  // The section being read: its threads go to `into` (nothing for a
  // launcher), and the way it was taken to `way_of`'s taken_by, when it gave
  // frames (a gdb that did not finish in time gave none).
  std::vector<ThreadStack>* into = nullptr;
  int way_of = -1;
  std::optional<StackFormat> way;
  std::string section;
  auto close = [&] {
    if (into) {
      std::vector<ThreadStack> threads = parse_stacks(section);
      if (way_of >= 0 && way && has_frames(threads)) {
        auto& taken = out[static_cast<size_t>(way_of)].taken_by;
        if (std::find(taken.begin(), taken.end(), *way) == taken.end()) taken.push_back(*way);
      }
      for (auto& t : threads) into->push_back(std::move(t));
    }
    into = nullptr;
    way_of = -1;
    way.reset();
    section.clear();
  };
  for (const auto& line : lines_of(text)) {
    RegexMatch m;
    if (header.search(line, &m)) {
      close();
      asked = false;
      int pid = std::stoi(m.str(2));
      bool is_rank = m.str(3) == "rank";
      int id = std::stoi(m.str(4));
      std::string role = m.matched(5) ? m.str(5) : "";
      bool open = m.matched(1);
      std::string how = trim(m.str(6));
      if (role == "launcher") continue;  // not a rank: its sections are skipped
      if (!role.empty()) {  // a child of the rank's process
        auto c = std::find_if(children.begin(), children.end(), [&](const Child& x) { return x.stacks.pid == pid; });
        if (c == children.end()) c = children.insert(children.end(), {is_rank, id, ChildStacks{pid, {}}});
        if (open) into = &c->stacks.threads;
        continue;
      }
      // The same process again: another way its stacks were taken (gdb after faulthandler).
      auto seen = std::find_if(main_pids.begin(), main_pids.end(), [&](const auto& p) { return p.first == pid; });
      if (seen == main_pids.end()) {
        RankEvidence r;
        r.node = node;
        r.task = id;
        r.pid = pid;
        if (is_rank) r.rank = id;
        out.push_back(r);
        seen = main_pids.insert(main_pids.end(), {pid, static_cast<int>(out.size()) - 1});
      }
      RankEvidence& r = out[static_cast<size_t>(seen->second)];
      if (open) {
        into = &r.threads;
        way_of = seen->second;
        for (StackFormat f : {StackFormat::Faulthandler, StackFormat::PySpy, StackFormat::Gdb})
          if (how.rfind(stack_format_name(f), 0) == 0) way = f;
      } else if (r.no_stacks_why.empty()) {
        r.no_stacks_why = how;
      }
      continue;
    }
    if (line.rfind("## ", 0) == 0) {  // another part of the file
      close();
      asked = line.rfind("## where the bundled trainer's workers say", 0) == 0;
      continue;
    }
    if (asked && state_line.search(line, &m)) {
      if (auto s = parse_trainer_state(m.str(2))) states.emplace_back(std::stoi(m.str(1)), *s);
      continue;
    }
    if (into) section += line + "\n";
  }
  close();
  for (auto& [pid, state] : states)
    for (auto& r : out)
      if (r.pid == pid) {
        if (!r.rank) r.rank = state.rank;
        r.trainer = state;
      }
  for (auto& c : children) {
    auto r = std::find_if(out.begin(), out.end(), [&](const RankEvidence& x) { return c.rank ? x.rank == c.id : !x.rank && x.task == c.id; });
    if (r != out.end()) r->children.push_back(std::move(c.stacks));
  }
  return out;
}

}  // namespace ddpctl

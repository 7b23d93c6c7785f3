#include "agent/culprit_stacks.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

#include "base/text.hpp"

namespace ddpctl {

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
  std::string file = !f.file.empty() && f.file[0] == '/' ? file_name_of(f.file) : f.file;
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
    std::string inside = user != &inner ? fmt::format("{} in {}", inner.function, file_name_of(inner.file)) : native_inner;
    if (auto loader = loader_wait(r, py->frames, user)) inside = *loader;
    return python_place(*user) + (inside.empty() ? "" : " (" + inside + ")");
  }
  if (!native_inner.empty()) return native_inner;
  return "an unknown frame";
}

std::string collectives_text(const std::vector<std::string>& labels) {
  std::vector<std::string> distinct;
  for (const auto& l : labels)
    if (std::find(distinct.begin(), distinct.end(), l) == distinct.end()) distinct.push_back(l);
  return distinct.size() == 1 ? distinct[0] : "collectives (" + join(distinct, ", ") + ")";
}

// The ranks sorted by their stacks: with frames or without; of those with,
// in a collective (and which) or not.
struct ByStacks {
  std::vector<const RankEvidence*> with, without, in, out;
  std::vector<std::string> labels;  // the collective of each of `in`
};

ByStacks sort_by_stacks(const std::vector<RankEvidence>& ranks) {
  ByStacks b;
  for (const auto& r : ranks) {
    bool any = has_frames(r.threads) ||
               std::any_of(r.children.begin(), r.children.end(), [](const ChildStacks& c) { return has_frames(c.threads); });
    (any ? b.with : b.without).push_back(&r);
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
      b.in.push_back(&r);
      b.labels.push_back(wait->collective);
    } else {
      b.out.push_back(&r);
    }
  }
  return b;
}

// Each rank's own reason it gave no stacks, once each.
std::vector<std::string> no_stacks_whys(const std::vector<const RankEvidence*>& ranks) {
  std::vector<std::string> whys;
  for (const auto* r : ranks)
    if (!r->no_stacks_why.empty() && std::find(whys.begin(), whys.end(), r->no_stacks_why) == whys.end())
      whys.push_back(r->no_stacks_why);
  return whys;
}

// The ranks out of any collective named, where each is, while `b.in` wait.
CulpritVerdict name_culprits(const ByStacks& b, const std::string& missing) {
  CulpritVerdict v;
  v.kind = CulpritKind::Named;
  std::vector<std::string> wheres;
  for (const auto* r : b.out) {
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
    for (size_t i = 0; i < b.out.size(); i++) each.push_back(rank_name(*b.out[i]) + " at " + wheres[i]);
    at = join(each, "; ");
  }
  v.text = fmt::format("{} {} not in a collective — {}; {} {} in {}{}", describe_ranks(b.out),
                       b.out.size() == 1 ? "is" : "are", at, describe_ranks(b.in), b.in.size() == 1 ? "waits" : "wait",
                       collectives_text(b.labels), missing);
  return v;
}

}  // namespace

CulpritVerdict decide_by_stacks(const std::vector<RankEvidence>& ranks) {
  CulpritVerdict v;
  ByStacks b = sort_by_stacks(ranks);
  std::string missing;
  if (!b.without.empty() && !b.with.empty()) {
    std::vector<std::string> whys = no_stacks_whys(b.without);
    missing = "; no stacks from " + describe_ranks(b.without) + (whys.empty() ? "" : ": " + join(whys, "; "));
  }
  if (b.with.empty()) {
    v.kind = CulpritKind::NoStacks;
    std::vector<const RankEvidence*> all;
    for (const auto& r : ranks) all.push_back(&r);
    std::vector<std::string> whys = no_stacks_whys(all);
    v.text = "no stacks to tell the ranks apart" + (whys.empty() ? std::string() : " (" + join(whys, "; ") + ")");
    return v;
  }
  if (b.with.size() == 1) {
    v.kind = CulpritKind::OneRank;
    v.text = fmt::format("only {}'s stacks were read, nothing to compare them with ({} {}){}", describe_ranks(b.with),
                         b.in.empty() ? "not in a collective, at" : "waiting in",
                         b.in.empty() ? where_of(*b.out[0]) : b.labels[0], missing);
    return v;
  }
  if (b.out.empty()) {
    v.kind = CulpritKind::AllInCollective;
    v.text = fmt::format("every rank's stacks show it waiting in {}, so none stands out by its stack{}",
                         collectives_text(b.labels), missing);
    return v;
  }
  if (b.in.empty()) {
    v.kind = CulpritKind::NoneInCollective;
    v.text = fmt::format("no rank is in a collective, so the stacks name no culprit{}", missing);
    return v;
  }
  return name_culprits(b, missing);
}

}  // namespace ddpctl

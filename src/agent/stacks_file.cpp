#include "agent/stacks_file.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "base/regex.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

// One pass over the file's lines; a section's text is parsed when the next
// heading (or the end) closes it.
class StacksFileReader {
 public:
  explicit StacksFileReader(const std::string& node) : node_(node) {}
  void line(const std::string& line);
  std::vector<RankEvidence> finish();

 private:
  void close();
  void header(const RegexMatch& m);
  struct Child {
    bool rank;
    int id;
    ChildStacks stacks;
  };
  std::string node_;
  std::vector<RankEvidence> out_;
  std::vector<std::pair<int, TrainerState>> states_;  // pid, the bundled trainer's answer
  bool asked_ = false;  // in the trainer's answers
  std::vector<std::pair<int, int>> main_pids_;  // (pid, index in out_)
  std::vector<Child> children_;
  // The section being read: its threads go to `into_` (nothing for a
  // launcher), and the way it was taken to `way_of_`'s taken_by, when it gave
  // frames (a gdb that did not finish in time gave none).
  std::vector<ThreadStack>* into_ = nullptr;
  int way_of_ = -1;
  std::optional<StackFormat> way_;
  std::string section_;
};

void StacksFileReader::close() {
  if (into_) {
    std::vector<ThreadStack> threads = parse_stacks(section_);
    if (way_of_ >= 0 && way_ && has_frames(threads)) {
      auto& taken = out_[static_cast<size_t>(way_of_)].taken_by;
      if (std::find(taken.begin(), taken.end(), *way_) == taken.end()) taken.push_back(*way_);
    }
    for (auto& t : threads) into_->push_back(std::move(t));
  }
  into_ = nullptr;
  way_of_ = -1;
  way_.reset();
  section_.clear();
}

// "## pid N (rank R), state S: HOW" opens a section; without "## " the
// line says why the process has none.
void StacksFileReader::header(const RegexMatch& m) {
  close();
  asked_ = false;
  int pid = std::stoi(m.str(2));
  bool is_rank = m.str(3) == "rank";
  int id = std::stoi(m.str(4));
  std::string role = m.matched(5) ? m.str(5) : "";
  bool open = m.matched(1);
  std::string how = trim(m.str(6));
  if (role == "launcher") return;  // not a rank: its sections are skipped
  if (!role.empty()) {  // a child of the rank's process
    auto c = std::find_if(children_.begin(), children_.end(), [&](const Child& x) { return x.stacks.pid == pid; });
    if (c == children_.end()) c = children_.insert(children_.end(), {is_rank, id, ChildStacks{pid, {}}});
    if (open) into_ = &c->stacks.threads;
    return;
  }
  // The same process again: another way its stacks were taken (gdb after faulthandler).
  auto seen = std::find_if(main_pids_.begin(), main_pids_.end(), [&](const auto& p) { return p.first == pid; });
  if (seen == main_pids_.end()) {
    RankEvidence r;
    r.node = node_;
    r.task = id;
    r.pid = pid;
    if (is_rank) r.rank = id;
    out_.push_back(r);
    seen = main_pids_.insert(main_pids_.end(), {pid, static_cast<int>(out_.size()) - 1});
  }
  RankEvidence& r = out_[static_cast<size_t>(seen->second)];
  if (open) {
    into_ = &r.threads;
    way_of_ = seen->second;
    for (StackFormat f : {StackFormat::Faulthandler, StackFormat::PySpy, StackFormat::Gdb})
      if (how.rfind(stack_format_name(f), 0) == 0) way_ = f;
  } else if (r.no_stacks_why.empty()) {
    r.no_stacks_why = how;
  }
}

void StacksFileReader::line(const std::string& line) {
  static const Regex header_line(
      R"re(^(## )?pid (\d+) \((rank|task) (-?\d+)(?:, (launcher|child of pid \d+))?\), state [^:]*:(.*)$)re");
  static const Regex state_line(R"re(^pid (\d+): (.*)$)re");
  RegexMatch m;
  if (header_line.search(line, &m)) {
    header(m);
    return;
  }
  if (line.rfind("## ", 0) == 0) {  // another part of the file
    close();
    asked_ = line.rfind("## where the bundled trainer's workers say", 0) == 0;
    return;
  }
  if (asked_ && state_line.search(line, &m)) {
    if (auto s = parse_trainer_state(m.str(2))) states_.emplace_back(std::stoi(m.str(1)), *s);
    return;
  }
  if (into_) section_ += line + "\n";
}

// The trainer's answers go to their processes, the children to their ranks.
std::vector<RankEvidence> StacksFileReader::finish() {
  close();
  for (auto& [pid, state] : states_)
    for (auto& r : out_)
      if (r.pid == pid) {
        if (!r.rank) r.rank = state.rank;
        r.trainer = state;
      }
  for (auto& c : children_) {
    auto r = std::find_if(out_.begin(), out_.end(), [&](const RankEvidence& x) { return c.rank ? x.rank == c.id : !x.rank && x.task == c.id; });
    if (r != out_.end()) r->children.push_back(std::move(c.stacks));
  }
  return std::move(out_);
}

}  // namespace

std::vector<RankEvidence> read_stacks_file(const std::string& text, const std::string& node) {
  StacksFileReader reader(node);
  for (const auto& line : stack_text_lines(text)) reader.line(line);
  return reader.finish();
}

}  // namespace ddpctl

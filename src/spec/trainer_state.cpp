#include "spec/trainer_state.hpp"

#include "base/regex.hpp"
#include "base/values.hpp"

namespace ddpctl {

std::optional<TrainerState> parse_trainer_state(const std::string& line) {
  // Collective names hold no comma (state_dump.hpp), so ", left #" splits them.
  static const Regex re(
      R"re(^ddp-train: (?:rank (\d+)(?: of \d+)?: )?(.*?)(?: for (\d+) s)?(; collectives: (?:none yet|entered #(\d+) (.+), left #(\d+) (.+)))?\n?$)re");
  RegexMatch m;
  if (!re.full_match(line, &m)) return std::nullopt;
  TrainerState s;
  std::string problem;
  auto number = [&](size_t group) -> std::optional<long long> {
    return m.matched(group) ? parse_int(m.str(group), 0, 1LL << 62, &problem) : std::nullopt;
  };
  if (auto r = number(1); r && *r <= 1 << 30) s.rank = static_cast<int>(*r);
  s.phase = m.str(2);
  s.for_s = number(3);
  s.counted = m.matched(4);
  if (m.matched(5)) {
    auto e = number(5), l = number(7);
    if (!e || !l || *l > *e) return std::nullopt;  // left a collective it never entered: not the trainer's line
    s.entered = {static_cast<std::uint64_t>(*e), m.str(6)};
    s.left = {static_cast<std::uint64_t>(*l), m.str(8)};
  }
  return s;
}

}  // namespace ddpctl

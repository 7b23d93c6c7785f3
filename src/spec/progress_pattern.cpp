#include "spec/progress_pattern.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "base/text.hpp"

namespace ddpctl {

namespace {

const char* kNumber = R"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)";

}  // namespace

const std::vector<std::string>& progress_group_names() {
  static const std::vector<std::string> names = {"epoch", "epochs", "step", "steps", "loss", "samples_per_s", "it_per_s"};
  return names;
}

std::vector<std::string> progress_preset_names() { return {"seed", "huggingface", "lightning"}; }

std::optional<ProgressSpec> progress_preset(const std::string& name) {
  std::string n = kNumber;
  ProgressSpec p;
  if (name == "seed") {
    p.pattern = R"(Epoch \[(?<epoch>\d+)/(?<epochs>\d+)\].*?Loss[^:]*: (?<loss>)" + n +
                R"().*?Throughput: (?<samples_per_s>)" + n + ") img/s";
  } else if (name == "huggingface") {
    // transformers 5 quotes the values ({'loss': '5.384', ..., 'epoch': '0.07937'}); 4 did not.
    p.pattern = R"(\{'loss': '?(?<loss>)" + n + R"()'?,.*'epoch': '?(?<epoch>)" + n + R"()'?\})";
  } else if (name == "lightning") {
    // tqdm's rate is "9.52it/s", "2.50s/it" when slow, or "?it/s" before the first;
    // a loader of unknown length counts "5/?" (Lightning 2).
    p.pattern = R"(Epoch (?<epoch>\d+):.*?\| *(?<step>\d+)/(?:(?<steps>\d+)|\?) \[[^\]]*?(?:(?<it_per_s>)" + n +
                R"()it/s|)" + n + R"(s/it|\?it/s)(?:[^\]]*loss=(?<loss>)" + n + "))?";
    p.epoch_base = 0;
  } else {
    return std::nullopt;
  }
  p.preset = name;
  return p;
}

std::optional<CompiledPattern> compile_progress_pattern(const std::string& pattern, std::string* problem) {
  // RE2 of Debian 12 (2022) knows only (?P<name>...): (?<name>...), as
  // PCRE, JavaScript, Java and the presets write it, is read as the same.
  std::vector<std::string> named;
  std::string regex = with_p_names(pattern, &named);
  const auto& known = progress_group_names();
  for (size_t k = 0; k < named.size(); ++k) {
    const std::string& name = named[k];
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      *problem = fmt::format("names a group {}{}; the groups ddpctl reads are {}", printable(name),
                             did_you_mean(name, known), join(known, ", "));
      return std::nullopt;
    }
    if (std::find(named.begin(), named.begin() + static_cast<long>(k), name) != named.begin() + static_cast<long>(k)) {
      *problem = "names the group " + name + " twice";
      return std::nullopt;
    }
  }
  std::string engine;
  auto re = Regex::compile(regex, &engine);
  if (!re) {
    *problem = "is not a regular expression ddpctl can use (RE2 syntax: no backreferences or lookaround): " +
               plain_line(engine, 200);
    return std::nullopt;
  }
  CompiledPattern c{*re, {}};
  // The engine's own reading of the groups has the last word.
  for (const auto& [name, number] : c.regex.named_groups()) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      *problem = fmt::format("names a group {}; the groups ddpctl reads are {}", printable(name), join(known, ", "));
      return std::nullopt;
    }
    c.groups[name] = number;
  }
  if (!c.groups.count("epoch") && !c.groups.count("step")) {
    *problem = "has neither an epoch nor a step group, so progress cannot be read from it";
    return std::nullopt;
  }
  return c;
}

}  // namespace ddpctl

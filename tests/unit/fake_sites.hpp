#pragma once
// Sites of a race across sites as scripted answers (sites/site_call.hpp),
// for the coordinator's, status's and cancel's tests: each site answers
// through its handler (none: "ssh: connection refused"), and what each was
// asked is recorded. Calls come from several threads at once
// (site_polls.hpp): they are recorded and answered under one mutex, but for
// the sites in `unlocked`, whose handlers may block (a hung site) and touch
// only what is theirs.
#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "sites/site_call.hpp"

namespace ddpctl::test {

struct FakeSites : SiteCaller {
  using Handler = std::function<std::string(const std::vector<std::string>&)>;
  std::map<std::string, Handler> answer;
  std::set<std::string> unlocked;
  std::vector<std::pair<std::string, std::vector<std::string>>> asked;
  mutable std::recursive_mutex mutex;

  std::string call(const SiteOfRace& site, const std::vector<std::string>& words, std::string& error) override {
    Handler h;
    {
      std::lock_guard<std::recursive_mutex> hold(mutex);
      asked.emplace_back(site.name, words);
      auto it = answer.find(site.name);
      if (it == answer.end()) {
        error = "ssh: connection refused";
        return "";
      }
      h = it->second;
      if (!unlocked.count(site.name)) return h(words);
    }
    return h(words);
  }
  size_t calls_to(const std::string& name) const {
    std::lock_guard<std::recursive_mutex> hold(mutex);
    return std::count_if(asked.begin(), asked.end(), [&](const auto& a) { return a.first == name; });
  }
};

// Whether `words` carry the option `option` (as "--grant" "7" or "--grant=7").
inline bool has_word(const std::vector<std::string>& words, const std::string& option) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) {
    return w == option || w.rfind(option + "=", 0) == 0;
  });
}

// The value of `option` in `words` ("" when absent).
inline std::string word_value(const std::vector<std::string>& words, const std::string& option) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind(option + "=", 0) == 0) return words[i].substr(option.size() + 1);
    if (words[i] == option && i + 1 < words.size()) return words[i + 1];
  }
  return "";
}

}  // namespace ddpctl::test

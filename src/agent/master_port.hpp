#pragma once
// The node check's network part (node_check.hpp): whether the first node's
// rendezvous port (MASTER_PORT) can be listened on there and reached from
// every other node. Each connecting node says its name and waits for "ok",
// so the listener knows which nodes reached it.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"

namespace ddpctl {

// Connects to host:port until `deadline_s`; nullopt when it connected and
// the listener answered, else why not ("connection timed out after 10s").
std::optional<std::string> reach_listener(const std::string& addr, int port, const std::string& self, double deadline_s,
                                          Clock& clock);

// Listens on `port` until `peers` nodes have connected or `deadline_s`
// passed; the names of the nodes that connected. A problem when it cannot
// listen (the port is taken).
struct ListenResult {
  std::optional<std::string> problem;
  std::vector<std::string> connected;
  int port = 0;  // the port it listened on (for port 0: the one chosen)
};
ListenResult listen_for_peers(int port, int peers, double deadline_s, Clock& clock,
                              const std::function<void(int)>& on_listening = {});

}  // namespace ddpctl

// ddpctl doctor: what this site's Slurm can do, and a cluster profile draft
// (src/assist/doctor.hpp).
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/app.hpp"
#include "cli/json_output.hpp"
#include "cli/common.hpp"
#include "assist/doctor.hpp"
#include "base/files.hpp"
#include "base/paths.hpp"
#include "remote/remote_call.hpp"
#include "base/text.hpp"

namespace ddpctl::cli {

void setup_doctor(CLI::App& app, Context& ctx) {
  struct Options {
    std::string output, name, on;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("doctor", "Probe this site's Slurm and draft a cluster profile for it");
  cmd->add_option("-o,--output", o->output, "Write the profile draft to this file instead of stdout");
  cmd->add_option("--name", o->name, "Name of the profile (default: Slurm's ClusterName)");
  CLI::Option* on = cmd->add_option("--on", o->on,
                                    "Probe the Slurm of this login host from here, through your own ssh (user@host or "
                                    "a Host of your ~/.ssh/config; docs/remote.md)");
  cmd->callback([o, on, &ctx] {
    SiteReport site;
    if (on->count() > 0) {  // `--on ''` too: ssh_connect refuses it, never probes here
      RemoteSession remote(remote_target(RemoteOptions{o->on, "", true}, ctx), ctx.runner);
      std::vector<std::string> said;
      site = diagnose_remote_site(remote, o->name, utc_now_iso(), said);
      for (const auto& line : said) std::cerr << line << '\n';
    } else {
      site = diagnose_site(ctx.slurm, o->name, utc_now_iso());
    }
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : site.checks) checks.push_back({{"check", c.what}, {"ok", c.ok}, {"detail", c.detail}});
    json_fact("checks", checks);
    for (const auto& c : site.checks)
      std::cerr << fmt::format("{:<28} {} {}\n", c.what, c.ok ? paint("ok  ", Tone::Good) : paint("FAIL", Tone::Bad),
                               c.detail);
    if (!site.fatal.empty()) throw UserError(site.fatal);
    json_fact("profile_yaml", site.profile_yaml);
    if (!o->output.empty()) json_fact("file", o->output);
    if (o->output.empty()) {
      std::cout << site.profile_yaml;
    } else {
      write_file_atomic(o->output, site.profile_yaml);
      std::cerr << "wrote " << o->output << "\n";
    }
    std::cerr << "ddpctl: note: check the draft, then keep it as NAME.yaml where ddpctl looks for profiles: "
                 "~/.config/ddpctl/clusters/ for you, or for every user of this site "
              << join(site_cluster_dirs(), " or ") << "/; specs then say `cluster: NAME`\n";
  });
}

}  // namespace ddpctl::cli

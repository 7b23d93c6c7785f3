// ddpctl completion bash|zsh, and the hidden __complete and __man: the
// commands' CLI11 definitions described as plain data, handed to the core
// (command_docs.hpp), which makes the candidates, the scripts and the pages.
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "assist/command_docs.hpp"

namespace ddpctl::cli {

namespace {

ProgramDoc describe(const CLI::App& app) {
  ProgramDoc p;
  p.description = app.get_description();
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    CommandDoc c;
    c.name = s->get_name();
    c.description = s->get_description();
    c.hidden = s->get_group().empty() || c.name.rfind("__", 0) == 0;
    for (const CLI::Option* o : s->get_options()) {
      OptionDoc d;
      for (const auto& l : o->get_lnames()) d.names.push_back("--" + l);
      for (const auto& n : o->get_snames()) d.names.push_back("-" + n);
      d.long_name = o->get_lnames().empty() ? "" : o->get_lnames().front();
      if (o->get_positional()) d.positional_name = o->get_name(true);
      d.description = o->get_description();
      d.type_name = o->get_type_name();
      d.takes_value = !d.type_name.empty();
      d.required = o->get_required();
      d.many = o->get_items_expected_max() > 1;
      c.options.push_back(d);
    }
    p.commands.push_back(c);
  }
  return p;
}

}  // namespace

void setup_docs(CLI::App& app, Context& ctx) {
  auto shell = std::make_shared<std::string>();
  CLI::App* completion = app.add_subcommand("completion", "Print the shell completion script (bash or zsh)");
  completion->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  completion->callback([shell] { std::cout << completion_script(*shell); });

  // `ddpctl __complete CWORD WORD...`: every word after CWORD as it is, options included.
  auto cword = std::make_shared<size_t>(0);
  CLI::App* c = app.add_subcommand("__complete", "Completion candidates (for the completion scripts)")->group("");
  c->add_option("cword", *cword)->required();
  c->prefix_command();
  c->callback([&app, c, cword] {
    std::vector<std::string> words = c->remaining();
    if (words.empty()) return;
    for (const auto& w : complete(describe(app), words, *cword)) std::cout << w << '\n';
  });

  auto dir = std::make_shared<std::string>();
  CLI::App* man = app.add_subcommand("__man", "Write the man pages into a folder (at build time)")->group("");
  man->add_option("dir", *dir)->required();
  man->callback([&app, dir, &ctx] { write_man_pages(describe(app), *dir, ctx); });
}

}  // namespace ddpctl::cli

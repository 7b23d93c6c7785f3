#include "cli/app.hpp"

int main(int argc, char** argv) { return ddpctl::cli::run(argc, argv); }

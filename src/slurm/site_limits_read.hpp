#pragma once
// Reading the site's limits (site_limits.hpp) from Slurm's commands; the parsers
// are separate for the unit tests.
#include <string>

#include "slurm/site_limits.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

// sacctmgr (associations of the user's accounts up to root, QOS), scontrol
// (partitions, reservations, assoc_mgr usage). What a command could not tell
// is named in `unread`; nothing is guessed.
SiteLimits read_site_limits(SlurmClient& slurm);

// The limits that could not be read (accounting off, ...): notes, since a
// site without accounting would hear them on every submission.
std::vector<std::string> unread_limits(const SiteLimits& limits);

// "cpu=4,gres/gpu=2,node=1" (sacctmgr); "gres/gpu:a100=2" counts as
// gres/gpu too. Values with units (mem=4G) in MiB.
Tres parse_tres(const std::string& text);
// `sacctmgr -n -P show qos format=` kQosFormat. A line it cannot read (too
// few fields, a time limit that is not a time) becomes a note in `unread`
// (SiteLimits::unread), never a missing limit in silence.
extern const char* const kQosFormat;
std::map<std::string, QosLimits> parse_qos(const std::string& text, std::vector<std::string>* unread = nullptr);
// `sacctmgr -n -P show assoc format=` kAssocFormat; likewise.
extern const char* const kAssocFormat;
std::vector<AssocLimits> parse_assocs(const std::string& text, std::vector<std::string>* unread = nullptr);
// `scontrol -o show partition` (one partition per line).
std::map<std::string, PartitionLimits> parse_partitions(const std::string& text);
// `SLURM_TIME_FORMAT=%s scontrol -o show reservation` (one per line; "No
// reservations in the system" when none).
std::vector<Reservation> parse_reservations(const std::string& text);
// `scontrol show assoc_mgr users=U flags=assoc,qos`: usage of the accounts
// and QOS it lists, and of user `uid` in each QOS.
Usage parse_assoc_mgr(const std::string& text, const std::string& uid);

}  // namespace ddpctl

#include "catch.hpp"

#include "slurm/reasons.hpp"

using namespace ddpctl;

TEST_CASE("pending reasons in plain words") {
  CHECK(explain_reason("Resources") == "waiting for free nodes");
  CHECK(explain_reason("None").empty());
  CHECK(explain_reason("").empty());
  CHECK(explain_reason("SomethingNew") == "SomethingNew");
}

TEST_CASE("limit reasons are read by their grammar, and say whether waiting helps") {
  ReasonWords per_job = reason_words("QOSMaxGRESPerJob");
  CHECK(per_job.words == "it asks for more GPUs (GRES) per job than your QOS allows");
  CHECK(per_job.never);
  CHECK(per_job.todo.find("never start") != std::string::npos);

  ReasonWords group = reason_words("AssocGrpGRES");
  CHECK(group.words == "your account (association)'s group uses the most GPUs (GRES) it allows");
  CHECK_FALSE(group.never);

  ReasonWords user = reason_words("QOSMaxJobsPerUserLimit");
  CHECK(user.words == "you already hold the most running jobs your QOS allows");
  CHECK_FALSE(user.never);

  CHECK(reason_words("QOSMaxWallDurationPerJobLimit").words == "its time limit is longer than your QOS allows per job");
  CHECK(reason_words("QOSMaxWallDurationPerJobLimit").never);
  CHECK(reason_words("AssocGrpCPUMinutesLimit").never);  // a used-up budget does not come back by waiting
  CHECK_FALSE(reason_words("AssocGrpCPURunMinutesLimit").never);
  CHECK(reason_words("AssocMaxCpuMinutesPerJobLimit").words.find("CPUs-minutes") != std::string::npos);
  CHECK(reason_words("QOSMinGRES").never);
  CHECK(reason_words("AssocMaxNodePerJobLimit").never);
  CHECK_FALSE(reason_words("QOSMaxSubmitJobPerUserLimit").never);
}

TEST_CASE("every reason code Slurm 26.05 names has words of its own") {
  // job_state_reason.c's strings (a sample across its groups): none is
  // passed through unexplained.
  for (const char* code :
       {"Prolog", "Priority", "Dependency", "Resources", "PartitionNodeLimit", "PartitionTimeLimit", "PartitionDown",
        "PartitionInactive", "JobHeldAdmin", "JobHeldUser", "BeginTime", "Licenses", "AssociationJobLimit",
        "AssociationResourceLimit", "AssociationTimeLimit", "Reservation", "ReqNodeNotAvail", "FrontEndDown",
        "SchedDefer", "NodeDown", "BadConstraints", "SystemFailure", "JobLaunchFailure", "NonZeroExitCode",
        "RaisedSignal", "TimeLimit", "InactiveLimit", "InvalidAccount", "InvalidQOS", "QOSUsageThreshold",
        "QOSJobLimit", "QOSResourceLimit", "QOSTimeLimit", "Cleaning", "QOSNotAllowed", "AccountNotAllowed",
        "DependencyNeverSatisfied", "QOSGrpCpuLimit", "QOSGrpCPUMinutesLimit", "QOSGrpCPURunMinutesLimit",
        "QOSGrpJobsLimit", "QOSGrpMemLimit", "QOSGrpNodeLimit", "QOSGrpSubmitJobsLimit", "QOSGrpWallLimit",
        "QOSMaxCpuPerJobLimit", "QOSMaxCpuMinutesPerJobLimit", "QOSMaxNodePerJobLimit",
        "QOSMaxWallDurationPerJobLimit", "QOSMaxCpuPerUserLimit", "QOSMaxJobsPerUserLimit", "QOSMaxNodePerUserLimit",
        "QOSMaxSubmitJobPerUserLimit", "QOSMinCpuNotSatisfied", "AssocGrpCpuLimit", "AssocGrpCPUMinutesLimit",
        "AssocGrpCPURunMinutesLimit", "AssocGrpJobsLimit", "AssocGrpMemLimit", "AssocGrpNodeLimit",
        "AssocGrpSubmitJobsLimit", "AssocGrpWallLimit", "AssocMaxJobsLimit", "AssocMaxCpuPerJobLimit",
        "AssocMaxCpuMinutesPerJobLimit", "AssocMaxNodePerJobLimit", "AssocMaxWallDurationPerJobLimit",
        "AssocMaxSubmitJobLimit", "JobHoldMaxRequeue", "JobArrayTaskLimit", "BurstBufferResources",
        "BurstBufferStageIn", "BurstBufferOperation", "PowerNotAvail", "PowerReserved", "AssocGrpUnknown",
        "AssocGrpUnknownMinutes", "AssocGrpUnknownRunMinutes", "AssocMaxUnknownPerJob", "AssocMaxUnknownPerNode",
        "AssocMaxUnknownMinutesPerJob", "AssocMaxCpuPerNode", "AssocGrpMemMinutes", "AssocGrpMemRunMinutes",
        "AssocMaxMemPerJob", "AssocMaxMemPerNode", "AssocMaxMemMinutesPerJob", "AssocGrpNodeMinutes",
        "AssocGrpNodeRunMinutes", "AssocMaxNodeMinutesPerJob", "AssocGrpEnergy", "AssocGrpGRES",
        "AssocGrpGRESMinutes", "AssocGrpGRESRunMinutes", "AssocMaxGRESPerJob", "AssocMaxGRESPerNode",
        "AssocMaxGRESMinutesPerJob", "AssocGrpLicense", "AssocMaxLicensePerJob", "AssocGrpBB", "AssocMaxBBPerNode",
        "QOSGrpUnknown", "QOSMaxUnknownPerUser", "QOSMinUnknown", "QOSMaxCpuPerNode", "QOSGrpMemoryMinutes",
        "QOSMaxMemoryPerJob", "QOSMaxMemoryPerNode", "QOSMaxMemoryPerUser", "QOSMinMemory", "QOSGrpNodeMinutes",
        "QOSMaxNodeMinutesPerJob", "QOSMinNode", "QOSGrpEnergy", "QOSMaxEnergyPerUser", "QOSGrpGRES",
        "QOSGrpGRESMinutes", "QOSGrpGRESRunMinutes", "QOSMaxGRESPerJob", "QOSMaxGRESPerNode", "QOSMaxGRESPerUser",
        "QOSMaxGRESMinutesPerJob", "QOSMinGRES", "QOSGrpLicense", "QOSMaxLicensePerUser", "QOSMinLicense",
        "QOSGrpBB", "QOSMaxBBPerUser", "QOSMinBB", "DeadLine", "MaxBBPerAccount", "MaxCpuPerAccount",
        "MaxGRESPerAccount", "MaxNodePerAccount", "MaxJobsPerAccount", "MaxSubmitJobsPerAccount", "PartitionConfig",
        "AccountingPolicy", "FedJobLock", "OutOfMemory", "MaxMemPerLimit", "AssocGrpBilling", "AssocMaxBillingPerJob",
        "QOSGrpBilling", "QOSMaxBillingPerUser", "QOSMinBilling", "ReservationDeleted", "ReservationInvalid",
        "Constraints"}) {
    INFO(code);
    ReasonWords w = reason_words(code);
    CHECK(w.words != code);
    CHECK_FALSE(w.words.empty());
  }
}

TEST_CASE("squeue's longer reasons keep their detail, maintenance is named") {
  ReasonWords maint = reason_words("ReqNodeNotAvail, Reserved for maintenance");
  CHECK(maint.words == "its nodes are reserved for maintenance during its time limit");
  CHECK(maint.todo.find("--fit-time") != std::string::npos);
  CHECK(reason_words("ReqNodeNotAvail, UnavailableNodes:g1").words ==
        "a node it needs is down, drained or reserved (UnavailableNodes:g1)");
}

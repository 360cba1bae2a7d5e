// Which guaranteed jobs of a live Slurm cluster are within their tenant's quota (Rubick §3: a
// guaranteed job consumes its tenant's quota; one beyond it runs best-effort). Tenants are Slurm
// accounts; quotas are devices per account (elasticd.toml [quotas]). Pure: no Slurm or I/O.
//
// Every guaranteed job (SlurmJob::sla_class, running or waiting for nodes) claims its minimum:
// MIN nodes times the devices of its smallest node (running: its own nodes; waiting: the
// smallest node of its partition, 1 on CPU nodes). Running jobs claim first, in start order
// (they keep the protection they started with), then waiting ones in Slurm's priority order;
// a job is within quota when its account's claims so far, its own included, fit the quota. An
// account missing from the table has quota 0. Without a table every guaranteed job is within.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "scheduler/policy/slurm_view.h"

namespace elastic::policy {

// Job id -> within quota, for every guaranteed job that runs or waits for nodes.
// `min_nodes`: a running job's MIN as elasticd's registry knows it (a job missing there claims
// the nodes it holds).
std::map<std::uint32_t, bool> QuotaStanding(
    const SlurmView& view, const std::map<std::uint32_t, int>& min_nodes,
    const std::optional<std::map<std::string, int>>& quotas);

}  // namespace elastic::policy

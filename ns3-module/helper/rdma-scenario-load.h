/*
 * rdma-lb: loading a scenario file (ConWeave key/value config or rdma-lb TOML) into a
 * RdmaScenarioSpec. The parsing, validation and workload expansion are the Rust crate
 * rdma-lb-scenario's (one parser per format, shared with the `rdma-lb` CLI, one set of error
 * messages), reached through the bridge (rdmalb::bridge::load_scenario; the data is the bridge
 * module rdmalb::scenario, rust-lb/bridge/src/scenario.rs); this file only converts its plain
 * structs and typed values, and keeps the algorithm configuration the validation parsed.
 */
#ifndef RDMA_SCENARIO_LOAD_H
#define RDMA_SCENARIO_LOAD_H

#include "rdma-scenario.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * Loads the scenario at \p path with \p overrides applied.
 * \param path a `.toml` file (rdma-lb TOML) or a ConWeave config file
 * \param overrides "key=value;key=value" (keys: RdmaScenarioOverrideKeys())
 * \param[out] spec the scenario
 * \param[out] error one line `file:line: key: message` when false is returned
 * \return true on success
 */
bool LoadRdmaScenario(const std::string& path,
                      const std::string& overrides,
                      RdmaScenarioSpec* spec,
                      std::string* error);

/// \return the override keys LoadRdmaScenario accepts
std::vector<std::string> RdmaScenarioOverrideKeys();

} // namespace ns3

#endif /* RDMA_SCENARIO_LOAD_H */

// What the output says about the machine: CPU, cores, NUMA nodes, and whether NVM is real.
#pragma once
#include <nlohmann/json.hpp>

#include "storage/device/nvm_image.h"

namespace nvt {

int real_numa_nodes();
nlohmann::json host_json(const dev::NvmImage& nvm);
// Pin the calling worker: to real NUMA node `real_node` when it is one (>= 0) on a host with
// several (the kernel picks the core), else to CPU tid mod cores.
void pin_thread(int tid, int real_node = -1);

}  // namespace nvt

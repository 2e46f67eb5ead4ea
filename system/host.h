// What the output says about the machine: CPU, cores, NUMA nodes, and whether NVM is real.
#pragma once
#include <nlohmann/json.hpp>

#include "storage/device/nvm_image.h"

namespace nvt {

int real_numa_nodes();
nlohmann::json host_json(const dev::NvmImage& nvm);
// Pin the calling worker to a CPU (and its real NUMA node when the host has several).
void pin_thread(int tid);

}  // namespace nvt

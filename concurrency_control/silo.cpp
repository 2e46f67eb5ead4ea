#include "concurrency_control/silo.h"

namespace nvt::cc {

std::atomic<uint64_t> Silo::epoch{1};
std::atomic<bool> Silo::running{false};
std::thread Silo::ticker;

}  // namespace nvt::cc

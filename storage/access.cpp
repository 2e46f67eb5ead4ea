#include "storage/access.h"

namespace nvt {

const char* cause_name(AbortCause c) {
  switch (c) {
    case AbortCause::None: return "none";
    case AbortCause::ReadConflict: return "read_conflict";
    case AbortCause::WriteConflict: return "write_conflict";
    case AbortCause::Validation: return "validation";
    case AbortCause::Deadlock: return "deadlock";
    case AbortCause::Wound: return "wound";
    case AbortCause::User: return "user";
    case AbortCause::NvmSpace: return "nvm_space";
    case AbortCause::DramSpace: return "dram_space";
    default: return "?";
  }
}

}  // namespace nvt

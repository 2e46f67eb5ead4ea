// What every pair's system/rundb.cpp parses, whatever its engine and CC method: precompiled
// once per build mode (the Makefile's PCH), so that each of the pairs does not parse it again.
// Nothing here may depend on ENGINE or CC_ALG (config.h, system/pair.h choose the pair).
#ifndef NVT_SYSTEM_RUNDB_HEADERS_H  // (not #pragma once: g++ warns of it in the file it precompiles)
#define NVT_SYSTEM_RUNDB_HEADERS_H
#include "benchmarks/smallbank.h"
#include "benchmarks/tpcc_det.h"
#include "benchmarks/ycsb_de.h"
#include "concurrency_control/cicada.h"
#include "concurrency_control/dl_detect.h"
#include "concurrency_control/foedus.h"
#include "concurrency_control/hekaton.h"
#include "concurrency_control/hstore.h"
#include "concurrency_control/mcsi.h"
#include "concurrency_control/mvcc.h"
#include "concurrency_control/no_wait.h"
#include "concurrency_control/occ.h"
#include "concurrency_control/pgsi.h"
#include "concurrency_control/silo.h"
#include "concurrency_control/tictoc.h"
#include "concurrency_control/wait_die.h"
#include "storage/engines/foedus/foedus.h"
#include "storage/engines/mmdb/mmdb.h"
#include "storage/engines/nvmvcc/nvmvcc.h"
#include "storage/engines/wbl/wbl.h"
#include "storage/engines/zen/zen.h"
#include "system/deterministic_run.h"
#include "system/driver.h"
#endif

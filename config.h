// Compile-time choices. Each may be set from make without editing this file:
//   make ENGINE=mmdb CC_ALG=silo   ->  build/mmdb-silo/rundb
#pragma once

// Engine: mmdb, zen, nvmvcc (more engines land as storage/engines/<name>/).
#ifndef ENGINE
#define ENGINE mmdb
#endif

// Concurrency control: no_wait, silo, wait_die, dl_detect, occ, tictoc, hstore, mvcc, hekaton,
// cicada (mmdb and zen); mcsi, pgsi (snapshot isolation, nvmvcc only).
#ifndef CC_ALG
#define CC_ALG no_wait
#endif

// 1: the NVM device model counts and charges; 0: compiled out (to measure its own cost).
#ifndef DEVICE_MODEL
#define DEVICE_MODEL 1
#endif

// Zen only: 1 = the naive NVM space management of papers/zen-vldb21.txt Figure 14 (allocation
// metadata persisted on every allocation and free); builds into build/zen-<cc>-naive/.
#ifndef ZEN_NAIVE_ALLOC
#define ZEN_NAIVE_ALLOC 0
#endif

// Compile-time choices. Each may be set from make without editing this file:
//   make ENGINE=mmdb CC_ALG=silo   ->  build/mmdb-silo/rundb
#pragma once

// Engine: mmdb (more engines land as storage/engines/<name>/).
#ifndef ENGINE
#define ENGINE mmdb
#endif

// Concurrency control: no_wait, silo.
#ifndef CC_ALG
#define CC_ALG no_wait
#endif

// 1: the NVM device model counts and charges; 0: compiled out (to measure its own cost).
#ifndef DEVICE_MODEL
#define DEVICE_MODEL 1
#endif

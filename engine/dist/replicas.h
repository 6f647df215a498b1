// run_replicas: builds a backend and a communicator for every replica this process drives and
// runs one function per replica, on a thread per replica when there are several.
#pragma once

#include <functional>
#include <memory>

#include "engine/backend/backend.h"
#include "engine/dist/communicator.h"
#include "engine/dist/launch.h"

namespace dlbench::dist {

struct Replica {
  int rank = 0;  // in the whole job (over processes)
  int size = 1;
  backend::Backend& backend;
  Communicator* communicator = nullptr;  // null when size == 1
  bool root() const { return rank == 0; }
};

// Runs fn(replica) for each local replica of plan and returns when all have returned. A
// failure on one replica is rethrown after every thread has stopped (an Error keeps its
// kind); the others may block in a collective, so a failing replica aborts the
// communicators first. kMpi needs an MpiSession alive in the process.
void run_replicas(const LaunchPlan& plan, const std::function<void(Replica&)>& fn);

}  // namespace dlbench::dist

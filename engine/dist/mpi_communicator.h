// MpiCommunicator: data-parallel collectives between CPU processes over MPI_COMM_WORLD. The
// CPU backend runs every op before it returns, so collectives run when called and wait() has
// nothing to do.
#pragma once

#include <memory>

#include "engine/dist/communicator.h"
#include "engine/dist/mpi_session.h"

namespace dlbench::dist {

std::unique_ptr<Communicator> make_mpi_communicator(const MpiSession& session);

}  // namespace dlbench::dist

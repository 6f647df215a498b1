// The Store over any Connection: every query is written once for both backends.
#pragma once

#include <memory>

#include "bench/store/connection.h"
#include "bench/store/store.h"

namespace dlbench::store {

// Migrates the connection's database to the current schema, then serves it.
std::unique_ptr<Store> make_sql_store(std::unique_ptr<Connection> connection);

}  // namespace dlbench::store

// The PostgreSQL connection (libpq): the same statements as SQLite with `?` numbered as $N,
// values as text parameters, NOTICEs silenced (CREATE ... IF NOT EXISTS raises them).
#pragma once

#include <memory>
#include <string>

#include "bench/store/connection.h"

namespace dlbench::store {

// `location` is a URI or a key=value string (postgres_location.h); messages and location() show
// it without its password. Throws dlbench::Error: usage when it does not parse, resource when
// the server cannot be reached or refuses the login.
std::unique_ptr<Connection> open_postgres(const std::string& location);

}  // namespace dlbench::store

// The PostgreSQL connection (libpq): the same statements as SQLite with `?` numbered as $N,
// values as text parameters, NOTICEs silenced (CREATE ... IF NOT EXISTS raises them).
#pragma once

#include <memory>
#include <string>

#include "bench/store/connection.h"

namespace dlbench::store {

// Throws dlbench::Error: usage when the URL does not parse, resource when the server cannot
// be reached or refuses the login.
std::unique_ptr<Connection> open_postgres(const std::string& url);

// "postgresql://user:secret@host/db" -> "postgresql://user@host/db", for messages.
std::string redact_url(const std::string& url);

}  // namespace dlbench::store

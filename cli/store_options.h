// The results database the command line uses: the global --db (a file for SQLite, or a
// PostgreSQL URL or key=value string), else the default file (store::default_location()).
#pragma once

#include <memory>

#include "bench/store/store.h"
#include "cli/global_options.h"

namespace dlbench::cli {

inline std::unique_ptr<store::Store> open_store(const GlobalOptions& global) {
  return store::open_store(global.db);
}

}  // namespace dlbench::cli

// `dlbench runs export --format json`: every stored run as JSON, the full records (the tables:
// export_table.h).
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/store/records.h"

namespace dlbench::store {

nlohmann::json to_json(const RunRecord& run);
void export_json(const std::vector<RunRecord>& runs, std::ostream& out);

// RFC 4180: quoted when it holds a comma, quote or line break.
std::string csv_field(const std::string& text);

}  // namespace dlbench::store

# Writes ${OUTPUT}: a C++ file holding ${INPUT} (Chart.js) as a byte array, so the report needs
# no file at run time and no network when it opens.
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(READ "${INPUT}" head LIMIT 200)
string(REGEX MATCH "Chart\\.js v([0-9.]+)" _ "${head}")
set(version "${CMAKE_MATCH_1}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by embed_chart_js.cmake; do not edit.
#include \"bench/report/chart_js.h\"
namespace dlbench::report {
namespace {
const unsigned char kChartJs[] = {${bytes}};
}  // namespace
std::string_view chart_js_source() {
  return {reinterpret_cast<const char*>(kChartJs), sizeof kChartJs};
}
std::string_view chart_js_version() { return \"${version}\"; }
}  // namespace dlbench::report
")

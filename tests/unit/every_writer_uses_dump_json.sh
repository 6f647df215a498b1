#!/bin/sh
# JsonText.EveryWriterUsesDumpJson: fails when a C++ source calls nlohmann's dump() itself
# instead of dump_json (engine/core/json_text.h). A plain dump() throws on text that is not
# UTF-8 (type_error.316) after the work is done; dump_json is the one place that makes such
# text valid. Usage: every_writer_uses_dump_json.sh <checkout>
cd "${1:?usage: $0 <checkout>}" || exit 1
for floor in engine bench cli tests; do
  [ -d "$floor" ] || { echo "no $floor/ in $1: not a dlbench checkout"; exit 1; }
done
hits=$(grep -rnE '(\.|->)[[:space:]]*dump[[:space:]]*\(' --include='*.h' --include='*.cc' \
         --include='*.cu' --include='*.cuh' engine bench cli tests |
       grep -v '^engine/core/json_text\.h:')
if [ -n "$hits" ]; then
  echo "nlohmann's dump() called directly; use dump_json(doc, indent) from engine/core/json_text.h:"
  echo "$hits"
  exit 1
fi
echo "every JSON document is written by dump_json"

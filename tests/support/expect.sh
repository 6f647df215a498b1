# Shared by the shell tests of scripts/ (source it): `expect` checks a command's exit code and
# output, counting failures in $failures.

failures=0

# expect NAME WANTED_EXIT WANTED_TEXT -- COMMAND...: runs COMMAND, checks its exit code and output.
expect() {
  local name=$1 want=$2 text=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL $name: exit $rc (wanted $want), output lacks '$text':"
    sed 's/^/    /' <<<"$out"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

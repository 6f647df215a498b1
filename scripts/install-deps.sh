#!/usr/bin/env bash
# Installs the Debian packages of the given lists that are missing (default: deps/debian.txt,
# what building and running need; `make test` adds deps/debian-test.txt); does nothing when all
# are present. Set DLBENCH_SKIP_DEPS=1 to skip (machines whose libraries come from elsewhere).
# Usage: install-deps.sh [LIST...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lists=("$@")
[ ${#lists[@]} -eq 0 ] && lists=("$root/deps/debian.txt")
if [ "${DLBENCH_SKIP_DEPS:-0}" = "1" ]; then
  echo "install-deps: skipped (DLBENCH_SKIP_DEPS=1)"
  exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: this is not a Debian-like system; install the packages named in ${lists[*]} yourself, then run with DLBENCH_SKIP_DEPS=1" >&2
  exit 3
fi
missing=()
for list in "${lists[@]}"; do
  [ -f "$list" ] || { echo "install-deps: no package list at $list" >&2; exit 2; }
  while read -r name _; do
    [ -z "$name" ] && continue
    case "$name" in \#*) continue ;; esac
    status=$(dpkg-query -W -f='${Status}' "$name" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$name")
  done <"$list"
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}" >&2
  echo "install-deps: run as root:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 3
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Debian's python3 ships without venv/ensurepip (package python3-venv). As root we install it;
# otherwise we print the exact command to run.
set -u
PYTHON=${1:-python3}
if "$PYTHON" -c "import venv, ensurepip" >/dev/null 2>&1; then
  exit 0
fi
pkg="python3-venv"
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "$PYTHON cannot create virtual environments: installing $pkg..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "$pkg" >/dev/null && exit 0
fi
echo "$PYTHON cannot create virtual environments. Run: sudo apt-get install -y $pkg" >&2
exit 1

#!/usr/bin/env bash
# Installs Debian's Chromium for the browser test when it is missing (needs root and apt).
set -euo pipefail
if [[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]]; then exit 0; fi
if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
  echo "Chromium is missing: install Debian's chromium package (apt-get install -y chromium) or set CHROMIUM_PATH." >&2
  exit 1
fi
echo "Installing Chromium (Debian package) for the browser test..."
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null

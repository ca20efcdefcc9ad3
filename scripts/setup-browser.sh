#!/usr/bin/env bash
# Chromium for the web console's browser tests (packages/console/test): Debian's `chromium`
# package at /usr/bin/chromium, driven by playwright-core (which downloads no browser of its own).
# Idempotent and non-interactive: does nothing when Chromium is already there.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
  echo "setup-browser: $("$CHROMIUM" --version 2>/dev/null || echo chromium) at $CHROMIUM"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-browser: $CHROMIUM is missing and there is no apt-get; install Chromium by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "setup-browser: installing Chromium needs root (or sudo)" >&2
    exit 1
  fi
fi
echo "setup-browser: installing Debian's chromium"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q chromium
"$CHROMIUM" --version

#!/usr/bin/env bash
# Installs HAProxy from the distribution's packages for the proof tests of examples/foreign
# (proxy.cfg), once: a machine that has it already (apt keeps the package cached) does nothing.
set -euo pipefail
if command -v haproxy >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-haproxy: no haproxy and no apt-get; install HAProxy 2.x with its Prometheus exporter" >&2
  exit 1
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends haproxy >/dev/null
# The package starts a system service on some systems; the tests run their own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet haproxy 2>/dev/null; then
  $SUDO systemctl stop haproxy || true
fi
haproxy -v | head -1

#!/bin/sh
# chromium.sh: obtain a headless browser for the tests of report.html (Debian's chromium).
#
#   scripts/chromium.sh            # install with apt-get when missing, print its path
#   scripts/chromium.sh --check    # print the path if installed, exit 1 otherwise
#
# The browser is Debian's `chromium` package; apt-get needs root (or sudo without a password).
# The last line printed on stdout is the browser's path. Progress goes to stderr.
set -eu

find_browser() {
	for b in chromium chromium-browser; do
		if p=$(command -v "$b" 2>/dev/null); then
			echo "$p"
			return 0
		fi
	done
	return 1
}

if [ "${1:-}" = "--check" ]; then
	find_browser
	exit $?
fi

if find_browser; then
	exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "chromium.sh: not root and no sudo: install Debian's chromium by hand" >&2; exit 1; }
	sudo="sudo -n"
fi
echo "chromium.sh: installing Debian's chromium with apt-get (a few minutes the first time)" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >&2
$sudo apt-get install -y -q --no-install-recommends chromium fonts-liberation >&2
find_browser

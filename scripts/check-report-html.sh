#!/usr/bin/env bash
# Opens a run's report.html in headless Chromium (Debian's chromium package,
# installed with apt-get when absent) and fails when the browser logs any
# console message (the page has no script, so any message is an error: a
# resource its Content-Security-Policy blocked, a parse failure), when the
# verdict table has no rows, or when the page has no training curve; it
# takes a 1400×3000 screenshot.
#
#   scripts/check-report-html.sh            a tiny reproduce run (seconds)
#   scripts/check-report-html.sh RUNDIR     RUNDIR's report, re-rendered
#                                           (calibrl report, RUNDIR untouched)
#
# SCREENSHOT=PATH keeps the screenshot (default: a temporary folder,
# removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

if ! command -v chromium >/dev/null 2>&1; then
	echo "check-report-html: installing chromium (apt-get)"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/calibrl" ./cmd/calibrl
if [ $# -ge 1 ]; then
	page="$tmp/report.html"
	"$tmp/calibrl" report "$1" --out "$page" >/dev/null
else
	if ! "$tmp/calibrl" reproduce --task mathchat --preset tiny --seed 1 --out "$tmp/run" >"$tmp/reproduce.log" 2>&1; then
		cat "$tmp/reproduce.log"
		echo "check-report-html: the tiny reproduce run failed" >&2
		exit 1
	fi
	page="$tmp/run/report.html"
fi
shot=${SCREENSHOT:-$tmp/report.png}

# One profile folder per run keeps the browser off $HOME; --no-sandbox
# because CI runs as root.
chrome=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile"
	--window-size=1400,3000 --enable-logging=stderr --v=0)
"${chrome[@]}" --screenshot="$shot" "file://$page" 2>"$tmp/screenshot.log" >/dev/null
"${chrome[@]}" --dump-dom "file://$page" 2>"$tmp/dom.log" >"$tmp/dom.html"

fail=0
# Chromium logs every console message of the page as "INFO:CONSOLE:N] ...".
if grep -h ':CONSOLE' "$tmp/screenshot.log" "$tmp/dom.log" >"$tmp/console.txt"; then
	echo "check-report-html: console messages:" >&2
	cat "$tmp/console.txt" >&2
	fail=1
fi
rows=$(sed -n '/id="verdict"/,/<\/table>/p' "$tmp/dom.html" | grep -c '<tr class="claim' || true)
if [ "$rows" -eq 0 ]; then
	echo "check-report-html: the verdict table has no rows" >&2
	fail=1
fi
charts=$(grep -c '<svg class="chart"' "$tmp/dom.html" || true)
if [ "$charts" -eq 0 ]; then
	echo "check-report-html: the page has no training curve" >&2
	fail=1
fi
# Every per-seed spread chart labels its x axis (the measure it plots).
spreads=$(grep -c '<svg class="spread"' "$tmp/dom.html" || true)
labels=$(grep -c '<text class="axis-label"' "$tmp/dom.html" || true)
if [ "$spreads" -ne "$labels" ]; then
	echo "check-report-html: $spreads spread charts, $labels x-axis labels" >&2
	fail=1
fi
if [ ! -s "$shot" ]; then
	echo "check-report-html: no screenshot" >&2
	fail=1
fi
if [ "$fail" -ne 0 ]; then
	exit 1
fi
echo "check-report-html: ok: $rows verdict rows, $charts charts, $labels spread x-axis labels, no console message, screenshot $(wc -c <"$shot") bytes${SCREENSHOT:+ at $SCREENSHOT} ($((SECONDS - start)) s)"

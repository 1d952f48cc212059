#!/usr/bin/env bash
# Opens a run's report.html in headless Chromium (Debian's chromium package,
# installed with apt-get when absent) and fails when the browser logs any
# console message (the page has no script, so any message is an error: a
# resource its Content-Security-Policy blocked, a parse failure), when the
# verdict table has no rows, when the page has no training curve, or when
# any chart in the rendered DOM lacks a visible title, an x-axis label, a
# y-axis label, or a legend entry for each of its series (every line, and
# every colour of a dot or bar); it takes a screenshot.
#
#   scripts/check-report-html.sh            a tiny reproduce run (seconds)
#   scripts/check-report-html.sh RUNDIR     RUNDIR's report, re-rendered
#                                           (calibrl report, RUNDIR untouched)
#
# SCREENSHOT=PATH keeps the screenshot (default: a temporary folder,
# removed at the end); WINDOW=W,H sets the browser window, and so the
# screenshot's size (default 1400,3000).
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
	--window-size="${WINDOW:-1400,3000}" --enable-logging=stderr --v=0)
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
# Every chart (every <svg> of the page) carries, in the DOM the browser
# built, a non-empty title (text.chart-title), x label (text.axis-label.x),
# y label (text.axis-label.y) and legend (g.legend-entry, each a sample
# and a name): each line's name and colour, and each colour of a dot or
# bar outside the legend, must be a legend entry's; a line chart has one
# entry per line.
if ! charts_line=$(python3 - "$tmp/dom.html" <<'PY'
import sys
from html.parser import HTMLParser


class Charts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts, self.stack, self.chart = [], [], None

    def classes(self, attrs):
        return set((dict(attrs).get("class") or "").split())

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = self.classes(attrs)
        if tag == "svg":
            self.chart = {"class": a.get("class") or "", "title": "", "x": "", "y": "",
                          "legend": [], "lines": [], "marks": []}
            self.charts.append(self.chart)
            self.stack = []
        if self.chart is None:
            return
        in_legend = any(t == "g" and "legend" in c for t, c, _ in self.stack)
        entry = next((e for t, c, e in reversed(self.stack) if e is not None), None)
        if tag == "g" and "legend-entry" in cls:
            entry = {"name": "", "colors": set()}
            self.chart["legend"].append(entry)
            self.stack.append((tag, cls, entry))
            return
        if entry is not None:
            for k in ("stroke", "fill"):
                if a.get(k, "none") != "none":
                    entry["colors"].add(a[k].lower())
        elif not in_legend and tag == "polyline":
            self.chart["lines"].append({"name": "", "color": (a.get("stroke") or "").lower()})
        elif not in_legend and tag in ("circle", "rect"):
            fill = a.get("fill", "none")
            self.chart["marks"].append((a.get("stroke") if fill == "none" else fill or "").lower())
        self.stack.append((tag, cls, entry))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if self.chart is None:
            return
        if tag == "svg":
            self.chart = None
            return
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if self.chart is None or not self.stack:
            return
        tags = [t for t, _, _ in self.stack]
        text_cls = next((c for t, c, _ in reversed(self.stack) if t == "text"), None)
        entry = next((e for t, c, e in reversed(self.stack) if e is not None), None)
        if text_cls is not None and entry is not None:
            entry["name"] += data
        elif text_cls is not None and "chart-title" in text_cls:
            # A title's lines are tspans: a space between them.
            sep = " " if tags[-1] == "tspan" and self.chart["title"] else ""
            self.chart["title"] += sep + data
        elif text_cls is not None and "axis-label" in text_cls and "x" in text_cls:
            self.chart["x"] += data
        elif text_cls is not None and "axis-label" in text_cls and "y" in text_cls:
            self.chart["y"] += data
        elif tags[-1] == "title" and "polyline" in tags and self.chart["lines"]:
            self.chart["lines"][-1]["name"] += data


p = Charts()
p.feed(open(sys.argv[1], encoding="utf-8").read())
bad = []
for i, c in enumerate(p.charts):
    name = f"chart {i + 1} ({c['class']}: {c['title'].strip() or 'untitled'})"
    for part, what in (("title", "title"), ("x", "x-axis label"), ("y", "y-axis label")):
        if not c[part].strip():
            bad.append(f"{name}: no {what}")
    legend = {e["name"].strip(): e["colors"] for e in c["legend"] if e["name"].strip() and e["colors"]}
    if len(legend) != len(c["legend"]):
        bad.append(f"{name}: a legend entry without a name or a sample")
    if not legend:
        bad.append(f"{name}: no legend")
    colors = set().union(*legend.values()) if legend else set()
    for line in c["lines"]:
        if line["color"] not in legend.get(line["name"].strip(), ()):
            bad.append(f"{name}: the line {line['name'].strip()!r} ({line['color']}) has no legend entry")
    for col in sorted(set(c["marks"]) - colors):
        bad.append(f"{name}: marks coloured {col} that no legend entry names")
    if c["class"].split()[:1] == ["chart"] and len(c["legend"]) != len(c["lines"]):
        bad.append(f"{name}: {len(c['legend'])} legend entries for {len(c['lines'])} lines")
if not p.charts:
    bad.append("no chart")
for b in bad:
    print(b, file=sys.stderr)
kinds = {}
for c in p.charts:
    kinds[c["class"]] = kinds.get(c["class"], 0) + 1
print(f"{len(p.charts)} charts ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}), "
      f"{sum(len(c['legend']) for c in p.charts)} legend entries")
sys.exit(1 if bad else 0)
PY
); then
	echo "check-report-html: a chart lacks a title, an axis label or a legend (above)" >&2
	fail=1
fi
if [ ! -s "$shot" ]; then
	echo "check-report-html: no screenshot" >&2
	fail=1
fi
if [ "$fail" -ne 0 ]; then
	exit 1
fi
echo "check-report-html: ok: $rows verdict rows, $charts training curves; $charts_line, each with a title, both axis labels and a legend entry per series; no console message, screenshot $(wc -c <"$shot") bytes${SCREENSHOT:+ at $SCREENSHOT} ($((SECONDS - start)) s)"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# report --html and diff --html in real Chromium (headless): every page
# renders with no script error, its self-checks hold (every time series adds
# up to the summary, the flame graph's root is the total), the DOM's tables
# show the same ground-truth numbers as --json, the page is self-contained
# and bounded, and its screenshot is a real picture.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || test_skip_all "chromium is not installed (make deps installs it)"
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT
G=70 X=6 R=2 L=2

# Render $1.html in a window 1400 px wide, and one 800 px wide: the DOM to
# $1.dom and $1-800.dom, the console to $1.console, pictures to $1.png and
# $1-800.png. $2: a URL fragment.
render() {
	render_at "$1" 1400 "" "${2:-}" && render_at "$1" 800 -800 "${2:-}"
}
render_at() {	# page width suffix fragment
	local url="file://$WORK/$1.html$4"
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
		--user-data-dir="$WORK/chrome" --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
		--window-size=$2,3000 --dump-dom "$url" > "$1$3.dom" 2> "$1$3.err" &&
	{ grep "CONSOLE" "$1$3.err" >> "$1.console" || true; } &&
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
		--user-data-dir="$WORK/chrome" --hide-scrollbars --window-size=$2,3000 \
		--screenshot="$WORK/$1$3.png" "$url" > /dev/null 2>&1
}

# The page rendered at both widths: no console message, no error shown,
# every check held (the series add up; the layout checks: nothing wider
# than the window, nothing cut, one form of labels per axis, series
# colours apart), and a real picture.
rendered_ok() {
	cat "$1.console" 2> /dev/null; [ ! -s "$1.console" ] &&
	for v in "$1" "$1-800"; do
		grep -q '<body[^>]*data-rendered="ok"' "$v.dom" &&
		! grep -o '<div id="kmt-errors"[^>]*>[^<]' "$v.dom" &&
		grep -o '<tr class="check"[^>]*>' "$v.dom" > "$v.checks" && cat "$v.checks" &&
		[ $(wc -l < "$v.checks") -ge ${2:-1} ] && ! grep -v 'data-ok="true"' "$v.checks" &&
		for c in page-width nothing-cut axis-labels series-colours; do
			grep -q "data-check=\"$c\"" "$v.checks" || { echo "$v: no check $c"; exit 1; }
		done &&
		[ "$(head -c 8 "$WORK/$v.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] &&
		[ $(stat -c %s "$WORK/$v.png") -gt 20000 ] || return 1
	done
}

# The value of the script expression $3 in page $1 laid out $2 px wide,
# measured by a script of the test's own appended to a copy of the page.
probe() {
	cp "$1.html" "probe-$1.html" &&
	printf '<script>addEventListener("load", () => setTimeout(() => document.body.setAttribute("data-probe", JSON.stringify(%s)), 200));</script>\n' \
		"$3" >> "probe-$1.html" &&
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
		--user-data-dir="$WORK/chrome" --virtual-time-budget=5000 --window-size=$2,3000 \
		--dump-dom "file://$WORK/probe-$1.html" 2> /dev/null |
		grep -o 'data-probe="[^"]*"' | sed 's/^data-probe="//; s/"$//; s/&quot;/"/g; s/&amp;/\&/g'
}

# Page $1 with its data changed by the jq filter $2, as page $3.
redata() {
	local n
	n=$(grep -n 'id="kmt-data"' "$1.html" | cut -d: -f1) &&
	{ head -n $((n - 1)) "$1.html"; printf '<script type="application/json" id="kmt-data">'
	  data "$1.html" | jq -c "$2" | tr -d '\n'; printf '</script>\n'; tail -n +$((n + 1)) "$1.html"; } > "$3.html"
}

# The value axes' labels of a rendered page, a line per chart: "0;5,000;10k".
axes() {
	awk 'BEGIN { RS = "<svg" } NR > 1 { line = ""; s = $0
		while (match(s, /<text[^>]*class="tick[^"]*"[^>]*text-anchor="end"[^>]*>[^<]*</)) {
			t = substr(s, RSTART, RLENGTH); sub(/.*>/, "", t); sub(/<$/, "", t); line = line ";" t
			s = substr(s, RSTART + RLENGTH) }
		if (line != "") print substr(line, 2) }' "$1"
}

# Each line of axes: its labels but 0 in one form (one suffix: none, k, M,
# KiB; thousands grouped), not "5,000" beside "10k".
one_form() {
	local line
	while read -r line; do
		[ $(tr ";" "\n" <<< "$line" | grep -vx 0 | sed "s/^[0-9]\{4,\}.*/ungrouped/; s/^[0-9,.]*//" | sort -u | wc -l) -le 1 ] ||
			{ echo "labels of more than one form: $line"; return 1; }
	done
}

# A probe: [how many swatches, their least CIE76 difference] in the legend of chart $1.
legend_de() {
	cat <<EOF
(() => {
  const lab = c => {
    const [r, g, b] = c.match(/[\d.]+/g).slice(0, 3).map(x => (x /= 255) <= 0.04045 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4));
    const f = t => t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116;
    const X = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.9505), Y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
    const Z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.089);
    return [116 * Y - 16, 500 * (X - Y), 200 * (Y - Z)];
  };
  const c = [...document.querySelectorAll("#$1 .legend .sw:not(.vline)")].map(e => lab(getComputedStyle(e).backgroundColor));
  let d = Infinity;
  c.forEach((p, i) => c.slice(i + 1).forEach(q => d = Math.min(d, Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]))));
  return [c.length, Math.round(d * 10) / 10];
})()
EOF
}

# A check's value: got or want.
check() { sed -n "s/.*data-check=\"$2\"[^>]*data-$3=\"\([^\"]*\)\".*/\1/p" "$1.checks" | sed -n 1p; }
# The data-value of column $3 in the row keyed $2 of table $1 in page $4.
cell() {
	tr '\n' ' ' < "$4.dom" | grep -o "<table[^>]*data-table=\"$1\".*" | sed 's|</table>.*||' |
		grep -o "<tr[^>]*data-key=\"$2\"[^>]*>.*" | sed 's|</tr>.*||' |
		grep -o "<td[^>]*data-col=\"$3\"[^>]*>" | grep -o 'data-value="[^"]*"' | sed -n 1p | cut -d'"' -f2
}
# The page's data document.
data() { sed -n 's/.*<script type="application\/json" id="kmt-data">\(.*\)<\/script>/\1/p' "$1"; }

test_expect_success 'record the ground truth with stacks, a plain recording, a synthetic one' '
	$KMT record -q --stack -o st.dat -- $WL/kmt-gt -g $G -x $X -r $R -l $L $F > /dev/null &&
	rm -f $F && touch $F &&
	$KMT record -q -o gt.dat -- $WL/kmt-gt -g $((G * 2)) -x $X -l $L $F > /dev/null &&
	$SYNTH full synth.dat
'

test_expect_success 'report --html: one self-contained page, valid data' '
	$KMT report --html -o st.html st.dat && $KMT report --comm kmt-gt --html -o gtc.html gt.dat &&
	$KMT report --html gt.dat > gt.html && $KMT report --html -o synth.html synth.dat &&
	for p in st gtc gt synth; do
		data $p.html | jq -e ".report.summary and .timeline and .flame.root" > /dev/null || exit 1
		! grep -Eiq "<(link|img|iframe)[^>]*(href|src)=|fetch\\(|XMLHttpRequest|import\\(" $p.html || exit 1
	done &&
	[ "$(data st.html | jq -r .flame.kind)" = stacks ] && [ "$(data gt.html | jq -r .flame.kind)" = sites ]
'

test_expect_success 'Chromium renders every page: no script error, every self-check holds' '
	render st && render gt && render gtc && render synth &&
	rendered_ok st 8 && rendered_ok gt 8 && rendered_ok gtc 8 && rendered_ok synth 8
'

test_expect_success 'the series add up to the summary (checked by the page, compared here with --json)' '
	$KMT report --json gt.dat > gt.json &&
	[ "$(check gt allocs-series got)" = "$(jq .summary.allocs gt.json)" ] &&
	[ "$(check gt frees-series got)" = "$(jq .summary.frees gt.json)" ] &&
	[ "$(check gt bytes-series got)" = "$(jq .summary.bytes_alloc gt.json)" ] &&
	[ "$(check gt live-end got)" = "$(jq ".summary.live_bytes + .summary.uncertain_bytes" gt.json)" ] &&
	[ "$(check gt flame-bytes got)" = "$(jq .summary.bytes_alloc gt.json)" ] &&
	[ "$(check st flame-objects got)" = "$(jq .report.summary.allocs <(data st.html))" ]
'

test_expect_success 'the DOM shows the ground truth, equal to --json' '
	$KMT report --comm kmt-gt --json gt.dat > gtc.json &&
	site=$(jq -r "[.callsites[] | select(.function == \"do_getxattr\")] | max_by(.allocs) | .callsite" gtc.json) &&
	echo "$site" &&
	[ "$(cell callsites "$site" allocs gtc)" = "$(jq "[.callsites[] | select(.callsite == \"$site\")][0].allocs" gtc.json)" ] &&
	[ "$(cell callsites "$site" allocs gtc)" -ge $((G * 2)) ] &&
	[ "$(cell callsites "$site" bytes_alloc gtc)" = "$(jq "[.callsites[] | select(.callsite == \"$site\")][0].bytes_alloc" gtc.json)" ] &&
	[ "$(cell caches kmalloc-2k allocs gtc)" = "$(jq "[.caches[] | select(.name == \"kmalloc-2k\")][0].allocs" gtc.json)" ] &&
	[ "$(cell comms kmt-gt live_objects gtc)" = "$(jq "[.comms[] | select(.comm == \"kmt-gt\")][0].live_objects" gtc.json)" ] &&
	[ "$(cell comms kmt-gt live_objects gtc)" -ge $((X * 2)) ]
'

test_expect_success 'the synthetic trace: loss gaps, misuse, the access heat map, the flame graph' '
	data synth.html | jq -e ".timeline.gaps | length == 1" > /dev/null &&
	grep -q "data-table=\"misuse\"" synth.dom && grep -q "double_free" synth.dom &&
	grep -q "data-table=\"access_rows\"" synth.dom && grep -qi "heat" synth.dom &&
	grep -qi "lost" synth.dom
'

test_expect_success 'the page runs its interactive paths (sort, toggles, zoom, search) without error' '
	render st "#test-interact" && rendered_ok st 8
'

# Measured by the test itself, beside the page's own checks: nothing
# sticks out of an 800 px window (the self-check table did, by 23 px), and
# each value axis has one form of labels.
test_expect_success 'at 800 px nothing is wider than the window; one label form per axis' '
	for p in st synth; do
		w=$(probe $p 800 "[document.documentElement.scrollWidth, document.documentElement.clientWidth]") &&
		echo "$p at 800 px: [scrollWidth, clientWidth] $w" && [ "$(jq ".[0] <= .[1]" <<< "$w")" = true ] || exit 1
	done &&
	for p in st gt synth; do axes $p-800.dom; done > axes.txt && cat axes.txt &&
	[ $(wc -l < axes.txt) -ge 6 ] && one_form < axes.txt
'

# The page of a trace with long names and large numbers (the synthetic
# one, its data changed): the lost-events card shows its number whole,
# field names are whole, the births axis passes 10,000 in one form, and
# the eleven page orders have colours far apart (CIE76, by the test's
# own measure; the page's self-check asks CIEDE2000 in four visions).
test_expect_success 'long names, large numbers, 11 page orders: at 1400 and 800 px nothing cut, colours apart' '
	redata synth ".report.summary.lost_events = 123456789 | .report.summary.lost_gaps_unknown = 3 |
		.report.summary.lost_by_ring = false | .report.summary.lost_by_cpu = [123456789, 0] |
		.report.access.rows |= map(.field = \"f_pos_lock.owner.counter.long_member_name\") |
		.timeline.births |= map(. * 12001) |
		.timeline.pages = [range(11) as \$o | {order: \$o, allocs: .timeline.pages[0].allocs}] |
		.report.summary.page_allocs = ([.timeline.pages[].allocs | add] | add) + (.report.summary.page_failures // 0)" big &&
	render big &&
	for w in 1400 800; do
		v=$(probe big $w "[...document.querySelectorAll(\".kpi\")].filter(k => /lost/i.test(k.textContent)).map(k => {
			const v = k.querySelector(\".kpi-value\"); return [v.textContent, v.scrollWidth <= v.clientWidth]; })") &&
		echo "lost card at $w px: $v" && [ "$v" = "[[\"123,456,789+\",true]]" ] &&
		f=$(probe big $w "[...document.querySelectorAll(\"#access th.off, #access td[data-col=field]\")].filter(e =>
			!e.textContent.includes(\"f_pos_lock.owner.counter.long_member_name\") || e.scrollWidth > e.clientWidth + 1).length") &&
		echo "field names cut at $w px: $f" && [ "$f" = 0 ] || exit 1
	done &&
	axes big-800.dom > axes.txt && cat axes.txt && grep -q "10k" axes.txt && one_form < axes.txt &&
	d=$(probe big 1400 "$(legend_de chart-pages)") && echo "page orders: $d" &&
	[ "$(jq ".[0] == 11 and .[1] >= 10" <<< "$d")" = true ] &&
	rendered_ok big 8
'

test_expect_success 'a page stays small: 20 ms of hackbench' '
	$KMT record -q -o hb.dat -- hackbench -g 2 -l 200 > /dev/null &&
	$KMT report --html -o hb.html hb.dat && ls -l hb.html &&
	[ $(stat -c %s hb.html) -lt 3000000 ] &&
	[ "$(data hb.html | jq ".timeline.n <= 2048 and ([.report.callsites[]] | length) <= 100")" = true ] &&
	render hb && rendered_ok hb 8
'

test_expect_success 'diff --html: rendered, the same deltas as --json' '
	$KMT diff --html -o d.html st.dat gt.dat && $KMT diff --json st.dat gt.dat > d.json &&
	data d.html | jq -e ".diff.callsites | length > 0" > /dev/null &&
	render d && rendered_ok d 1 &&
	grep -q "data-table=\"diff-callsites\"" d.dom &&
	key=$(jq -r ".callsites[0].callsite" d.json) &&
	[ "$(cell diff-callsites "$key" delta.bytes_alloc d)" = "$(jq ".callsites[0].delta.bytes_alloc" d.json)" ]
'

test_expect_success 'an interrupted or failed page leaves no file' '
	rc=0; $KMT report --html -o /nonexistent/dir/x.html gt.dat 2> err || rc=$?; cat err;
	[ $rc = 1 ] && [ $(wc -l < err) = 1 ] && ! ls /nonexistent/dir 2> /dev/null
'

tracefs_check
test_done

package runreport

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// tinyRun writes a hand-built run folder: a base and one RL arm with two
// seeds, two claims (one holds, one reversed), a greedy summary beside the
// sampled one, metrics whose rewards all lie in [0.05, 0.16] and whose KL
// is tiny, two held-out problems per arm (one user message carrying
// markup), and, when withFidelity, a fidelity report.
func tinyRun(t *testing.T, withFidelity bool) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	summary := func(decoding string, base, cal float64) string {
		return fmt.Sprintf(`[
 {"arm": "base", "decoding": %[1]q, "success": %[2]g, "ci95": [0.40, 0.60], "turns": 3.1, "tokens": 120, "train_reward": null, "real_reward": %[2]g, "gap": null},
 {"arm": "calibrated-interactive", "decoding": %[1]q, "success": %[3]g, "ci95": [0.45, 0.65], "turns": 3.4, "tokens": 130, "train_reward": 0.7, "real_reward": %[3]g, "gap": 0.1,
  "seeds": [{"seed": 0, "rl_seed": 3, "success": 0.52, "ci95": [0.4, 0.6], "turns": 3, "tokens": 1, "train_reward": 0.7, "real_reward": 0.52, "gap": 0.1},
            {"seed": 1, "rl_seed": 99, "success": 0.58, "ci95": [0.5, 0.7], "turns": 3, "tokens": 1, "train_reward": 0.7, "real_reward": 0.58, "gap": 0.1}],
  "comparisons": [
   {"claim": "calibrated-interactive > base", "than": "base", "paper": "91.5 > not reported", "difference": 0.05, "ci95": [0.01, 0.09], "seeds": [0.02, 0.08], "holds": true},
   {"claim": "calibrated-interactive > <static & co>", "than": "static", "paper": "91.5 > 85.0", "difference": -0.04, "ci95": [-0.07, -0.01], "seeds": [-0.03, -0.05], "holds": false}]}
]`, decoding, base, cal)
	}
	write("summary.json", summary("sampled", 0.5, 0.55))
	write("summary-greedy.json", summary("greedy", 0.6, 0.57))
	write("manifest.json", `{"command": ["calibrl", "reproduce", "--preset", "tiny"], "config": {"task": "mathchat", "preset": "tiny", "eval_decodings": ["sampled", "greedy"]}, "seed": 3}`)
	var metrics strings.Builder
	for k := range 2 {
		stage := fmt.Sprintf("calibrated-interactive/seed-%d", k)
		fmt.Fprintf(&metrics, `{"event": "config", "stage": %q}`+"\n", stage)
		for step := range 4 {
			fmt.Fprintf(&metrics, `{"stage": %q, "step": %d, "rollout/reward_mean": %g, "loss/kl": %g}`+"\n", stage, step+1, 0.05+0.02*float64(step+k), 1e-5*float64(step+1))
			if step%2 == 0 {
				fmt.Fprintf(&metrics, `{"stage": %q, "step": %d, "monitor/train_user_reward": %g, "monitor/human_reward": %g}`+"\n", stage, step, 0.10+0.02*float64(step), 0.16-0.01*float64(step+k))
			}
		}
	}
	fmt.Fprintln(&metrics, `{"stage": "base", "step": 5, "sft/loss": 2.5}`)
	write("metrics.jsonl", metrics.String())
	episodes := func(agent string, success bool, userSays string) string {
		var b strings.Builder
		for i := range 2 {
			ep := dialog.Episode{ID: fmt.Sprintf("mathchat/test/%d/0", i), Task: "mathchat", Split: "test", Agent: agent, User: "human", Seed: uint64(100 + i), Index: i,
				Oracle: dialog.Oracle{Task: "mathchat", ID: fmt.Sprintf("mathchat/test/%d", i), Split: "test", Instruction: fmt.Sprintf("Ann has 3 apples and buys %d more. How many apples?", i+4), Truth: strconv.Itoa(i + 7),
					Facts: []dialog.Fact{{Key: "buy", Text: fmt.Sprintf("She buys %d more.", i+4), Value: strconv.Itoa(i + 4), Cues: []string{"buy"}, Hidden: true}}},
				Messages: []dialog.Message{
					{Role: dialog.RoleUser, Content: "Ann has 3 apples and buys some more. How many apples?"},
					{Role: dialog.RoleAssistant, Content: "How many does she buy?"},
					{Role: dialog.RoleUser, Content: userSays + fmt.Sprintf(" She buys %d more.", i+4)},
					{Role: dialog.RoleAssistant, Content: fmt.Sprintf("The answer is %d.", i+7)},
					{Role: dialog.RoleUser, Content: "Yes, that's what I got. Thanks!"},
				},
				Outcome: strconv.Itoa(i + 7), Success: success, End: dialog.Solved, Turns: 2}
			if success {
				ep.Reward = 1
			}
			line, err := json.Marshal(ep)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		return b.String()
	}
	for _, d := range []string{"eval", "eval-greedy"} {
		write(d+"/base.episodes.jsonl", episodes("base", true, "Sure."))
		write(d+"/calibrated-interactive/seed-0.episodes.jsonl", episodes("calibrated-interactive/seed-0", false, `<script>alert("x")</script> & <b>bold</b>`))
	}
	if withFidelity {
		write("fidelity/calibrated.json", `[{"task": "mathchat", "sim": "learned:checkpoints/sim", "delta_mean": 0.046, "delta": [0.01, 0.05, 0.08], "delta_floor": 0.026,
 "sycophancy": 0, "leak": 0, "oversharing": 0, "accept_right": 1, "end_agreement": 0.9, "sim_to_real_gap": 0.118,
 "agents": {"careful": {"sim": 0.8, "human": 0.7, "gap": 0.1}}, "human": {"sycophancy": 0, "leak": 0, "oversharing": 0, "accept_right": 1},
 "verdicts": {"wrong": 10, "right": 20, "accept_wrong": 0, "accept_right": 1}, "human_verdicts": {"wrong": 12, "right": 18, "accept_wrong": 0, "accept_right": 1}, "nll": 0.157, "contexts": 50}]`)
		write("fidelity/policies.json", `{"gap": {"calibrated-interactive": 0.03}, "note": "<i>per policy</i>"}`)
		// reproduce's fidelity stage: each policy's sim-to-real gap, and
		// its conversations with the simulator.
		for _, arm := range []string{"calibrated-interactive/seed-0", "base"} {
			write("fidelity/"+arm+".json", fmt.Sprintf(`{"arm": %q, "seed": 0, "simulator": "checkpoints/sim", "decoding": "sampled", "sim_score": 0.75, "human_score": 0.5,
 "gap": 0.25, "ci95": [0.1, 0.4], "problems": 2, "delta": [0.1, 0.3], "delta_mean": 0.2, "human_from": "eval/x"}`, strings.TrimSuffix(arm, "/seed-0")))
		}
		write("fidelity/base.episodes.jsonl", episodes("base", true, "Okay."))
		write("fidelity/calibrated-interactive/seed-0.episodes.jsonl", episodes("calibrated-interactive/seed-0", true, "Okay."))
	}
	return dir
}

func render(t *testing.T, dir string) string {
	t.Helper()
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// table returns the HTML of the first <table> whose opening tag contains
// open.
func table(t *testing.T, page, open string) string {
	t.Helper()
	i := strings.Index(page, open)
	if i < 0 {
		t.Fatalf("no %s in the page", open)
	}
	j := strings.Index(page[i:], "</table>")
	if j < 0 {
		t.Fatalf("%s is not closed", open)
	}
	return page[i : i+j]
}

func TestVerdictTables(t *testing.T) {
	page := render(t, tinyRun(t, false))
	verdict := table(t, page, `id="verdict"`)
	rows := strings.Count(verdict, `<tr class="claim`)
	if rows != 2 {
		t.Fatalf("the verdict table has %d claim rows, want 2:\n%s", rows, verdict)
	}
	// html/template writes "+" as "&#43;", which a browser shows as "+".
	for _, want := range []string{
		`<tr class="claim holds"><td>calibrated-interactive &gt; base</td><td>91.5 &gt; not reported</td><td class="num">0.550 vs 0.500</td><td class="num">&#43;0.050</td><td class="num">[&#43;0.010, &#43;0.090]</td><td class="num">&#43;0.020, &#43;0.080</td><td class="verdict">yes</td></tr>`,
		`<td>calibrated-interactive &gt; &lt;static &amp; co&gt;</td>`,
		`<td class="verdict">no: reversed (interval below 0)</td>`,
	} {
		if !strings.Contains(verdict, want) {
			t.Errorf("the verdict table lacks %s:\n%s", want, verdict)
		}
	}
	// The greedy summary is a second set with its own verdict.
	if n := strings.Count(page, `<table class="verdict"`); n != 2 {
		t.Errorf("%d verdict tables, want 2 (sampled and greedy)", n)
	}
	for _, want := range []string{"Held-out evaluation, sampled", "Held-out evaluation, greedy", "0.550 vs 0.500", "0.570 vs 0.600"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	seeds := table(t, page, `<table class="seeds"`)
	for _, want := range []string{"<th class=\"num\">seed 1</th>", "<td class=\"num\">0.520</td><td class=\"num\">0.580</td>"} {
		if !strings.Contains(seeds, want) {
			t.Errorf("the per-seed table lacks %s:\n%s", want, seeds)
		}
	}
}

var chartRE = regexp.MustCompile(`<svg class="chart"[^>]*aria-label="([^"]*)" data-ymin="([^"]*)" data-ymax="([^"]*)" data-datamin="([^"]*)" data-datamax="([^"]*)"`)

func TestCurvesFitTheirData(t *testing.T) {
	dir := tinyRun(t, false)
	page := render(t, dir)
	charts := chartRE.FindAllStringSubmatch(page, -1)
	if len(charts) != len(Metrics) {
		t.Fatalf("%d curve charts, want one per metric (%d) for the one RL arm", len(charts), len(Metrics))
	}
	for i, m := range Metrics {
		c := charts[i]
		if !strings.Contains(c[1], m.Title) {
			t.Errorf("chart %d is %q, want %s", i, c[1], m.Title)
		}
		var v [4]float64
		for j := range v {
			var err error
			if v[j], err = strconv.ParseFloat(c[2+j], 64); err != nil {
				t.Fatalf("%s: %v", c[0], err)
			}
		}
		ymin, ymax, dmin, dmax := v[0], v[1], v[2], v[3]
		// The axis holds the data and exceeds it by less than one of its
		// four or so steps at each end.
		if ymin > dmin || ymax < dmax || ymax-ymin > 2*(dmax-dmin) {
			t.Errorf("%s: y axis [%g, %g] for data in [%g, %g]", c[1], ymin, ymax, dmin, dmax)
		}
	}
	// The rewards all lie in [0.05, 0.16]: no axis to 1.
	rep, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Curves[0].Charts[:3] {
		if c.Y.Max > 0.2+1e-9 || c.Y.Min < 0 {
			t.Errorf("%s: y axis [%g, %g], want within [0, 0.2]", c.Title, c.Y.Min, c.Y.Max)
		}
		if len(c.Series) != 2 {
			t.Errorf("%s: %d lines, want one per seed (2)", c.Title, len(c.Series))
		}
	}
}

func TestTranscriptsEscapedAndMarked(t *testing.T) {
	page := render(t, tinyRun(t, true))
	if strings.Contains(page, "<script") || strings.Contains(page, "<b>bold") {
		t.Fatal("a transcript's markup reached the page unescaped")
	}
	for _, want := range []string{
		`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;`,
		`<span class="act provide_fact">provide_fact</span>`,
		`<span class="act accept">accept</span>`,
		`<span class="badge success">success</span>`,
		`<span class="badge fail">fail</span>`,
		"Ann has 3 apples and buys 5 more.",
		`<code>eval-greedy/</code>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// Nothing is loaded from anywhere: no script, no external reference.
	for _, banned := range []string{"<script", "src=", "<link", "http://", "https://", "@import", "url("} {
		if strings.Contains(page, banned) {
			t.Errorf("the page contains %q: not self-contained", banned)
		}
	}
}

func TestFidelityWhenPresent(t *testing.T) {
	page := render(t, tinyRun(t, true))
	fid := table(t, page, `<table class="fidelity"`)
	for _, want := range []string{"learned:checkpoints/sim", "<b>0.046</b>", "0.157", "human (reference)"} {
		if !strings.Contains(fid, want) {
			t.Errorf("the fidelity table lacks %s:\n%s", want, fid)
		}
	}
	for _, want := range []string{"fidelity/policies.json", "<code>gap.calibrated-interactive</code>", "&lt;i&gt;per policy&lt;/i&gt;", "δ_t: act distance"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	gaps := table(t, page, `<table class="gaps"`)
	if n := strings.Count(gaps, "<tr><td>"); n != 2 || strings.Index(gaps, "<td>base</td>") > strings.Index(gaps, "<td>calibrated-interactive</td>") {
		t.Errorf("the sim-to-real table has %d rows, want 2, the base first:\n%s", n, gaps)
	}
	if !strings.Contains(gaps, "<b>&#43;0.250</b>") {
		t.Errorf("the sim-to-real table lacks the gap:\n%s", gaps)
	}
	if !strings.Contains(page, "Against the calibrated simulator") {
		t.Error("the fidelity stage's conversations are not shown")
	}
	if without := render(t, tinyRun(t, false)); strings.Contains(without, `id="fidelity"`) {
		t.Error("a run without fidelity/ got a fidelity section")
	}
}

func TestNotARun(t *testing.T) {
	if err := Write(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a finished run") {
		t.Fatalf("got %v, want a refusal of a folder without summary.json", err)
	}
}

func TestFitAxis(t *testing.T) {
	for _, tc := range []struct {
		name             string
		lo, hi           float64
		wantMin, wantMax float64
		wantStep         float64
	}{
		{"rewards below 0.16", 0.03, 0.16, 0, 0.2, 0.05},
		{"unit interval", 0, 1, 0, 1, 0.25},
		{"whole steps stay", 0.2, 0.6, 0.2, 0.6, 0.1},
		{"tiny KL", 1e-5, 4e-5, 1e-5, 4e-5, 1e-5},
		{"flat", 0.5, 0.5, 0.46, 0.54, 0.02},
		{"flat zero", 0, 0, 0, 0.06, 0.02},
		{"flat negative", -2, -2, -2.1, -1.9, 0.05},
		{"negative", -0.07, 0.09, -0.1, 0.1, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			min, max, step := fitAxis(tc.lo, tc.hi, 4)
			near := func(a, b float64) bool { return mathAbs(a-b) <= 1e-9*(1+mathAbs(b)) }
			if !near(min, tc.wantMin) || !near(max, tc.wantMax) || !near(step, tc.wantStep) {
				t.Fatalf("fitAxis(%g, %g) = [%g, %g] step %g, want [%g, %g] step %g", tc.lo, tc.hi, min, max, step, tc.wantMin, tc.wantMax, tc.wantStep)
			}
		})
	}
}

func mathAbs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// svgChart is what a chart's SVG shows a reader: its visible title, axis
// labels and legend, and the series it draws.
type svgChart struct {
	class, title, xLabel, yLabel string
	// legend maps each entry's name to the colours of its sample.
	legend map[string][]string
	// lines are the polylines' names and colours; marks the colours of
	// every other data mark (dots, bars).
	lines      map[string]string
	markColors []string
}

var (
	svgRE       = regexp.MustCompile(`(?s)<svg class="([^"]*)".*?</svg>`)
	titleRE     = regexp.MustCompile(`(?s)<text class="chart-title"[^>]*>(.*?)</text>`)
	xLabelRE    = regexp.MustCompile(`<text class="axis-label x"[^>]*>([^<]*)</text>`)
	yLabelRE    = regexp.MustCompile(`<text class="axis-label y"[^>]*>([^<]*)</text>`)
	entryRE     = regexp.MustCompile(`(?s)<g class="legend-entry">(.*?)</g>`)
	entryTextRE = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)
	colorRE     = regexp.MustCompile(`(?:stroke|fill)="(#[0-9a-f]{6})"`)
	polylineRE  = regexp.MustCompile(`<polyline[^>]* stroke="([^"]*)"[^>]*><title>([^<]*)</title>`)
	markRE      = regexp.MustCompile(`<(?:circle|rect)[^>]*>`)
	tagRE       = regexp.MustCompile(`<[^>]*>`)
)

// svgCharts reads every chart of page.
func svgCharts(t *testing.T, page string) []svgChart {
	t.Helper()
	var out []svgChart
	for _, m := range svgRE.FindAllStringSubmatch(page, -1) {
		svg := m[0]
		c := svgChart{class: m[1], legend: map[string][]string{}, lines: map[string]string{}}
		if t := titleRE.FindStringSubmatch(svg); t != nil {
			c.title = strings.TrimSpace(tagRE.ReplaceAllString(t[1], " "))
		}
		if x := xLabelRE.FindStringSubmatch(svg); x != nil {
			c.xLabel = strings.TrimSpace(x[1])
		}
		if y := yLabelRE.FindStringSubmatch(svg); y != nil {
			c.yLabel = strings.TrimSpace(y[1])
		}
		data := svg
		if i := strings.Index(svg, `<g class="legend">`); i >= 0 {
			data = svg[:i]
			for _, e := range entryRE.FindAllStringSubmatch(svg[i:], -1) {
				name := entryTextRE.FindStringSubmatch(e[1])
				if name == nil {
					t.Errorf("%s: a legend entry without a name: %s", c.title, e[0])
					continue
				}
				for _, col := range colorRE.FindAllStringSubmatch(e[1], -1) {
					c.legend[name[1]] = append(c.legend[name[1]], col[1])
				}
			}
		}
		for _, l := range polylineRE.FindAllStringSubmatch(data, -1) {
			c.lines[l[2]] = l[1]
		}
		for _, mark := range markRE.FindAllString(data, -1) {
			if col := colorRE.FindStringSubmatch(mark); col != nil {
				c.markColors = append(c.markColors, col[1])
			}
		}
		out = append(out, c)
	}
	return out
}

// Every chart of the page, of every kind, shows a title, both axis labels
// and a legend entry per series, in its own SVG (issue 45: 8f05f75's
// fidelity chart had none of them, its spread chart no x label).
func TestEveryChartIsLabelled(t *testing.T) {
	page := render(t, tinyRun(t, true))
	charts := svgCharts(t, page)
	// kind: the SVG's class and a word of its title; want: its legend.
	want := []struct {
		kind, titleHas string
		n              int
		legend         []string
	}{
		{"chart", "batch reward", 1, []string{"seed 0", "seed 1"}},
		{"chart", "KL to the base policy", 1, []string{"seed 0", "seed 1"}},
		{"chart fidelity", "act distance to the human proxy", 1, []string{"learned:checkpoints/sim"}},
		{"chart fidelity", "under each policy", 1, []string{"base seed 0", "calibrated-interactive seed 0"}},
		{"spread", "held-out success", 2, []string{"mean over RL seeds (the base: its one model), line: 95% interval", "seed 0", "seed 1"}},
	}
	for _, w := range want {
		n := 0
		for _, c := range charts {
			if c.class != w.kind || !strings.Contains(c.title, w.titleHas) {
				continue
			}
			n++
			var names []string
			for name := range c.legend {
				names = append(names, name)
			}
			slices.Sort(names)
			if !slices.Equal(names, w.legend) {
				t.Errorf("%s chart %q: legend %q, want %q", w.kind, c.title, names, w.legend)
			}
		}
		if n != w.n {
			t.Errorf("%d %s charts titled …%s…, want %d", n, w.kind, w.titleHas, w.n)
		}
	}
	if len(charts) != len(Metrics)+4 {
		t.Errorf("%d charts, want %d: a curve per metric, two fidelity charts, two spread charts", len(charts), len(Metrics)+4)
	}
	for _, c := range charts {
		if c.title == "" || c.xLabel == "" || c.yLabel == "" {
			t.Errorf("%s chart %q: x label %q, y label %q: want a visible title and both axis labels", c.class, c.title, c.xLabel, c.yLabel)
		}
		if len(c.legend) == 0 {
			t.Errorf("%s chart %q has no legend", c.class, c.title)
		}
		if strings.HasPrefix(c.class, "chart") && len(c.legend) != len(c.lines) {
			t.Errorf("%s chart %q: %d legend entries for %d lines", c.class, c.title, len(c.legend), len(c.lines))
		}
		for name, col := range c.lines {
			if !slices.Contains(c.legend[name], col) {
				t.Errorf("%s chart %q: line %q (%s) has no legend entry of its colour: %v", c.class, c.title, name, col, c.legend)
			}
		}
		for _, col := range c.markColors {
			found := false
			for _, cols := range c.legend {
				found = found || slices.Contains(cols, col)
			}
			if !found {
				t.Errorf("%s chart %q: a mark coloured %s that no legend entry names", c.class, c.title, col)
			}
		}
	}
}

// A chart's title and legend stay inside its SVG: the layout wraps a long
// title and starts a new legend row rather than letting text run off.
func TestChartTextFits(t *testing.T) {
	rep, err := Load(tinyRun(t, true))
	if err != nil {
		t.Fatal(err)
	}
	long := []Line{{Name: "calibrated-interactive seed 0", X: []float64{0, 1}, Y: []float64{0, 1}, Color: color(0)},
		{Name: "naive-interactive seed 0", X: []float64{0, 1}, Y: []float64{1, 0}, Color: color(1)},
		{Name: "oracle-interactive seed 0", X: []float64{0, 1}, Y: []float64{1, 1}, Color: color(2)}}
	type chart struct {
		title  string
		w      int
		titles []TextLine
		legend []LegendEntry
		h      int
	}
	var all []chart
	add := func(c *LineChart) {
		if c != nil {
			all = append(all, chart{c.Title, c.W, c.Titles, c.Legend, c.H})
		}
	}
	for _, row := range rep.Curves {
		for _, c := range row.Charts {
			add(c)
		}
	}
	add(rep.GapDelta)
	add(newLineChart("calibrated-interactive: monitor: training-user reward over the iterations", "iteration", "reward", long, nil))
	for _, s := range rep.Sets {
		all = append(all, chart{s.Spread.Title, s.Spread.W, s.Spread.Titles, s.Spread.Legend, s.Spread.H})
	}
	for _, c := range all {
		if len(c.titles) == 0 {
			t.Errorf("%q: no visible title line", c.title)
		}
		for _, l := range c.titles {
			if textWidth(l.Text) > float64(c.w) {
				t.Errorf("%q: title line %q (%.0f wide) overflows the chart's %d", c.title, l.Text, textWidth(l.Text), c.w)
			}
		}
		rows := map[float64]bool{}
		for _, e := range c.legend {
			rows[e.Y] = true
			if e.X < 0 || e.X+legendSwatch+textWidth(e.Name) > float64(c.w) || e.Y > float64(c.h) {
				t.Errorf("%q: legend entry %q at (%g, %g) leaves the %d×%d chart", c.title, e.Name, e.X, e.Y, c.w, c.h)
			}
		}
		if c.title == "calibrated-interactive: monitor: training-user reward over the iterations" && (len(c.titles) < 2 || len(rows) < 2) {
			t.Errorf("%q: %d title lines, %d legend rows: want the long title and legend wrapped", c.title, len(c.titles), len(rows))
		}
	}
}

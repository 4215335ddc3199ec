package report

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/idgenkit/idgen/compare"
)

// palette gives each row of the report its colour, in the order of the
// Results: Tableau 10, then a cyan, black and olive, so that the default
// run's 11 rows all differ; past 13 rows the colours repeat (the chart
// markers still differ).
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
	"#17becf", "#222222", "#8c8c00"}

func colour(i int) string { return palette[i%len(palette)] }

// A bar of an SVG chart: the value and, when Lo ≤ Hi, an interval drawn
// as an error bar.
type bar struct {
	label      string
	value      float64
	lo, hi     float64
	hasCI      bool
	colour     string
	valueLabel string
}

// svgBars draws horizontal bars, one per row, with error bars, value
// labels, an axis from 0 past the largest bar or interval, and a dashed
// vertical line at mark (if > 0) named markLabel.
func svgBars(title, unit string, bars []bar, mark float64, markLabel string) template.HTML {
	const top, rowH, minPlot = 46.0, 24.0, 320.0
	if len(bars) == 0 {
		return template.HTML(`<p class="none">` + html.EscapeString(title) + `: not measured</p>`)
	}
	// Margins wide enough for the longest row name (left) and value label
	// (right, past the axis's end at the most), and a chart wide enough for
	// its title, so that no text runs past the SVG's edges.
	width, left, right := 820.0, 200.0, 110.0
	for _, b := range bars {
		left = max(left, textWidth(b.label, 12)+18)
		right = max(right, textWidth(b.valueLabel, 12)+16)
	}
	width = max(width, left+minPlot+right, textWidth(title, 14)*1.08+20)
	maxV := mark
	for _, b := range bars {
		maxV = max(maxV, b.value)
		if b.hasCI {
			maxV = max(maxV, b.hi)
		}
	}
	step := niceStep(maxV / 5)
	axisMax := math.Ceil(maxV/step) * step
	if axisMax <= 0 {
		axisMax, step = 1, 0.2
	}
	plotW := width - left - right
	height := top + rowH*float64(len(bars)) + 40
	x := func(v float64) float64 { return left + plotW*v/axisMax }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`,
		width, height, width, height)
	fmt.Fprintf(&b, `<title>%s</title><text x="%.0f" y="20" font-size="14" font-weight="bold">%s</text>`, esc(title), 10.0, esc(title))
	bottom := top + rowH*float64(len(bars))
	for v := 0.0; v <= axisMax+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, x(v), top-6, x(v), bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%s</text>`, x(v), bottom+16, esc(trimNum(v)))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%s</text>`, left+plotW/2, bottom+34, esc(unit))
	for i, br := range bars {
		y := top + rowH*float64(i)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, left-8, y+rowH/2+4, esc(br.label))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
			left, y+4, max(0, x(br.value)-left), rowH-8, br.colour, esc(br.label), esc(br.valueLabel))
		end := x(br.value)
		if br.hasCI {
			lo, hi, cy := x(br.lo), x(br.hi), y+rowH/2
			fmt.Fprintf(&b, `<g stroke="#222" stroke-width="1.5"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/></g>`,
				lo, cy, hi, cy, lo, cy-6, lo, cy+6, hi, cy-6, hi, cy+6)
			end = max(end, hi)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#222">%s</text>`, end+6, y+rowH/2+4, esc(br.valueLabel))
	}
	if mark > 0 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222" stroke-dasharray="5,4"/>`, x(mark), top-8, x(mark), bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#222">%s</text>`, x(mark), top-12, esc(markLabel))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func esc(s string) string { return html.EscapeString(s) }

// textWidth bounds the width in px of s in a sans-serif font of size px:
// 0.65 em a character, about DejaVu Sans's digits (0.636 em), the widest
// of the label's usual characters.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * 0.65 * size
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func trimNum(v float64) string {
	switch {
	case v >= 1e6:
		return trimFloat(v/1e6) + "M"
	case v >= 1e4:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// thousands writes n with commas: 2781 → "2,781".
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// Verdict says in plain words what a row costs against the compare.Baseline, for
// example "uuidv4: 1.8× the index, 0.70× the insert rate [0.65–0.74],
// 2,781 vs 5 full-page images, half the leaf chain out of order". It is
// empty for the compare.Baseline and the harness check's rows.
func Verdict(r *compare.Report, x *compare.Result) string { return view{r}.verdict(x) }

func (r view) verdict(x *compare.Result) string {
	bs := r.BaselineOf(x)
	if bs == nil || x.Strategy == compare.Baseline || x.Strategy == compare.ClientSeries || x.Strategy == compare.Reference {
		return ""
	}
	var parts []string
	if bs.IndexBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f× the index", float64(x.IndexBytes)/float64(bs.IndexBytes)))
	}
	if e, ok := x.RatioToBaseline["rows_per_sec"]; ok {
		if e.Significant() {
			parts = append(parts, fmt.Sprintf("%.2f× the insert rate [%.2f–%.2f]", e.Median, e.CI[0], e.CI[1]))
		} else {
			parts = append(parts, fmt.Sprintf("the same insert rate within the noise (%.2f× [%.2f–%.2f])", e.Median, e.CI[0], e.CI[1]))
		}
	} else if bs.RowsPerSec > 0 {
		parts = append(parts, fmt.Sprintf("%.2f× the insert rate (one trial: no interval)", x.RowsPerSec/bs.RowsPerSec))
	}
	if x.WALFPI != nil && bs.WALFPI != nil && *x.WALFPI+*bs.WALFPI > 0 {
		parts = append(parts, fmt.Sprintf("%s vs %s full-page images", thousands(*x.WALFPI), thousands(*bs.WALFPI)))
	}
	if x.AvgLeafDensity != nil {
		parts = append(parts, fmt.Sprintf("leaf pages %.0f %% full", *x.AvgLeafDensity))
	}
	if f := x.LeafFragmentation; f != nil {
		switch {
		case *f < 5:
			parts = append(parts, "the leaf chain in order")
		case *f >= 40 && *f <= 60:
			parts = append(parts, "half the leaf chain out of order")
		default:
			parts = append(parts, fmt.Sprintf("%.0f %% of the leaf chain out of order", *f))
		}
	}
	if x.PageSplits != nil && bs.PageSplits != nil && x.Engine == compare.EngineMariaDB {
		parts = append(parts, fmt.Sprintf("%s vs %s page splits", thousands(*x.PageSplits), thousands(*bs.PageSplits)))
	}
	if v := readVerdict(x, bs); v != "" {
		parts = append(parts, v)
	}
	return r.RowName(x) + ": " + strings.Join(parts, ", ")
}

// EngineName is the chart's and page's name for the server: "PostgreSQL
// 15.20".
func (r view) engineName() string {
	name := "PostgreSQL"
	switch r.Engine {
	case compare.EngineMariaDB:
		name = "MariaDB"
	case compare.EngineAll:
		pg, my, _ := strings.Cut(r.ServerVersion, "; ")
		pg, _, _ = strings.Cut(pg, " ")
		my, _, _ = strings.Cut(my, "-")
		return "PostgreSQL " + pg + " and MariaDB " + my
	}
	v, _, _ := strings.Cut(r.ServerVersion, " ")
	if r.Engine == compare.EngineMariaDB {
		v, _, _ = strings.Cut(v, "-") // 10.11.19-MariaDB-0+deb12u1
	}
	if v == "" {
		return name
	}
	return name + " " + v
}

type htmlRow struct {
	Colour                        template.CSS
	Strategy, Rows, CI, Ratio     string
	P50, P99, Index, Density, FPI string
	Frag, Splits, WAL             string
}

// WriteHTML writes report.html: one self-contained page (no network
// fetches, charts inline as SVG with the intervals as error bars) with the
// run's settings, the harness check's verdict, a verdict per scheme, the
// table of figures, the warnings and notes.
// The decision table comes first; it keeps the schemes that meet every
// one of require (Requirements); errors wrap ErrRequirement.
func WriteHTML(w io.Writer, r *compare.Report, require ...string) error {
	d, err := Decide(r, require)
	if err != nil {
		return err
	}
	return view{r}.writeHTML(w, d)
}

func (r view) writeHTML(w io.Writer, d *Decision) error {
	var rps, ratios, index, density []bar
	for i := range r.Results {
		x := &r.Results[i]
		c := colour(i)
		b := bar{label: r.RowName(x), value: x.RowsPerSec, colour: c, valueLabel: fmt.Sprintf("%.0f", x.RowsPerSec)}
		if ci := x.RowsPerSecCI; ci != nil {
			b.lo, b.hi, b.hasCI = ci[0], ci[1], true
			b.valueLabel += " " + ciText(ci, "%.0f")
		}
		rps = append(rps, b)
		if e, ok := x.RatioToBaseline["rows_per_sec"]; ok {
			ratios = append(ratios, bar{label: r.RowName(x), value: e.Median, lo: e.CI[0], hi: e.CI[1], hasCI: true, colour: c,
				valueLabel: strings.TrimSpace(estText(e))})
		}
		index = append(index, bar{label: r.RowName(x), value: float64(x.IndexBytes) / (1 << 20), colour: c,
			valueLabel: fmt.Sprintf("%.1f MB", float64(x.IndexBytes)/(1<<20))})
		if x.AvgLeafDensity != nil {
			density = append(density, bar{label: r.RowName(x), value: *x.AvgLeafDensity, colour: c,
				valueLabel: fmt.Sprintf("%.1f %%", *x.AvgLeafDensity)})
		}
	}
	eng := r.engineName()
	sub := fmt.Sprintf("%s, %d rows, %s, batch %d, %s, %s", eng, r.Rows, plural(r.Writers, "writer"), r.Batch, r.cacheSetting(), plural(r.Runs, "trial"))
	var verdicts []string
	var rows []htmlRow
	for i := range r.Results {
		x := &r.Results[i]
		if v := r.verdict(x); v != "" {
			verdicts = append(verdicts, v)
		}
		ratio := ""
		if e, ok := x.RatioToBaseline["rows_per_sec"]; ok {
			ratio = estText(e)
		}
		rows = append(rows, htmlRow{Colour: template.CSS(colour(i)), Strategy: r.RowName(x), Rows: fmt.Sprintf("%.0f", x.RowsPerSec),
			CI: ciText(x.RowsPerSecCI, "%.0f"), Ratio: ratio, P50: optF(x.P50Ms, 2), P99: optF(x.P99Ms, 2),
			Index: fmt.Sprintf("%.1f", float64(x.IndexBytes)/(1<<20)), Density: optF(x.AvgLeafDensity, 1),
			Frag: optF(x.LeafFragmentation, 1), Splits: optI(x.PageSplits), WAL: fmt.Sprintf("%.1f", float64(x.WALBytes)/(1<<20)),
			FPI: optI(x.WALFPI)})
	}
	var decision strings.Builder
	if len(d.Choices) > 0 || len(d.Require) > 0 {
		r.writeDecision(&decision, d)
	}
	data := map[string]any{
		"Decision": decision.String(),
		"Title":    "idgen compare: " + sub,
		"Server":   r.Server,
		"Meta":     r.Meta(),
		"Verdicts": verdicts,
		"Rows":     rows,
		"Harness":  r.HarnessChecks,
		"Warnings": r.Warnings,
		"Notes":    r.Notes,
		"Count":    len(r.Results),
		"Charts": []template.HTML{
			svgBars("rows/s, median and 95 % CI ("+sub+")", "rows/s", rps, 0, ""),
			svgBars("rows/s as a multiple of "+compare.Baseline+"'s, per-round ratios: median and 95 % CI ("+eng+")", "× "+compare.Baseline, ratios, 1, "1.0 = "+compare.Baseline),
			svgBars("index size ("+sub+")", "MB", index, 0, ""),
			svgBars("average leaf density, pgstatindex ("+sub+")", "%", density, 90, "fillfactor 90 %"),
		},
	}
	// The reads' charts, when the run measured reads (--reads).
	if point := r.readBars(compare.ReadPoint); len(point) > 0 {
		data["Charts"] = append(data["Charts"].([]template.HTML),
			svgBars("point lookups after the inserts, ops/s, median and 95 % CI ("+sub+", "+r.cacheSetting()+")", "ops/s", point, 0, ""),
			svgBars("lookups of the newest 1 %, ops/s, median and 95 % CI ("+sub+", "+r.cacheSetting()+")", "ops/s", r.readBars(compare.ReadRecent), 0, ""))
	}
	return htmlPage().Execute(w, data)
}

// htmlPage is parsed on first use, not at every idgen start.
var htmlPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 70em; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
.key { display: inline-block; width: 10px; height: 10px; margin-right: 6px; }
.pass { color: #1a7f37; font-weight: bold; } .fail { color: #c62828; font-weight: bold; } .inconclusive { color: #b26a00; font-weight: bold; }
.verdict { margin: 0.3em 0; } .small { color: #555; font-size: 13px; }
svg { display: block; margin: 1em 0; }
</style></head>
<body>
<h1>{{.Title}}</h1>
{{with .Decision}}<h2 id="decision">Decision</h2>
<pre class="decision">{{.}}</pre>{{end}}
<p class="small">{{.Server}}<br>
idgen {{.Meta.Build.Version}} {{.Meta.Build.Commit}} · {{.Meta.Machine.Cores}} cores, {{.Meta.Machine.OS}} · started {{.Meta.Started.Format "2006-01-02 15:04:05 UTC"}}, {{printf "%.0f" .Meta.DurationSec}} s · seed {{.Meta.Seed}}<br>
{{.Meta.StatsMethod}}. A ratio shown as “≈” has an interval that contains 1: no significant difference.</p>
{{range .Harness}}<p>Harness check{{if .Scenario}} ({{.Engine}} {{.Scenario}}){{end}}: <span class="{{.Verdict}}">{{.Verdict}}</span>: the harness sends the keys at {{printf "%.2f" .Ratio.Median}}× [{{printf "%.2f" (index .Ratio.CI 0)}}–{{printf "%.2f" (index .Ratio.CI 1)}}] the rate at which the server generates the same keys itself (pass at ≥ {{printf "%.2f" .Threshold}}), with {{.Writers}} writer{{if ne .Writers 1}}s{{end}} on each side: {{.Meaning}}.</p>{{end}}
<h2>Verdicts</h2>
{{range .Verdicts}}<p class="verdict">{{.}}</p>
{{end}}
<h2>Charts</h2>
{{range .Charts}}{{.}}
{{end}}
<h2>Figures</h2>
<table>
<tr><th>strategy</th><th>rows/s</th><th>95% CI</th><th>× bigserial</th><th>p50 ms</th><th>p99 ms</th><th>index MB</th><th>density %</th><th>frag %</th><th>splits</th><th>WAL MB</th><th>FPI</th></tr>
{{range .Rows}}<tr class="strategy"><td><span class="key" style="background: {{.Colour}}"></span>{{.Strategy}}</td><td>{{.Rows}}</td><td>{{.CI}}</td><td>{{.Ratio}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td>{{.Index}}</td><td>{{.Density}}</td><td>{{.Frag}}</td><td>{{.Splits}}</td><td>{{.WAL}}</td><td>{{.FPI}}</td></tr>
{{end}}</table>
{{if .Warnings}}<h2>Warnings</h2><ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Notes}}<h2>Notes</h2><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p id="status" class="small">loading</p>
<script>
document.getElementById("status").textContent = "rendered " + document.querySelectorAll("tr.strategy").length + " of {{.Count}} rows";
// Count the chart labels that run past their chart's edges (none should).
let clipped = 0;
for (const svg of document.querySelectorAll("svg")) {
  const vb = svg.viewBox.baseVal;
  for (const t of svg.querySelectorAll("text")) {
    const b = t.getBBox();
    if (b.x < vb.x - 0.5 || b.x + b.width > vb.x + vb.width + 0.5) clipped++;
  }
}
document.body.dataset.clipped = clipped;
</script>
</body></html>
`))
})

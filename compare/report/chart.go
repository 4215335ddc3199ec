package report

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"

	"github.com/idgenkit/idgen/compare"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart sizes: the plot, and the legend beside it (outside the plot).
const (
	chartWidth  = 9 * vg.Inch
	chartHeight = 5 * vg.Inch
	legendWidth = 2.4 * vg.Inch
)

// WriteCharts draws r with gonum.org/v1/plot, each chart as PNG and SVG
// in dir (ChartFiles), titled with the engine and server version:
//
//	throughput    rows/s against progress (tenths of the measured rows, medians over the trials),
//	              one line with its own colour and marker per strategy, the legend to the right of the plot
//	index_size    index size in MB per strategy, one colour per strategy, value labels on the bars
//	leaf_density  average leaf density in % per strategy, with the fillfactor (90 %) marked
func WriteCharts(r *compare.Report, dir string) error {
	charts := []struct {
		name string
		draw func() (*plot.Plot, *plot.Legend, error)
	}{
		{"throughput", func() (*plot.Plot, *plot.Legend, error) { return throughputChart(r) }},
		{"index_size", func() (*plot.Plot, *plot.Legend, error) {
			return barChart(r, "index size", "MB", "%.1f MB", func(x *compare.Result) (float64, bool) { return float64(x.IndexBytes) / (1 << 20), true }, 0)
		}},
		{"leaf_density", func() (*plot.Plot, *plot.Legend, error) {
			return barChart(r, "average leaf density (pgstatindex)", "%", "%.1f %%", func(x *compare.Result) (float64, bool) {
				if x.AvgLeafDensity == nil {
					return 0, false
				}
				return *x.AvgLeafDensity, true
			}, 90)
		}},
	}
	for _, c := range charts {
		p, leg, err := c.draw()
		if err != nil {
			return fmt.Errorf("compare/report: chart %s: %w", c.name, err)
		}
		for _, ext := range []string{"png", "svg"} {
			if err := saveChart(p, leg, filepath.Join(dir, c.name+"."+ext), ext); err != nil {
				return fmt.Errorf("compare/report: chart %s.%s: %w", c.name, ext, err)
			}
		}
	}
	return nil
}

// saveChart draws p with its legend, if any, in a column to its right.
func saveChart(p *plot.Plot, leg *plot.Legend, path, format string) error {
	c, err := draw.NewFormattedCanvas(chartWidth, chartHeight, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	// A white page, and a margin so that nothing touches the edges.
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	dc = draw.Crop(dc, 8, -12, 8, -8)
	if leg == nil {
		p.Draw(dc)
	} else {
		p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
		leg.Draw(draw.Crop(dc, dc.Size().X-legendWidth+12, 0, 0, -40))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// title names the chart, the engine and server version, and the run.
func title(r *compare.Report, what string) string {
	return fmt.Sprintf("%s\n%s · %d rows, %s, batch %d, %s, %s",
		what, view{r}.engineName(), r.Rows, plural(r.Writers, "writer"), r.Batch, view{r}.cacheSetting(), plural(max(r.Runs, 1), "trial"))
}

// seriesColour is the colour of row i, as in report.html.
func seriesColour(i int) color.Color {
	v, _ := strconv.ParseUint(palette[i%len(palette)][1:], 16, 32)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	return p
}

func throughputChart(r *compare.Report) (*plot.Plot, *plot.Legend, error) {
	p := newPlot(title(r, "rows/s over the run"))
	p.X.Label.Text = "progress (% of measured rows)"
	p.Y.Label.Text = "rows/s"
	p.X.Min, p.X.Max, p.Y.Min = 0, 100, 0
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.Top = true
	maxY := 0.0
	for i := range r.Results {
		x := &r.Results[i]
		if len(x.RowsPerSecTenths) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(x.RowsPerSecTenths))
		for k, v := range x.RowsPerSecTenths {
			pts[k] = plotter.XY{X: float64(k+1) * 10, Y: v}
			maxY = max(maxY, v)
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, nil, err
		}
		l.Color, l.Width = seriesColour(i), vg.Points(1.5)
		s.Color, s.Shape, s.Radius = seriesColour(i), plotutil.Shape(i), vg.Points(3.5)
		p.Add(l, s)
		leg.Add(r.RowName(x), l, s)
	}
	p.Y.Max = maxY * 1.08
	return p, &leg, nil
}

// barChart draws one horizontal bar per Result with a value, each in its
// row's colour and labelled with format; mark > 0 adds a dashed vertical
// line at mark, named in the legend.
func barChart(r *compare.Report, what, unit, format string, value func(*compare.Result) (float64, bool), mark float64) (*plot.Plot, *plot.Legend, error) {
	p := newPlot(title(r, what))
	p.X.Label.Text = unit
	p.X.Min = 0
	var names []string
	var labels plotter.XYLabels
	maxV := mark
	for i := len(r.Results) - 1; i >= 0; i-- { // first result on top
		x := &r.Results[i]
		v, ok := value(x)
		if !ok {
			continue
		}
		b, err := plotter.NewBarChart(plotter.Values{v}, vg.Points(14))
		if err != nil {
			return nil, nil, err
		}
		b.Horizontal, b.XMin = true, float64(len(names))
		b.Color, b.LineStyle.Width = seriesColour(i), 0
		p.Add(b)
		labels.XYs = append(labels.XYs, plotter.XY{X: v, Y: float64(len(names))})
		labels.Labels = append(labels.Labels, fmt.Sprintf(format, v))
		names = append(names, r.RowName(x))
		maxV = max(maxV, v)
	}
	if len(names) == 0 {
		p.Title.Text += " (not measured)"
		return p, nil, nil
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, nil, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].YAlign = draw.YCenter
	}
	lb.Offset = vg.Point{X: vg.Points(4)}
	p.Add(plotter.NewGrid(), lb)
	p.NominalY(names...)
	// Room past the largest bar for its label.
	p.X.Max = maxV * 1.22
	if mark == 0 {
		return p, nil, nil
	}
	l, err := plotter.NewLine(plotter.XYs{{X: mark, Y: -0.5}, {X: mark, Y: float64(len(names)) - 0.5}})
	if err != nil {
		return nil, nil, err
	}
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(l)
	leg := plot.NewLegend()
	leg.Top = true
	leg.Add(fmt.Sprintf("fillfactor %.0f %%", mark), l)
	return p, &leg, nil
}

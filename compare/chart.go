package compare

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WriteCharts draws the report with gonum.org/v1/plot, each chart as PNG
// and SVG in dir:
//
//	throughput    rows/s against progress (tenths of the measured rows), one line per strategy
//	index_size    index size in MB per strategy
//	leaf_density  average leaf density in % per strategy, with the fillfactor (90 %) marked
func (r *Report) WriteCharts(dir string) error {
	charts := []struct {
		name string
		draw func() (*plot.Plot, error)
	}{
		{"throughput", r.throughputChart},
		{"index_size", func() (*plot.Plot, error) {
			return r.barChart("index size", "MB", func(x *Result) (float64, bool) { return float64(x.IndexBytes) / (1 << 20), true }, 0)
		}},
		{"leaf_density", func() (*plot.Plot, error) {
			return r.barChart("average leaf density (pgstatindex)", "%", func(x *Result) (float64, bool) {
				if x.AvgLeafDensity == nil {
					return 0, false
				}
				return *x.AvgLeafDensity, true
			}, 90)
		}},
	}
	for _, c := range charts {
		p, err := c.draw()
		if err != nil {
			return fmt.Errorf("compare: chart %s: %w", c.name, err)
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(dir, c.name+ext)); err != nil {
				return fmt.Errorf("compare: chart %s: %w", c.name+ext, err)
			}
		}
	}
	return nil
}

func (r *Report) title(what string) string {
	return fmt.Sprintf("%s: %d rows, %d writers, batch %d, shared_buffers %s", what, r.Rows, r.Writers, r.Batch, r.SharedBuffers)
}

func (r *Report) throughputChart() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = r.title("rows/s over the run")
	p.X.Label.Text = "progress (% of measured rows)"
	p.Y.Label.Text = "rows/s"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	i, maxY := 0, 0.0
	for _, x := range r.Results {
		if len(x.RowsPerSecTenths) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(x.RowsPerSecTenths))
		for k, v := range x.RowsPerSecTenths {
			pts[k] = plotter.XY{X: float64(k+1) * 10, Y: v}
			maxY = max(maxY, v)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(x.Strategy, l)
		i++
	}
	// Headroom for the legend, which sits in the top right corner.
	p.Y.Max = maxY * (1.05 + 0.055*float64(i))
	return p, nil
}

// barChart draws one horizontal bar per Result with a value; mark > 0 adds
// a vertical line at mark.
func (r *Report) barChart(what, unit string, value func(*Result) (float64, bool), mark float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = r.title(what)
	p.X.Label.Text = unit
	p.X.Min = 0
	var vals plotter.Values
	var names []string
	for i := len(r.Results) - 1; i >= 0; i-- { // first result on top
		x := &r.Results[i]
		if v, ok := value(x); ok {
			vals = append(vals, v)
			names = append(names, x.Strategy)
		}
	}
	if len(vals) == 0 {
		p.Title.Text += " (not measured)"
		return p, nil
	}
	b, err := plotter.NewBarChart(vals, vg.Points(14))
	if err != nil {
		return nil, err
	}
	b.Horizontal = true
	b.Color = plotutil.Color(0)
	p.Add(plotter.NewGrid(), b)
	p.NominalY(names...)
	if mark > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: mark, Y: -0.5}, {X: mark, Y: float64(len(vals)) - 0.5}})
		if err != nil {
			return nil, err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("fillfactor %.0f %%", mark), l)
		p.X.Max = 100 // the legend sits in the bottom right corner, past the bars
	}
	return p, nil
}

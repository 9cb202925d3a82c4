package console

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/golden"
)

func days(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("2026-11-%02d", i+1)
	}
	return out
}

var chartCases = []struct {
	name  string
	chart Chart
}{
	{"empty", Chart{Title: "Spend per day", Labels: days(7), Format: FormatUSD}},
	{"no-labels", Chart{Title: "Tokens per day"}},
	{"two-models-days", Chart{Title: "Spend per day", Labels: days(5), Format: FormatUSD, Series: []Series{
		{Name: "openai/gpt-4.1-mini", Values: []float64{0.012, 0, 0.034, 0.02, 0.001}},
		{Name: "mock/echo", Values: []float64{0.002, 0.004, 0, 0.01, 0}},
	}}},
	{"tokens-months", Chart{Title: "Tokens per month", Labels: []string{"2026-09", "2026-10", "2026-11", "2026-12"}, Series: []Series{
		{Name: "a", Values: []float64{12000, 450000, 1.2e6, 30}},
	}}},
	{"many-models-folded", Chart{Title: "Tokens per day", Labels: days(3), Series: func() []Series {
		var s []Series
		for i := range 10 {
			s = append(s, Series{Name: fmt.Sprintf("m%d", i), Values: []float64{float64(i + 1), 1, 0}})
		}
		return s
	}()}},
	{"escaped-and-malformed", Chart{Title: `Spend <for> "you"`, Labels: []string{"<b>", "d2"}, Format: FormatUSD, Series: []Series{
		{Name: `<script>alert(1)</script>`, Values: []float64{1, math.NaN(), 5}},
		{Name: "short", Values: []float64{-3}},
	}}},
	{"one-request", Chart{Title: "Requests per day", Labels: days(3), Series: []Series{{Name: "mock/echo", Values: []float64{0, 0, 1}}}}},
	{"thirty-one-days", Chart{Title: "Requests per day", Labels: days(30), Series: []Series{
		{Name: "mock/echo", Values: func() []float64 {
			v := make([]float64, 30)
			for i := range v {
				v[i] = float64(i % 7)
			}
			return v
		}()},
	}}},
}

func TestChartGolden(t *testing.T) {
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			got := string(tc.chart.SVG())
			golden.Check(t, filepath.Join("testdata", "chart-"+tc.name+".svg"), []byte(got+"\n"))
		})
	}
}

// TestChartIsWellFormed parses every drawing as XML (a name is escaped, never markup) and
// checks the geometry: the bars of one period stack to its total, no bar leaves the plot,
// the tallest total reaches at least half the plot (the scale is not wasted).
func TestChartIsWellFormed(t *testing.T) {
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			svg := string(tc.chart.SVG())
			if strings.Contains(svg, "<script") || strings.Contains(svg, "<b>") {
				t.Fatalf("markup from a name or label reached the SVG: %s", svg)
			}
			d := xml.NewDecoder(strings.NewReader(svg))
			plotTop, plotBottom := float64(chartTop), float64(chartH-chartBottom)
			var bars int
			tallest := 0.0
			perX := map[string]float64{}
			for {
				tok, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("not well-formed XML: %v\n%s", err, svg)
				}
				se, ok := tok.(xml.StartElement)
				if !ok || se.Name.Local != "rect" {
					continue
				}
				a := attrs(se)
				if a["width"] == "10" && a["height"] == "10" {
					continue // a legend swatch
				}
				bars++
				y, h := f(t, a["y"]), f(t, a["height"])
				if y < plotTop-0.01 || y+h > plotBottom+0.01 || h <= 0 {
					t.Errorf("bar outside the plot: y=%v h=%v", y, h)
				}
				perX[a["x"]] += h
				tallest = math.Max(tallest, perX[a["x"]])
			}
			want := 0
			for _, s := range foldSeries(tc.chart.Series, len(tc.chart.Labels)) {
				for _, v := range s.Values {
					if v > 0 {
						want++
					}
				}
			}
			if bars != want {
				t.Errorf("%d bars, want one per positive value: %d", bars, want)
			}
			if want > 0 && tallest < (plotBottom-plotTop)/2 {
				t.Errorf("tallest period is %v of a %v plot: the scale wastes more than half", tallest, plotBottom-plotTop)
			}
		})
	}
}

func attrs(se xml.StartElement) map[string]string {
	m := map[string]string{}
	for _, a := range se.Attr {
		m[a.Name.Local] = a.Value
	}
	return m
}

func f(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

func TestNiceScale(t *testing.T) {
	for _, tc := range []struct {
		max   float64
		step  float64
		ticks int
	}{
		{0, 1, 4},
		{1, 0.25, 4},
		{7, 2, 4},
		{10, 2.5, 4},
		{0.034, 0.01, 4},
		{1.2e6, 500000, 3},
		{450001, 200000, 3},
	} {
		step, ticks := niceScale(tc.max)
		if math.Abs(step-tc.step) > 1e-12 || ticks != tc.ticks {
			t.Errorf("niceScale(%v) = %v, %d; want %v, %d", tc.max, step, ticks, tc.step, tc.ticks)
		}
		if tc.max > 0 && step*float64(ticks) < tc.max {
			t.Errorf("niceScale(%v): %v steps of %v do not cover it", tc.max, ticks, step)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{FormatUSD(0), "$0"},
		{FormatUSD(0.0012), "$0.0012"},
		{FormatUSD(0.000034), "$0.000034"},
		{FormatUSD(1.5), "$1.50"},
		{FormatUSD(0.002), "$0.002"},
		{FormatUSD(0.0099), "$0.0099"},
		{FormatUSD(12345), "$12.3k"},
		{formatCount(950), "950"},
		{formatCount(1234), "1.2k"},
		{formatCount(3.45e6), "3.5M"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

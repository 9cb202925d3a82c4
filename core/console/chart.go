package console

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Chart is a stacked bar chart: a bar per period (a day or a month), a colour per model.
// Drawn by the server as SVG, so the page needs no script and no chart library, and the
// same usage answer always draws the same bytes (the golden files under testdata).
type Chart struct {
	// Title names the chart for screen readers (the SVG's <title>) and is drawn above it.
	Title string
	// Labels are the periods, oldest first: the x axis.
	Labels []string
	// Series are the models, each with a value per label.
	Series []Series
	// Format writes a value on the y axis and in each bar's tooltip (plain numbers when nil).
	Format func(float64) string
}

// Series is one model's values, one per label.
type Series struct {
	Name   string
	Values []float64
}

// The drawing's geometry, in SVG user units; CSS scales the whole (width: 100%).
const (
	chartW      = 720
	chartH      = 260
	chartLeft   = 64 // room for the y axis labels
	chartRight  = 8
	chartTop    = 28
	chartBottom = 40 // room for the x axis labels
	maxXLabels  = 8
	maxSeries   = 8 // more models are summed into "other", or the colours stop telling them apart
)

// palette tells the series apart in colour and keeps a 3:1 contrast against white (WCAG
// non-text contrast); the legend names each colour, so colour is never the only cue.
var palette = [maxSeries]string{"#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207", "#4b5563"}

// SVG draws the chart. An empty chart (no labels, or nothing but zeros) draws its axes and
// says there was no usage.
func (c Chart) SVG() template.HTML {
	format := c.Format
	if format == nil {
		format = formatCount
	}
	series := foldSeries(c.Series, len(c.Labels))
	totals := make([]float64, len(c.Labels))
	for _, s := range series {
		for i, v := range s.Values {
			totals[i] += v
		}
	}
	top := 0.0
	for _, t := range totals {
		top = math.Max(top, t)
	}
	step, ticks := niceScale(top)
	if c.Format == nil && step < 1 {
		// Counts (requests, tokens) come whole: no grid line at 0.25 of a request.
		step, ticks = 1, max1(int(math.Ceil(top)))
	}
	ceil := step * float64(ticks)

	var b strings.Builder
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-labelledby="%s" class="chart">`, chartW, chartH, chartID(c.Title))
	fmt.Fprintf(&b, `<title id="%s">%s</title>`, chartID(c.Title), esc(c.Title))
	fmt.Fprintf(&b, `<text x="%d" y="16" class="chart-title">%s</text>`, chartLeft, esc(c.Title))

	plotW := float64(chartW - chartLeft - chartRight)
	plotH := float64(chartH - chartTop - chartBottom)
	base := float64(chartTop) + plotH
	for i := 0; i <= ticks; i++ {
		v := step * float64(i)
		y := base - plotH*v/ceil
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" class="grid"/>`, chartLeft, num(y), chartW-chartRight, num(y))
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end" class="axis">%s</text>`, chartLeft-6, num(y+4), esc(format(v)))
	}
	if top == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" class="empty">No usage in this period</text>`, num(float64(chartLeft)+plotW/2), num(float64(chartTop)+plotH/2))
	}
	n := len(c.Labels)
	if n > 0 {
		slot := plotW / float64(n)
		barW := math.Max(slot*0.8, 1)
		every := (n + maxXLabels - 1) / maxXLabels
		for i, label := range c.Labels {
			x := float64(chartLeft) + slot*float64(i) + (slot-barW)/2
			y := base
			for k, s := range series {
				v := s.Values[i]
				if v <= 0 {
					continue
				}
				// A positive value is at least one unit tall, so a model used a little
				// beside one used a lot still shows; the stack never leaves the plot.
				h := math.Max(plotH*v/ceil, 1)
				if y-h < float64(chartTop) {
					h = y - float64(chartTop)
				}
				if h <= 0 {
					continue
				}
				y -= h
				fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s, %s: %s</title></rect>`,
					num(x), num(y), num(barW), num(h), palette[k], esc(label), esc(s.Name), esc(format(v)))
			}
			if i%every == 0 {
				fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle" class="axis">%s</text>`, num(x+barW/2), chartH-chartBottom+16, esc(label))
			}
		}
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" class="baseline"/>`, chartLeft, num(base), chartW-chartRight, num(base))
	// The legend: a swatch and a name per model, in the order the bars stack.
	x := float64(chartLeft)
	for k, s := range series {
		fmt.Fprintf(&b, `<rect x="%s" y="%d" width="10" height="10" fill="%s"/><text x="%s" y="%d" class="legend">%s</text>`,
			num(x), chartH-14, palette[k], num(x+14), chartH-5, esc(s.Name))
		x += 14 + 7*float64(len([]rune(s.Name))) + 16
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text above went through HTMLEscapeString
}

// foldSeries keeps the first maxSeries-1 series and sums the rest into "other", and pads or
// cuts each series to n values, so a malformed answer cannot index out of range.
func foldSeries(in []Series, n int) []Series {
	fit := func(v []float64) []float64 {
		out := make([]float64, n)
		copy(out, v)
		for i, x := range out {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				out[i] = 0
			}
		}
		return out
	}
	var out []Series
	for i, s := range in {
		if i < maxSeries-1 || len(in) == maxSeries {
			out = append(out, Series{Name: s.Name, Values: fit(s.Values)})
			continue
		}
		if i == maxSeries-1 {
			out = append(out, Series{Name: "other", Values: make([]float64, n)})
		}
		for j, v := range fit(s.Values) {
			out[maxSeries-1].Values[j] += v
		}
	}
	return out
}

// niceScale picks a step of 1, 2 or 5 times a power of ten and the number of steps (at
// most 5) whose top covers max, so the grid lines fall on round values.
func niceScale(max float64) (step float64, ticks int) {
	if !(max > 0) || math.IsInf(max, 0) {
		return 1, 4
	}
	raw := max / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step = m * mag
		if step*4 >= max {
			break
		}
	}
	ticks = int(math.Ceil(max/step - 1e-9))
	return step, max1(ticks)
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// chartID makes an element id of a title, so two charts on a page label themselves apart.
func chartID(title string) string {
	var b strings.Builder
	b.WriteString("chart-")
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// num writes a coordinate with at most two decimals and no trailing zeros: stable bytes for
// the golden files, and short ones for the page.
func num(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}

// formatCount writes a count the way a person reads it: 950, 1.2k, 3.4M.
func formatCount(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return trim(v/1e9) + "G"
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e3:
		return trim(v/1e3) + "k"
	}
	return trim(v)
}

// FormatUSD writes an amount in dollars, with the cents (or, under a cent, the significant
// digits that tell small amounts apart).
func FormatUSD(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "$0"
	case a < 0.01:
		// Two significant digits: $0.0012, $0.000034 (a nano-dollar is the finest the
		// counters keep).
		s := strconv.FormatFloat(v, 'f', min(int(-math.Floor(math.Log10(a)))+1, 9), 64)
		return "$" + strings.TrimRight(s, "0")
	case a >= 1e4:
		return "$" + formatCount(v)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}

func trim(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

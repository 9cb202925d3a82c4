package cost

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Sizes are the function sizes of a measured table, Lambda first, each once, smallest first.
func (m Measured) Sizes() []Size {
	var out []Size
	for _, f := range m.Figures {
		s := Size{f.Platform, f.MemoryMB, f.VCPU, f.Concurrency}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Size) int {
		if a.Platform != b.Platform {
			return strings.Compare(b.Platform, a.Platform) // lambda before gcf
		}
		if a.Concurrency != b.Concurrency {
			return a.Concurrency - b.Concurrency
		}
		if a.VCPU != b.VCPU {
			return cmp.Compare(a.VCPU, b.VCPU)
		}
		return a.MemoryMB - b.MemoryMB
	})
	return out
}

// Check is one comparison of the default's rule: a size's added latency on one scenario
// against the largest size's at the same concurrency.
type Check struct {
	Scenario, Metric string
	Ms, LargestMs    float64
	LimitMs          float64 // the most it may be: 10% over the largest's, or the largest's spread if wider
	Pass             bool
}

// Choice is the template default the rule picks among a platform's sizes at one concurrency.
type Choice struct {
	Size, Largest Size
	Checks        []Check // the chosen size's
	Refused       map[Size][]Check
}

// Tolerance is the rule's margin: a size may add at most 10% more latency than the largest.
const Tolerance = 0.10

// Choose applies the rule of the templates' defaults: the cheapest size whose added latency
// stays within 10% of the largest's, on every scenario, at p50 and p99 (for a stream: its
// first token, which is what the gateway can delay; the rest is paced by the model). Each
// figure is the median of a few rounds on a shared machine, so a difference the rounds
// cannot tell apart passes too: the size's figure, less its own spread over the rounds (at p50;
// at p99, which is nearly a round's slowest request, the figure itself), within 10% of the
// largest's or within the largest's spread. Sizes are tried cheapest first (cost
// rises with memory on Lambda and with vCPU on Cloud Functions).
func (m Measured) Choose(platform string, concurrency int) (Choice, error) {
	var sizes []Size
	for _, s := range m.Sizes() {
		if s.Platform == platform && s.Concurrency == concurrency {
			sizes = append(sizes, s)
		}
	}
	if len(sizes) == 0 {
		return Choice{}, fmt.Errorf("no measured %s size at concurrency %d", platform, concurrency)
	}
	largest := sizes[len(sizes)-1]
	c := Choice{Largest: largest, Refused: map[Size][]Check{}}
	for _, s := range sizes {
		checks, err := m.checks(s, largest)
		if err != nil {
			return Choice{}, err
		}
		if !slices.ContainsFunc(checks, func(k Check) bool { return !k.Pass }) {
			c.Size, c.Checks = s, checks
			return c, nil
		}
		c.Refused[s] = checks
	}
	return Choice{}, fmt.Errorf("the rule refuses even the largest size: %v", largest)
}

func (m Measured) checks(s, largest Size) ([]Check, error) {
	var out []Check
	for _, f := range m.Figures {
		if f.Platform != s.Platform || f.MemoryMB != s.MemoryMB || f.Concurrency != s.Concurrency {
			continue
		}
		l, err := m.Figure(largest.Platform, largest.MemoryMB, largest.Concurrency, f.Scenario)
		if err != nil {
			return nil, err
		}
		add := func(metric string, v, spread, lv, lspread float64) {
			limit := math.Max(lv*(1+Tolerance), lv+lspread)
			out = append(out, Check{f.Scenario, metric, v, lv, limit, v-spread <= limit})
		}
		if isStream(f.Scenario) {
			add("added TTFT p50", f.AddedTTFTMs, f.AddedTTFTSpreadMs, l.AddedTTFTMs, l.AddedTTFTSpreadMs)
			continue
		}
		add("added p50", f.AddedMs, f.AddedSpreadMs, l.AddedMs, l.AddedSpreadMs)
		// A p99 of a few dozen requests a round is nearly their slowest: its own spread is
		// mostly that one request, so only the largest size's spread is allowed for.
		add("added p99", f.AddedP99Ms, 0, l.AddedP99Ms, l.AddedP99SpreadMs)
	}
	return out, nil
}

func isStream(scenario string) bool {
	return scenario == ScenarioChatStream || scenario == ScenarioMessagesStream || scenario == ScenarioResponsesStream
}

// Report is what `fngate cost` prints.
type Report struct {
	Model    Model
	Profiles []Profile
	Features Features
	// RequestsPerMonth is the volume the monthly column is for.
	RequestsPerMonth float64
}

// Write prints the tables in Markdown: per profile, every measured size's dollars per
// million requests (and per unit, for sessions) with what they are made of, the month at the
// volume, and where each always-on container breaks even; then the defaults the rule picks.
func (r Report) Write(w io.Writer) error {
	m := r.Model
	fmt.Fprintf(w, "Figures: %s. Prices of %s (fngate cost -prices lists each with its source). Features: %s. Volume: %s requests a month.\n",
		m.Measured.Source, Checked, r.Features, count(r.RequestsPerMonth))
	for _, p := range r.Profiles {
		fmt.Fprintf(w, "\n### %s\n\n", p.Title)
		unit := ""
		if p.Requests > 1 {
			unit = " | USD per session"
		}
		head := "| Size | added p50 ms | USD per million requests | compute | requests | stores | logs" + unit + " | USD a month |"
		for _, c := range Containers {
			head += " breaks even with " + c.Name + " at |"
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, strings.Repeat("|---", strings.Count(head, "|")-1)+"|")
		for _, s := range m.Measured.Sizes() {
			f, err := m.Measured.Figure(s.Platform, s.MemoryMB, s.Concurrency, p.Scenario)
			if err != nil {
				continue // a scenario the benchmark skips at this size (embeddings at concurrency > 1)
			}
			b, err := m.PerRequest(p, s, r.Features, r.RequestsPerMonth)
			if err != nil {
				return err
			}
			added := f.AddedMs
			if isStream(p.Scenario) {
				added = f.AddedTTFTMs
			}
			row := fmt.Sprintf("| %v | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f", s, added, b.Total()*1e6, b.Compute*1e6, b.Requests*1e6, b.Stores*1e6, b.Logs*1e6)
			if p.Requests > 1 {
				row += fmt.Sprintf(" | %.5f", b.Total()*float64(p.Requests))
			}
			row += fmt.Sprintf(" | %.2f |", b.Total()*r.RequestsPerMonth)
			for _, c := range Containers {
				n, err := m.BreakEven(p, s, r.Features, c)
				if err != nil {
					return err
				}
				if n == 0 {
					row += " never |"
				} else {
					row += " " + count(n) + " |"
				}
			}
			fmt.Fprintln(w, row)
		}
	}
	fmt.Fprintf(w, "\nAlways on, at %s requests a month of the first profile:", count(r.RequestsPerMonth))
	for _, c := range Containers {
		sec := 1.0
		if len(r.Profiles) > 0 {
			sec = r.Profiles[0].ModelSeconds
		}
		fmt.Fprintf(w, " %s USD %.2f;", c.Name, m.Monthly(c, r.RequestsPerMonth, sec))
	}
	fmt.Fprintln(w)
	return r.writeDefaults(w)
}

func (r Report) writeDefaults(w io.Writer) error {
	fmt.Fprintf(w, "\n### Template defaults: the cheapest size within %.0f%% of the largest's added latency\n\n", Tolerance*100)
	fmt.Fprintln(w, "| Platform, concurrency | chosen | largest | closest check of the chosen size | sizes refused, and why |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, pc := range []struct {
		platform string
		conc     int
	}{{PlatformLambda, 1}, {PlatformGCF, 1}, {PlatformGCF, 80}, {PlatformGCF, 250}} {
		c, err := r.Model.Measured.Choose(pc.platform, pc.conc)
		if err != nil {
			continue
		}
		var refused []string
		for _, s := range r.Model.Measured.Sizes() {
			if ks, ok := c.Refused[s]; ok {
				refused = append(refused, fmt.Sprintf("%v: %s", s, failed(ks)))
			}
		}
		fmt.Fprintf(w, "| %s, %d | %v | %v | %s | %s |\n", pc.platform, pc.conc, c.Size, c.Largest, closest(c.Checks), strings.Join(refused, "; "))
	}
	return nil
}

func failed(ks []Check) string {
	var s []string
	for _, k := range ks {
		if !k.Pass {
			s = append(s, fmt.Sprintf("%s %s %.2f ms > %.2f", k.Scenario, k.Metric, k.Ms, k.LimitMs))
		}
	}
	return strings.Join(s, ", ")
}

func closest(ks []Check) string {
	best, bi := math.Inf(1), -1
	for i, k := range ks {
		if k.LimitMs > 0 {
			if room := (k.LimitMs - k.Ms) / k.LimitMs; k.Pass && room < best {
				best, bi = room, i
			}
		}
	}
	if bi < 0 {
		return ""
	}
	k := ks[bi]
	return fmt.Sprintf("%s %s %.2f ms (largest %.2f, limit %.2f)", k.Scenario, k.Metric, k.Ms, k.LargestMs, k.LimitMs)
}

func (f Features) String() string {
	var on []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.Limits, "limits"}, {f.History, "usage history"}, {f.StoredKeys, "stored keys"}, {f.Cache, fmt.Sprintf("response cache (%.0f%% hits)", f.CacheHits*100)}} {
		if x.on {
			on = append(on, x.name)
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ", ")
}

// count prints a volume as people say it: 1.2 M, 350 k.
func count(n float64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.3g billion", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.3g million", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.3g thousand", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}

// WritePrices prints PriceTable.
func WritePrices(w io.Writer) {
	fmt.Fprintf(w, "Prices as of %s, on demand, first tier, no free tier.\n\n| Price | USD | Unit | Region | Source | How it was checked |\n|---|---|---|---|---|---|\n", Checked)
	for _, p := range PriceTable {
		fmt.Fprintf(w, "| %s | %g | %s | %s | %s | %s |\n", p.Name, p.Value, p.Unit, p.Region, p.Source, p.Checked)
	}
}

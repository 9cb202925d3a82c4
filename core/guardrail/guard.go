package guardrail

import (
	"context"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/record"
)

// Guard is a configured guardrail: its service's checker under the guardrail's time bound,
// on_error and verdict cache.
type Guard struct {
	Name    string
	Kind    string
	checker Checker
	open    bool
	timeout time.Duration
	window  int
	overlap int
	// verdicts remembers the verdicts of texts already checked. The local kind uses it too:
	// hashing a text is an order of magnitude cheaper than running the operator's patterns
	// over it again (RE2 without a literal prefix reads about 10 MB/s).
	verdicts *verdicts
	// policyMasks: the service's own policy says what is masked and what is blocked (a
	// Bedrock guardrail anonymizes or blocks as it was configured), so mode block does not
	// turn its masks into blocks.
	policyMasks bool
}

// NewGuard wraps c, the checker of g.
func NewGuard(g *config.Guardrail, c Checker) *Guard {
	w, o := g.Window()
	gd := &Guard{Name: g.Name, Kind: g.Kind, checker: c, open: g.Open(), timeout: g.TimeoutOrDefault(),
		window: w, overlap: o, policyMasks: g.Kind == config.GuardrailBedrock,
		verdicts: newVerdicts(defaultVerdictEntries, defaultVerdictBytes)}
	return gd
}

// Use is a guardrail attached to a request: the guard, and the mode the attachment gives it.
type Use struct {
	*Guard
	Mode string // config.GuardrailModeBlock, ...Mask, ...Log
}

// Outcome is what one use made of some texts.
type Outcome struct {
	// Texts are the texts to send on: masked, or as they were.
	Texts []string
	// Blocked: the texts must not go on.
	Blocked bool
	// Failed is the service's failure under on_error closed: the request must be refused.
	Failed   error
	Decision record.Guardrail
}

// Run checks texts going src's way and applies the use's mode and on_error to the verdict.
// The texts are not changed; the outcome's are the ones to send on.
func (u Use) Run(ctx context.Context, src Source, texts []string) Outcome {
	return u.RunWith(ctx, src, texts, nil)
}

// RunWith is Run with the images that go with the texts, judged in the same call when the
// service takes images (ImageChecker) and left alone when it does not.
func (u Use) RunWith(ctx context.Context, src Source, texts []string, images []Image) Outcome {
	start := time.Now()
	d := record.Guardrail{Name: u.Name, On: src.String(), Mode: u.Mode}
	v, checks, cached, err := u.check(ctx, src, texts, images)
	d.Latency, d.Checks, d.Cached, d.Units, d.CostUSD = time.Since(start), checks, cached, v.Units, v.CostUSD
	out := Outcome{Texts: texts}
	if err != nil {
		d.Error = KindOf(err)
		if u.open {
			d.Action = record.GuardrailFailedOpen
		} else {
			d.Action, out.Failed = record.GuardrailFailedClosed, err
		}
		out.Decision = d
		return out
	}
	d.Categories = v.Categories
	action := v.Action
	if action == Mask && u.Mode != config.GuardrailModeMask && !u.policyMasks {
		action = Block
	}
	switch {
	case u.Mode == config.GuardrailModeLog:
		d.Action = record.GuardrailLogged
		if action != Pass {
			d.WouldBe = action.String()
		}
	case action == Block:
		d.Action, out.Blocked = record.GuardrailBlocked, true
	case action == Mask:
		d.Action, out.Texts = record.GuardrailMasked, v.Masked
	default:
		d.Action = record.GuardrailPass
	}
	out.Decision = d
	return out
}

// check asks the service about the texts its verdict cache does not know, under the guard's
// time bound, and puts the answers together with the cached ones. checks counts the calls
// made (0 when the cache knew every text), cached the texts the cache answered.
func (u Use) check(ctx context.Context, src Source, texts []string, images []Image) (v Verdict, checks, cached int, err error) {
	vc := u.verdicts
	ic, _ := u.checker.(ImageChecker)
	var freshImages []Image
	if ic != nil {
		for _, im := range images {
			if _, ok := vc.getImage(src, im); ok {
				cached++
				continue
			}
			freshImages = append(freshImages, im)
		}
	}
	var fresh []string
	var where []int // index in texts of each fresh text
	var known []cachedVerdict
	if vc != nil {
		known = make([]cachedVerdict, len(texts))
		for i, t := range texts {
			if t == "" {
				continue
			}
			if cv, ok := vc.get(src, t); ok {
				known[i] = cv
				cached++
				continue
			}
			fresh, where = append(fresh, t), append(where, i)
		}
	} else {
		for i, t := range texts {
			if t != "" {
				fresh, where = append(fresh, t), append(where, i)
			}
		}
	}
	if len(fresh) > 0 || len(freshImages) > 0 {
		cctx, cancel := context.WithTimeout(ctx, u.timeout)
		if len(freshImages) > 0 {
			v, err = ic.CheckImages(cctx, src, fresh, freshImages)
		} else {
			v, err = u.checker.Check(cctx, src, fresh)
		}
		late := cctx.Err()
		cancel()
		checks = 1
		if err == nil && late != nil {
			// A checker that answered as its deadline passed (its own, or the request's) may
			// have cut its work short.
			err = &Error{Kind: KindOf(late), Message: "the guardrail did not answer within its time (" + u.timeout.String() + ", or what the request had left)", Err: late}
		}
		if err != nil {
			return Verdict{}, checks, cached, err
		}
		if v.Action == Mask && len(v.Masked) != len(fresh) {
			return Verdict{}, checks, cached, &Error{Kind: ErrMalformed, Message: "the guardrail masked a different number of texts than it was sent"}
		}
	}
	if v.Action == Block {
		return v, checks, cached, nil
	}
	// Put the fresh verdict and the cached ones together, remembering the fresh.
	masked := v.Action == Mask
	for _, cv := range known {
		masked = masked || cv.masked != nil
	}
	if vc != nil {
		for _, im := range freshImages {
			vc.putImage(src, im) // it did not block: an image passes or blocks
		}
		for j, t := range fresh {
			cv := cachedVerdict{categories: v.Categories}
			if v.Action == Mask && v.Masked[j] != t {
				m := v.Masked[j]
				cv.masked = &m
			}
			vc.put(src, t, cv)
		}
	}
	if !masked {
		v.Action, v.Masked = Pass, nil
		return v, checks, cached, nil
	}
	out := make([]string, len(texts))
	copy(out, texts)
	if v.Action == Mask {
		for j, i := range where {
			out[i] = v.Masked[j]
		}
	}
	cats := v.Categories
	for i, cv := range known {
		if cv.masked != nil {
			out[i] = *cv.masked
			cats = appendNew(cats, cv.categories)
		}
	}
	return Verdict{Action: Mask, Masked: out, Categories: cats, Units: v.Units, CostUSD: v.CostUSD}, checks, cached, nil
}

func appendNew(to, from []string) []string {
	for _, s := range from {
		found := false
		for _, t := range to {
			found = found || t == s
		}
		if !found {
			to = append(to, s)
		}
	}
	return to
}

// Window returns the stream window and overlap the guard checks a stream in.
func (g *Guard) Window() (window, overlap int) { return g.window, g.overlap }

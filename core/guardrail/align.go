package guardrail

import "unicode/utf8"

// A streamed window is checked whole but released only up to a cut: the rest (the overlap)
// is held and checked again with the next window. What is held must be the text as the
// upstream sent it, and what is released the guardrail's version of what comes before the
// cut, so the cut has to be found in both texts. Where a guardrail changed text across the
// cut (it masked an entity the window's end cut short, "alice@example.c"), releasing its
// version would send the placeholder and then, after the next check, the entity's remainder
// in the clear: the cut moves back to where that change starts, and the entity is checked
// again whole.

// maxAlignEdits bounds the diff of a window's text and the guardrail's version (bytes
// inserted plus deleted); past it, the cut falls back to the first change, which holds more
// text back but never releases any the guardrail did not see whole.
const maxAlignEdits = 512

// minAlignedRun is the shortest stretch of equal bytes trusted as text the guardrail left
// alone; shorter ones (a placeholder's "N" matching a name's) are taken as part of a change.
const minAlignedRun = 4

// alignCut returns where to cut a window: checked is its text as sent, out the guardrail's
// version, want the cut in checked (a rune start). It returns the cut in checked (at most
// want) and the same place in out: out[:outCut] is the guardrail's version of
// checked[:cut].
func alignCut(checked, out string, want int) (cut, outCut int) {
	if checked == out {
		return want, want
	}
	prefix := commonPrefix(checked, out)
	suffix := commonSuffix(checked[prefix:], out[prefix:])
	if want <= prefix {
		return want, want
	}
	if len(checked)-want <= suffix-minAlignedRun {
		// The change ends well before the cut: what follows it is the same in both.
		return want, len(out) - (len(checked) - want)
	}
	runs, ok := equalRuns(checked[prefix:len(checked)-suffix], out[prefix:len(out)-suffix], maxAlignEdits)
	if !ok {
		return prefix, prefix
	}
	all := make([]span, 0, len(runs)+2)
	all = append(all, span{0, 0, prefix})
	for _, r := range runs {
		r.a += prefix
		r.b += prefix
		if r = r.runeAligned(checked); r.n >= minAlignedRun {
			all = append(all, r)
		}
	}
	all = append(all, span{len(checked) - suffix, len(out) - suffix, suffix})
	cut, outCut = 0, 0
	for _, r := range all {
		if r.a > want {
			break
		}
		if want <= r.a+r.n {
			return want, r.b + (want - r.a)
		}
		cut, outCut = r.a+r.n, r.b+r.n // want lies in the change after r: cut where it starts
	}
	return cut, outCut
}

// span is a stretch of equal bytes: a[a:a+n] == b[b:b+n].
type span struct{ a, b, n int }

// runeAligned shrinks the span to whole runes (the diff works on bytes; equal bytes have the
// same rune boundaries in both texts).
func (s span) runeAligned(a string) span {
	for s.n > 0 && !utf8.RuneStart(a[s.a]) {
		s.a, s.b, s.n = s.a+1, s.b+1, s.n-1
	}
	for s.n > 0 && s.a+s.n < len(a) && !utf8.RuneStart(a[s.a+s.n]) {
		s.n--
	}
	return s
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// equalRuns is Myers' diff of a and b: the stretches they share, in order, with at most
// maxEdits bytes inserted or deleted (ok false past that). Its memory is the square of the
// edits made, which masks of a few entities keep small.
func equalRuns(a, b string, maxEdits int) (runs []span, ok bool) {
	n, m := len(a), len(b)
	maxEdits = min(maxEdits, n+m)
	// frontier[d][k+d] is how far along a the furthest path with d edits reaches on
	// diagonal k (x - y = k).
	var frontier [][]int
	at := func(d, k int) int { return frontier[d][k+d] }
	for d := 0; d <= maxEdits; d++ {
		row := make([]int, 2*d+1)
		for k := -d; k <= d; k += 2 {
			var x int
			switch {
			case d == 0:
				x = 0
			case k == -d || (k != d && at(d-1, k-1) < at(d-1, k+1)):
				x = at(d-1, k+1) // a byte of b inserted
			default:
				x = at(d-1, k-1) + 1 // a byte of a deleted
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			row[k+d] = x
			if x >= n && y >= m {
				frontier = append(frontier, row)
				return backtrack(frontier, n, m), true
			}
		}
		frontier = append(frontier, row)
	}
	return nil, false
}

func backtrack(frontier [][]int, x, y int) []span {
	var runs []span
	for d := len(frontier) - 1; d >= 0; d-- {
		k := x - y
		// Where the snake that ends at (x, y) starts, and the point before its edit.
		startX, prevX, prevK := 0, 0, 0
		if d > 0 {
			prev := frontier[d-1]
			at := func(k int) int { return prev[k+d-1] }
			if k == -d || (k != d && at(k-1) < at(k+1)) {
				prevK = k + 1
				prevX = at(prevK)
				startX = prevX
			} else {
				prevK = k - 1
				prevX = at(prevK)
				startX = prevX + 1
			}
		}
		if x > startX {
			runs = append(runs, span{startX, startX - k, x - startX})
		}
		x, y = prevX, prevX-prevK
	}
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	return runs
}

package guardrail

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAlignCut(t *testing.T) {
	for _, tc := range []struct {
		name                string
		checked, out        string
		want                int
		wantCut, wantOutCut int
	}{
		{"unchanged", "hello world", "hello world", 6, 6, 6},
		{"a change well before the cut", "mail a@b.io then more text", "mail [EMAIL] then more text", 20, 20, 21},
		{"a change at the window's end, across the cut", "write to alice@example.c", "write to [EMAIL]", 20, 9, 9},
		{"a change after the cut", "some text here and a@b.io", "some text here and [EMAIL]", 5, 5, 5},
		{"two changes, the cut in the second", "x a@b.io yyyy c@d.io", "x [EMAIL] yyyy [EMAIL]", 16, 14, 15},
		{"two changes, the cut between them", "x a@b.io yyyyyyyy c@d.io", "x [EMAIL] yyyyyyyy [EMAIL]", 12, 12, 13},
		{"a short run between changes is taken as part of them", "x a@b.io y c@d.io", "x [EMAIL] y [EMAIL]", 14, 2, 2},
		{"a placeholder sharing a letter with the name", "dear Naomi Smith", "dear [NAME]", 12, 5, 5},
		{"multibyte text around a change", "こんにちは a@b.io ありがとう", "こんにちは [EMAIL] ありがとう", len("こんにちは a@b.io あ"), len("こんにちは a@b.io あ"), len("こんにちは [EMAIL] あ")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cut, outCut := alignCut(tc.checked, tc.out, tc.want)
			if cut != tc.wantCut || outCut != tc.wantOutCut {
				t.Fatalf("cut %d/%d, want %d/%d (%q | %q)", cut, outCut, tc.wantCut, tc.wantOutCut, tc.checked[:cut], tc.out[:outCut])
			}
		})
	}
}

// TestEqualRuns: the runs found are equal in both texts, in order, and leave no more edits
// than the texts' difference needs (checked against the longest common subsequence).
func TestEqualRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		a, b := randomText(r, 40), randomText(r, 40)
		runs, ok := equalRuns(a, b, len(a)+len(b))
		if !ok {
			t.Fatalf("case %d: no script within %d edits", i, len(a)+len(b))
		}
		shared, lastA, lastB := 0, 0, 0
		for _, s := range runs {
			if s.a < lastA || s.b < lastB || a[s.a:s.a+s.n] != b[s.b:s.b+s.n] {
				t.Fatalf("case %d: run %+v of %q / %q is out of order or unequal", i, s, a, b)
			}
			lastA, lastB, shared = s.a+s.n, s.b+s.n, shared+s.n
		}
		if want := lcs(a, b); shared != want {
			t.Fatalf("case %d: runs share %d bytes, the longest common subsequence is %d", i, shared, want)
		}
	}
	if _, ok := equalRuns(strings.Repeat("a", 100), strings.Repeat("b", 100), 50); ok {
		t.Fatal("a diff past the bound was reported")
	}
}

func randomText(r *rand.Rand, n int) string {
	b := make([]byte, r.IntN(n))
	for i := range b {
		b[i] = "abc"[r.IntN(3)]
	}
	return string(b)
}

func lcs(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range len(a) {
		for j := range len(b) {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

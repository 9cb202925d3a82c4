package builtin

import "strings"

// emails appends the email addresses in s to spans, found from each '@' (strings.IndexByte
// skips the text between them at memory speed).
func emails(s string, spans []Span) []Span {
	for off := 0; off < len(s); {
		k := strings.IndexByte(s[off:], '@')
		if k < 0 {
			break
		}
		at := off + k
		if start, end := email(s, at); end > 0 {
			spans = append(spans, Span{Start: start, End: end, Kind: Email})
			off = end
			continue
		}
		off = at + 1
	}
	return spans
}

// Bounds of RFC 5321.
const (
	maxLocal  = 64
	maxDomain = 253
	maxLabel  = 63
)

// email returns the address around the '@' at s[at], or end -1. It takes the practical
// subset of RFC 5322 that people write: a local part of letters, digits and . _ % + -
// (starting with a letter, digit or '_', not ending with '.'), and a domain of two or
// more labels whose last (the TLD) is letters only. Left out, because they are code rather
// than addresses: scp-like remotes (git@github.com:org/repo.git), retina image names
// (icon@2x.png), package versions (lodash@4.17.21, which the letters-only TLD rules out).
func email(s string, at int) (start, end int) {
	start = at
	for start > 0 && classes[s[start-1]]&classLocal != 0 {
		start--
		if at-start > maxLocal {
			return 0, -1
		}
	}
	// An ellipsis ends the prose before an address ("see...jane@example.com").
	if k := strings.LastIndex(s[start:at], ".."); k >= 0 {
		start += k + 2
	}
	for start < at && !isAlnum(s[start]) && s[start] != '_' {
		start++
	}
	if start == at || s[at-1] == '.' || wordBefore(s, start) {
		return 0, -1
	}
	end = domainEnd(s, at+1)
	if end < 0 || wordAfter(s, end) || end < len(s) && (s[end] == '@' || s[end] == '-') {
		return 0, -1
	}
	// host:path is an scp-like remote; "write to a@b.com: ..." has a space after the colon.
	if end+1 < len(s) && s[end] == ':' && s[end+1] > ' ' {
		return 0, -1
	}
	return start, end
}

// domainEnd returns the end of the domain starting at s[j], or -1.
func domainEnd(s string, j int) int {
	from := j
	labels, lastStart, lastEnd := 0, 0, 0
	for {
		ls := j
		for j < len(s) && (isAlnum(s[j]) || s[j] == '-') {
			j++
		}
		if j == ls || s[ls] == '-' || s[j-1] == '-' || j-ls > maxLabel || j-from > maxDomain {
			return -1
		}
		if labels == 0 && retina(s[ls:j]) {
			return -1
		}
		labels++
		lastStart, lastEnd = ls, j
		// A dot continues the domain only if a label follows; else it ends a sentence.
		if j+1 < len(s) && s[j] == '.' && isAlnum(s[j+1]) {
			j++
			continue
		}
		break
	}
	if labels < 2 || lastEnd-lastStart < 2 {
		return -1
	}
	for k := lastStart; k < lastEnd; k++ {
		if !(isUpper(s[k]) || classes[s[k]]&classLower != 0) {
			return -1
		}
	}
	return lastEnd
}

// retina reports whether a label is an image density suffix such as 2x.
func retina(label string) bool {
	n := len(label)
	return n >= 2 && n <= 3 && (label[n-1] == 'x' || label[n-1] == 'X') && runEnd(label, 0, classDigit) == n-1
}

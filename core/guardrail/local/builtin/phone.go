package builtin

// E.164 bounds: a country code and a subscriber number, at most 15 digits; fewer than 8 is a
// short code, a time zone offset (+05:30) or arithmetic.
const (
	minE164 = 8
	maxE164 = 15
)

// e164 returns the end of an international number starting at the '+' at s[i], or -1: a
// country code (not starting with 0) and 8 to 15 digits in all, in groups split by single
// spaces, dashes or dots, with at most one group in parentheses (+1 (555) 123-4567, the
// trunk prefix in +44 (0)20 7946 0958).
func e164(s string, i int) int {
	j := i + 1
	if j >= len(s) || !isDigit(s[j]) || s[j] == '0' {
		return -1
	}
	const (
		afterDigit = iota
		afterSep
		inParen
		afterParen
	)
	n, end, nAtEnd := 0, -1, 0
	state, paren := afterSep, false
loop:
	for j < len(s) {
		b := s[j]
		switch {
		case isDigit(b):
			if n++; n > maxE164 {
				return -1 // a longer run of digits is not a phone number
			}
			j++
			if state != inParen {
				state, end, nAtEnd = afterDigit, j, n
			}
		case b == '(' && !paren && (state == afterDigit || state == afterSep) && j+1 < len(s) && isDigit(s[j+1]):
			paren, state = true, inParen
			j++
		case b == ')' && state == inParen && isDigit(s[j-1]):
			state = afterParen
			j++
		case (b == ' ' || b == '-' || b == '.') && (state == afterDigit || state == afterParen) &&
			j+1 < len(s) && (isDigit(s[j+1]) || s[j+1] == '(' && !paren):
			state = afterSep
			j++
		default:
			break loop
		}
	}
	if end < 0 || nAtEnd < minE164 || wordAfter(s, end) {
		return -1
	}
	if state != afterDigit && n > nAtEnd {
		// Digits after the end (an unclosed parenthesis) would make it a longer number.
		return -1
	}
	return end
}

// nanp returns the end of a North American number in a national format starting at s[i], or
// -1: (NXX) NXX-XXXX, (NXX)NXX-XXXX, NXX-NXX-XXXX or NXX.NXX.XXXX, optionally after a
// country code 1 and the same separator (1-555-123-4567), where N is 2-9: an area code never
// starts with 0 or 1, which also sets aside many ids of the same shape. The exchange is not
// held to the same rule: (555) 123-4567 is how everyone writes an example number.
func nanp(s string, i int) int {
	if s[i] == '1' && i+1 < len(s) && (s[i+1] == '-' || s[i+1] == '.' || s[i+1] == ' ') {
		if end := nanpSep(s, i+2, s[i+1]); end > 0 {
			return end
		}
	}
	if s[i] == '(' {
		if !digitsAt(s, i+1, 3) || s[i+1] < '2' || i+4 >= len(s) || s[i+4] != ')' {
			return -1
		}
		j := i + 5
		if j < len(s) && s[j] == ' ' {
			j++
		}
		return nanpLine(s, j, '-')
	}
	if i+3 >= len(s) {
		return -1
	}
	return nanpSep(s, i, s[i+3])
}

// nanpSep reads NXX<sep>NXX<sep>XXXX at s[i].
func nanpSep(s string, i int, sep byte) int {
	if (sep != '-' && sep != '.') || !digitsAt(s, i, 3) || s[i] < '2' || i+3 >= len(s) || s[i+3] != sep {
		return -1
	}
	return nanpLine(s, i+4, sep)
}

// nanpLine reads the exchange and line, NXX<sep>XXXX, at s[j], and checks that nothing
// continues the number after them.
func nanpLine(s string, j int, sep byte) int {
	if !digitsAt(s, j, 3) || j+3 >= len(s) || s[j+3] != sep || !digitsAt(s, j+4, 4) {
		return -1
	}
	end := j + 8
	if wordAfter(s, end) || numberAfter(s, end) {
		return -1
	}
	return end
}

// digitsAt reports whether s[j:j+n] is n digits.
func digitsAt(s string, j, n int) bool {
	if j < 0 || j+n > len(s) {
		return false
	}
	for k := j; k < j+n; k++ {
		if !isDigit(s[k]) {
			return false
		}
	}
	return true
}

package builtin

// Byte classes. Every entity the built-ins recognize is ASCII, so a span never starts or ends
// inside a multi-byte UTF-8 sequence, and masking keeps valid UTF-8 valid. Bytes of non-ASCII
// characters count as boundaries: CJK text puts no space before an email or a number.
const (
	classDigit = 1 << iota
	classUpper
	classLower
	classWord  // [A-Za-z0-9_]
	classLocal // what an email's local part may hold: [A-Za-z0-9._%+-]
	classB64   // [A-Za-z0-9_-]: base64url, the body of most tokens
	classStart // what a word-start entity can begin with: digits, upper case, s r g x e
)

var classes = func() (t [256]uint8) {
	for b := '0'; b <= '9'; b++ {
		t[b] |= classDigit | classWord | classLocal | classB64
	}
	for b := 'A'; b <= 'Z'; b++ {
		t[b] |= classUpper | classWord | classLocal | classB64
	}
	for b := 'a'; b <= 'z'; b++ {
		t[b] |= classLower | classWord | classLocal | classB64
	}
	for _, b := range "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZsrgxe" {
		t[b] |= classStart
	}
	t['_'] |= classWord | classLocal | classB64
	t['-'] |= classLocal | classB64
	for _, b := range "._%+" {
		t[b] |= classLocal
	}
	return t
}()

func isDigit(b byte) bool { return b-'0' < 10 }
func isUpper(b byte) bool { return b-'A' < 26 }
func isAlnum(b byte) bool { return classes[b]&(classDigit|classUpper|classLower) != 0 }
func isWord(b byte) bool  { return classes[b]&classWord != 0 }
func isB64(b byte) bool   { return classes[b]&classB64 != 0 }

// wordBefore reports whether s[i] continues a word: the byte before it is a word byte, or
// the end of a placeholder. A placeholder stands for an entity that ended in a word byte, so
// treating it as one makes a second pass over masked text see the boundaries the first saw:
// that is what keeps masking idempotent.
func wordBefore(s string, i int) bool {
	if i <= 0 {
		return false
	}
	b := s[i-1]
	return isWord(b) || b == ']' && placeholderEndsAt(s, i)
}

// wordAfter reports whether the text at j continues a word: a word byte or a placeholder.
func wordAfter(s string, j int) bool {
	if j >= len(s) {
		return false
	}
	b := s[j]
	return isWord(b) || b == '[' && PlaceholderStartsAt(s, j)
}

// numberBefore reports whether s[i] continues a number written with separators (a date, a
// version, an IP address, a decimal): the byte before is one of . , - : / and the one before
// that a digit.
func numberBefore(s string, i int) bool {
	if i < 2 || !isDigit(s[i-2]) {
		return false
	}
	switch s[i-1] {
	case '.', ',', '-', ':', '/':
		return true
	}
	return false
}

// numberAfter is numberBefore's mirror: the text at j is a separator and then a digit.
func numberAfter(s string, j int) bool {
	if j+1 >= len(s) || !isDigit(s[j+1]) {
		return false
	}
	switch s[j] {
	case '.', ',', '-', ':', '/':
		return true
	}
	return false
}

// MaxPlaceholder is the longest placeholder: a pattern name is at most 32 characters.
const MaxPlaceholder = 34

// placeholderEndsAt reports whether s[:i] ends with a placeholder, [A-Z][A-Z0-9_]*].
func placeholderEndsAt(s string, i int) bool {
	for k := i - 2; k >= 0 && i-k <= MaxPlaceholder; k-- {
		b := s[k]
		if b == '[' {
			return k < i-2 && isUpper(s[k+1])
		}
		if !isUpper(b) && !isDigit(b) && b != '_' {
			return false
		}
	}
	return false
}

// PlaceholderStartsAt reports whether s[j:] begins with a placeholder.
func PlaceholderStartsAt(s string, j int) bool {
	if j+2 >= len(s) || !isUpper(s[j+1]) {
		return false
	}
	for k := j + 2; k < len(s) && k-j < MaxPlaceholder; k++ {
		b := s[k]
		if b == ']' {
			return true
		}
		if !isUpper(b) && !isDigit(b) && b != '_' {
			return false
		}
	}
	return false
}

// runEnd is the end of the run of bytes of class cl starting at i.
func runEnd(s string, i int, cl uint8) int {
	for i < len(s) && classes[s[i]]&cl != 0 {
		i++
	}
	return i
}

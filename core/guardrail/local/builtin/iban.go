package builtin

// ibanLengths are the IBAN lengths of the countries in the SWIFT IBAN registry (ISO 13616),
// https://www.swift.com/standards/data-standards/iban-international-bank-account-number.
// A country not in it has no IBAN, so its code starts none.
var ibanLengths = map[[2]byte]uint8{
	{'A', 'D'}: 24, {'A', 'E'}: 23, {'A', 'L'}: 28, {'A', 'T'}: 20, {'A', 'Z'}: 28,
	{'B', 'A'}: 20, {'B', 'E'}: 16, {'B', 'G'}: 22, {'B', 'H'}: 22, {'B', 'I'}: 27,
	{'B', 'R'}: 29, {'B', 'Y'}: 28, {'C', 'H'}: 21, {'C', 'R'}: 22, {'C', 'Y'}: 28,
	{'C', 'Z'}: 24, {'D', 'E'}: 22, {'D', 'J'}: 27, {'D', 'K'}: 18, {'D', 'O'}: 28,
	{'E', 'E'}: 20, {'E', 'G'}: 29, {'E', 'S'}: 24, {'F', 'I'}: 18, {'F', 'K'}: 18,
	{'F', 'O'}: 18, {'F', 'R'}: 27, {'G', 'B'}: 22, {'G', 'E'}: 22, {'G', 'I'}: 23,
	{'G', 'L'}: 18, {'G', 'R'}: 27, {'G', 'T'}: 28, {'H', 'N'}: 28, {'H', 'R'}: 21,
	{'H', 'U'}: 28, {'I', 'E'}: 22, {'I', 'L'}: 23, {'I', 'Q'}: 23, {'I', 'S'}: 26,
	{'I', 'T'}: 27, {'J', 'O'}: 30, {'K', 'W'}: 30, {'K', 'Z'}: 20, {'L', 'B'}: 28,
	{'L', 'C'}: 32, {'L', 'I'}: 21, {'L', 'T'}: 20, {'L', 'U'}: 20, {'L', 'V'}: 21,
	{'L', 'Y'}: 25, {'M', 'C'}: 27, {'M', 'D'}: 24, {'M', 'E'}: 22, {'M', 'K'}: 19,
	{'M', 'N'}: 20, {'M', 'R'}: 27, {'M', 'T'}: 31, {'M', 'U'}: 30, {'N', 'I'}: 28,
	{'N', 'L'}: 18, {'N', 'O'}: 15, {'O', 'M'}: 23, {'P', 'K'}: 24, {'P', 'L'}: 28,
	{'P', 'S'}: 29, {'P', 'T'}: 25, {'Q', 'A'}: 29, {'R', 'O'}: 24, {'R', 'S'}: 22,
	{'R', 'U'}: 33, {'S', 'A'}: 24, {'S', 'C'}: 31, {'S', 'D'}: 18, {'S', 'E'}: 24,
	{'S', 'I'}: 19, {'S', 'K'}: 24, {'S', 'M'}: 27, {'S', 'O'}: 23, {'S', 'T'}: 25,
	{'S', 'V'}: 28, {'T', 'L'}: 23, {'T', 'N'}: 24, {'T', 'R'}: 26, {'U', 'A'}: 29,
	{'V', 'A'}: 22, {'V', 'G'}: 24, {'X', 'K'}: 20, {'Y', 'E'}: 30,
}

// iban returns the end of an IBAN starting at s[i] (an upper-case letter at a word start),
// or -1: a country code, two check digits and the BBAN (upper-case letters and digits), as
// long as the registry says for the country, written either in one run or in groups of four
// split by single spaces (the print format), with the ISO 7064 mod-97 check equal to 1.
func iban(s string, i int) int {
	if i+4 > len(s) || !isUpper(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
		return -1
	}
	want, ok := ibanLengths[[2]byte{s[i], s[i+1]}]
	if !ok {
		return -1
	}
	var chars [34]byte
	n, j := 0, i
	spaced := i+4 < len(s) && s[i+4] == ' '
	for n < int(want) {
		if spaced && n > 0 && n%4 == 0 {
			if j >= len(s) || s[j] != ' ' {
				return -1
			}
			j++
		}
		if j >= len(s) || !(isUpper(s[j]) || isDigit(s[j])) {
			return -1
		}
		chars[n] = s[j]
		n++
		j++
	}
	if wordAfter(s, j) || numberAfter(s, j) {
		return -1
	}
	if !mod97(chars[:n]) {
		return -1
	}
	return j
}

// mod97 is the IBAN check: the first four characters moved to the end, letters read as
// 10..35, the number mod 97 is 1. The remainder is kept small as the digits are read.
func mod97(c []byte) bool {
	rem := 0
	for k := range c {
		b := c[(k+4)%len(c)]
		if isDigit(b) {
			rem = (rem*10 + int(b-'0')) % 97
		} else {
			rem = (rem*100 + int(b-'A') + 10) % 97
		}
	}
	return rem == 1
}

package builtin

// card returns the end of a card number starting at s[i] (a digit at a word start), or -1.
// A card number is 13 to 19 digits, either in one run or in groups of 3 to 6 digits split by
// single spaces or single dashes (one kind throughout), passing the Luhn check and starting
// with a major brand's prefix. A run of digits longer than 19 is something else (an order
// id, a hash), never a card; digits after a valid number in further groups ("4111 1111 1111
// 1111 2026") end it at the longest valid length.
func card(s string, i int) int {
	var digits [19]byte
	n, sep, groups, best := 0, byte(0), 0, -1
	j := i
	for {
		g := j
		for j < len(s) && isDigit(s[j]) {
			if n == len(digits) {
				if groups == 0 {
					return -1 // one run longer than a card number
				}
				return best
			}
			digits[n] = s[j] - '0'
			n++
			j++
		}
		size := j - g
		groups++
		switch {
		case groups == 1 && size >= 13:
			// One run: all of it is the number, or none.
			if cardEnds(s, j) && validCard(digits[:n]) {
				return j
			}
			return -1
		case size < 3 || size > 6:
			return best
		}
		if n >= 13 && validCard(digits[:n]) && cardEnds(s, j) {
			best = j
		}
		// Another group follows a single separator of the kind used so far.
		if j+1 >= len(s) || !isDigit(s[j+1]) || (s[j] != ' ' && s[j] != '-') || (sep != 0 && s[j] != sep) || n == len(digits) {
			return best
		}
		sep = s[j]
		j++
	}
}

// cardEnds reports whether a card number may end at j: no word and no number goes on.
func cardEnds(s string, j int) bool { return !wordAfter(s, j) && !numberAfter(s, j) }

// validCard is the Luhn check and a brand prefix.
func validCard(d []byte) bool {
	return luhn(d) && brand(d)
}

func luhn(d []byte) bool {
	sum := 0
	double := false
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k])
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

// brand reports whether d starts with the prefix of a major card brand: Visa 4; Mastercard
// 51-55 and 2221-2720; Maestro 50, 56-58 and 6; Amex 34 and 37; Diners 300-305, 36, 38, 39;
// JCB 3528-3589; Discover and UnionPay 6. Numbers starting 0, 1, 7, 8, 9 (and most 2 and 3)
// are account numbers, order ids and the like, so the prefix halves what Luhn alone lets by.
func brand(d []byte) bool {
	p2 := int(d[0])*10 + int(d[1])
	p4 := p2*100 + int(d[2])*10 + int(d[3])
	switch d[0] {
	case 4, 6:
		return true
	case 5:
		return p2 <= 58
	case 2:
		return p4 >= 2221 && p4 <= 2720
	case 3:
		return p2 == 34 || p2 == 37 || p2 == 36 || p2 == 38 || p2 == 39 ||
			(p4 >= 3000 && p4 <= 3059) || (p4 >= 3528 && p4 <= 3589)
	}
	return false
}

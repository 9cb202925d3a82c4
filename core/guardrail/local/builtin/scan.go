package builtin

// scan appends the candidates of the enabled built-ins other than email (which emails finds
// from its '@') to spans. It visits each word start and the few punctuation bytes an entity
// can begin with (+ and ( for phones, - for a PEM block), tries the recognizers that can
// start with that byte, and skips the rest of a word that starts nothing: most bytes are
// looked at once, by a table lookup.
func (k Set) scan(s string, spans []Span) []Span {
	for i := 0; i < len(s); {
		b := s[i]
		cl := classes[b]
		if cl&classWord == 0 {
			if b == '+' || b == '(' || b == '-' {
				if end, kind := k.atPunct(s, i); end > 0 {
					spans = append(spans, Span{Start: i, End: end, Kind: kind})
					i = end
					continue
				}
			}
			i++
			continue
		}
		if cl&classStart != 0 && !wordBefore(s, i) {
			if end, kind := k.atWord(s, i); end > 0 {
				spans = append(spans, Span{Start: i, End: end, Kind: kind})
				i = end
				continue
			}
		}
		i = runEnd(s, i+1, classWord)
	}
	return spans
}

// atPunct tries the entities that start with punctuation at s[i].
func (k Set) atPunct(s string, i int) (end int, kind uint8) {
	switch s[i] {
	case '+':
		if k.Has(Phone) && !wordBefore(s, i) {
			return e164(s, i), Phone
		}
	case '(':
		if k.Has(Phone) && !wordBefore(s, i) {
			return nanp(s, i), Phone
		}
	case '-':
		if k.Has(APIKey) {
			return pemBlock(s, i), APIKey
		}
	}
	return -1, 0
}

// atWord tries the entities that can start the word at s[i], the longest winning.
func (k Set) atWord(s string, i int) (end int, kind uint8) {
	end = -1
	try := func(e int, k uint8) {
		if e > end {
			end, kind = e, k
		}
	}
	b := s[i]
	switch {
	case isDigit(b):
		if numberBefore(s, i) {
			return -1, 0
		}
		if k.Has(Card) {
			try(card(s, i), Card)
		}
		if k.Has(Phone) {
			try(nanp(s, i), Phone)
		}
	case isUpper(b):
		if k.Has(IBAN) {
			try(iban(s, i), IBAN)
		}
		if k.Has(APIKey) {
			try(apiKey(s, i), APIKey)
		}
	default:
		if k.Has(APIKey) {
			try(apiKey(s, i), APIKey)
		}
	}
	return end, kind
}

package local

// scan appends the candidates of the enabled built-ins other than email (which emails finds
// from its '@') to spans. It visits each word start and the few punctuation bytes an entity
// can begin with (+ and ( for phones, - for a PEM block), tries the recognizers that can
// start with that byte, and skips the rest of a word that starts nothing: most bytes are
// looked at once, by a table lookup.
func (c *Checker) scan(s string, spans []span) []span {
	for i := 0; i < len(s); {
		b := s[i]
		cl := classes[b]
		if cl&classWord == 0 {
			if b == '+' || b == '(' || b == '-' {
				if end, kind := c.atPunct(s, i); end > 0 {
					spans = append(spans, span{start: i, end: end, kind: kind})
					i = end
					continue
				}
			}
			i++
			continue
		}
		if cl&classStart != 0 && !wordBefore(s, i) {
			if end, kind := c.atWord(s, i); end > 0 {
				spans = append(spans, span{start: i, end: end, kind: kind})
				i = end
				continue
			}
		}
		i = runEnd(s, i+1, classWord)
	}
	return spans
}

// atPunct tries the entities that start with punctuation at s[i].
func (c *Checker) atPunct(s string, i int) (end int, kind uint8) {
	switch s[i] {
	case '+':
		if c.builtins.has(kindPhone) && !wordBefore(s, i) {
			return e164(s, i), kindPhone
		}
	case '(':
		if c.builtins.has(kindPhone) && !wordBefore(s, i) {
			return nanp(s, i), kindPhone
		}
	case '-':
		if c.builtins.has(kindAPIKey) {
			return pemBlock(s, i), kindAPIKey
		}
	}
	return -1, 0
}

// atWord tries the entities that can start the word at s[i], the longest winning.
func (c *Checker) atWord(s string, i int) (end int, kind uint8) {
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
		if c.builtins.has(kindCard) {
			try(card(s, i), kindCard)
		}
		if c.builtins.has(kindPhone) {
			try(nanp(s, i), kindPhone)
		}
	case isUpper(b):
		if c.builtins.has(kindIBAN) {
			try(iban(s, i), kindIBAN)
		}
		if c.builtins.has(kindAPIKey) {
			try(apiKey(s, i), kindAPIKey)
		}
	default:
		if c.builtins.has(kindAPIKey) {
			try(apiKey(s, i), kindAPIKey)
		}
	}
	return end, kind
}

package counters

import "time"

// Windows numbers the windows a moment falls in: Unix minutes, days since the Unix epoch in
// UTC, and calendar months (year*12 + month - 1) in UTC. Fixed windows keep each counter one
// number that every store can add to atomically; the price is that a client may spend a
// minute's limit at the end of one minute and again at the start of the next.
type Windows struct {
	Minute int64 `json:"minute" dynamodbav:"-" firestore:"m"`
	Day    int64 `json:"day" dynamodbav:"-" firestore:"d"`
	Month  int64 `json:"month" dynamodbav:"-" firestore:"M"`
}

// At returns the windows t falls in.
func At(t time.Time) Windows {
	u := t.UTC()
	s := u.Unix()
	return Windows{Minute: floorDiv(s, 60), Day: floorDiv(s, 86400), Month: int64(u.Year())*12 + int64(u.Month()) - 1}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Of returns the number of kind k's window.
func (w Windows) Of(k Kind) int64 {
	switch k {
	case Requests, Tokens:
		return w.Minute
	case SpendDay:
		return w.Day
	}
	return w.Month
}

// Later returns, window by window, the later of w and o. Windows only move forward: an
// instance whose clock is behind charges the windows another has already begun.
func (w Windows) Later(o Windows) Windows {
	return Windows{Minute: max(w.Minute, o.Minute), Day: max(w.Day, o.Day), Month: max(w.Month, o.Month)}
}

// Behind reports whether any of w's windows is older than o's.
func (w Windows) Behind(o Windows) bool {
	return w.Minute < o.Minute || w.Day < o.Day || w.Month < o.Month
}

// End returns when kind k's window ends.
func (w Windows) End(k Kind) time.Time {
	switch k {
	case Requests, Tokens:
		return time.Unix((w.Minute+1)*60, 0).UTC()
	case SpendDay:
		return time.Unix((w.Day+1)*86400, 0).UTC()
	}
	return time.Date(int(w.Month/12), time.Month(w.Month%12+1)+1, 1, 0, 0, 0, 0, time.UTC)
}

// Expires is when every counter of w has passed: a store may forget the key after it (the
// end of the month window; the templates set TTL on it).
func (w Windows) Expires() time.Time { return w.End(SpendMonth) }

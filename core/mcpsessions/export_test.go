package mcpsessions

// SetLimit lowers the memory store's bound, so that reaching it takes a few sessions.
func (s *Memory) SetLimit(n int) { s.limit = n }

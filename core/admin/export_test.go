package admin

// Routes lists every operation the handler serves as METHOD and ServeMux pattern.
func Routes() [][2]string {
	out := make([][2]string, len(routes))
	for i, rt := range routes {
		out[i] = [2]string{rt.method, rt.pattern}
	}
	return out
}

//go:build !unix

package filelock

// Lock: without flock, only a process's own writers are serialized (each store's mutex); run a
// single writing process on such systems. Every deployment target is unix.
func Lock(string) (func(), error) { return func() {}, nil }

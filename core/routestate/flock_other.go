//go:build !unix

package routestate

// lockFile: without flock, only this process's writers are serialized (File.mu); run a
// single writing process on such systems. Every deployment target is unix.
func lockFile(string) (func(), error) { return func() {}, nil }

package storetest

import (
	"testing"

	"github.com/fngate/fngate/internal/emulator"
)

// Moto returns the endpoint of a moto server for this test; see emulator.Moto.
func Moto(t testing.TB) string {
	t.Helper()
	return emulator.Moto(t)
}

// Firestore returns the host:port of a Firestore emulator for this test; see
// emulator.Firestore.
func Firestore(t testing.TB) string {
	t.Helper()
	return emulator.Firestore(t)
}

//go:build !unix

package emulator

import (
	"os"
	"testing"
)

// Moto: the launcher manages process groups, which only unix offers; set
// FNGATE_MOTO_ENDPOINT to use a server started by hand.
func Moto(t testing.TB) string {
	t.Helper()
	if ep := os.Getenv("FNGATE_MOTO_ENDPOINT"); ep != "" {
		return ep
	}
	t.Skip("skipping: starting moto_server is supported on unix only; set FNGATE_MOTO_ENDPOINT")
	return ""
}

// Firestore: see Moto; set FIRESTORE_EMULATOR_HOST.
func Firestore(t testing.TB) string {
	t.Helper()
	if hp := os.Getenv("FIRESTORE_EMULATOR_HOST"); hp != "" {
		return hp
	}
	t.Skip("skipping: starting the Firestore emulator is supported on unix only; set FIRESTORE_EMULATOR_HOST")
	return ""
}

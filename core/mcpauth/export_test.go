package mcpauth

import "time"

// SetClock replaces v's clock; call it before the first Verify, which hands it to go-oidc.
func SetClock(v *Verifier, now func() time.Time) { v.now = now }

// Command fngate-eventarc serves the GCP remediation function with the functions framework,
// as a Cloud Functions deployment does: locally, or as a Cloud Run container. Eventarc posts
// messagePublished CloudEvents to "/".
//
//	PORT=8080 FIRESTORE_EMULATOR_HOST=127.0.0.1:8086 ROUTE_STATE_PROJECT=demo go run ./events/eventarc/cmd/fngate-eventarc
//
// Environment: PORT (default 8080) and what events/eventarc reads: ROUTE_STATE_PROJECT,
// ROUTE_STATE_DATABASE, ROUTE_STATE_PREFIX, REMEDIATION_MODE (dry_run | apply; default
// dry_run) and the other REMEDIATION_* settings (docs/remediation.md).
package main

import (
	"fmt"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	"github.com/fngate/fngate/events/eventarc" // registers the function at init
)

func main() {
	// Serve the function at "/", where Eventarc posts, as a deployment does.
	if os.Getenv("FUNCTION_TARGET") == "" {
		os.Setenv("FUNCTION_TARGET", eventarc.EntryPoint)
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	if err := funcframework.Start(port); err != nil {
		fmt.Fprintln(os.Stderr, "fngate-eventarc:", err)
		os.Exit(1)
	}
}

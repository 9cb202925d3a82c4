// Command cmd serves the Gateway function locally through the functions framework, the way
// Cloud Functions runs it (the deploy builds its own main and ignores this one):
//
//	FNGATE_CONFIG=fngate.yaml go run ./functions/gcf/cmd
//
// PORT (default 8080) picks the port. FUNCTION_TARGET defaults to Gateway, which serves the
// function at / as on Cloud Functions. The server listens on 127.0.0.1 unless LOCAL_ONLY=false.
package main

import (
	"log"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	"github.com/fngate/fngate/functions/gcf"
)

func main() {
	if os.Getenv("FUNCTION_TARGET") == "" {
		os.Setenv("FUNCTION_TARGET", gcf.FunctionName)
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	host := "127.0.0.1"
	if os.Getenv("LOCAL_ONLY") == "false" {
		host = ""
	}
	if err := funcframework.StartHostPort(host, port); err != nil {
		log.Fatalf("fngate: %v", err)
	}
}

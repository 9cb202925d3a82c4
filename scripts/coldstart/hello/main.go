// Command hello is the cold-start baseline for scripts/coldstart: the smallest function a
// lambdaurl streaming bootstrap can be.
package main

import (
	"net/http"

	"github.com/aws/aws-lambda-go/lambdaurl"
)

func main() {
	lambdaurl.Start(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("hello"))
	}))
}

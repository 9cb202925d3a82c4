package awsconf

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// HTTPClient is the HTTP client of the AWS clients both loaders configure: the SDK's
// default, through SafeBodies.
func HTTPClient() aws.HTTPClient { return SafeBodies(awshttp.NewBuildableClient()) }

// SafeBodies hides the WriteTo method of the request bodies it sends, which closes a race
// between the SDK and net/http that turns a successful call into a failed one, and a
// successful conditional write into a failed condition.
//
// smithy-go closes a request's body as soon as Do returns, which is when the response's
// headers arrive; its body's WriteTo then returns io.EOF. net/http may still be writing
// the request at that moment: after the body's Content-Length bytes it copies the body
// once more to check that nothing is left, and io.Copy uses WriteTo and passes its io.EOF
// on. net/http takes that for a failed write and closes the connection under the response,
// whose body then cannot be read ("use of closed network connection",
// aws/aws-sdk-go-v2#1825, #2737). The SDK retries that error (since #2949): an
// unconditional write is merely sent twice, but a conditional one that succeeded the first
// time fails its condition the second, so a claim that won reads as lost. A server that
// answers the moment the body is in (moto on loopback) loses this race about once in a
// thousand calls under the race detector. Through Read, a closed body reads as io.EOF,
// which io.Copy takes for the end of the body.
func SafeBodies(c aws.HTTPClient) aws.HTTPClient {
	if _, safe := c.(safeBodies); safe {
		return c
	}
	return safeBodies{c}
}

type safeBodies struct{ next aws.HTTPClient }

func (s safeBodies) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = readCloser{r.Body}
	}
	return s.next.Do(r)
}

// readCloser is a body with Read and Close only.
type readCloser struct{ io.ReadCloser }

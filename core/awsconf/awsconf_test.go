package awsconf

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestFromEnvironment(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
	cfg, err := FromEnvironment(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SessionToken != "token" {
		t.Errorf("credentials %+v %v", creds, err)
	}
	if cfg.Region != "eu-west-1" || *cfg.BaseEndpoint != "http://127.0.0.1:4566" {
		t.Errorf("region %q endpoint %v", cfg.Region, cfg.BaseEndpoint)
	}
	if cfg, _ := FromEnvironment(context.Background(), Options{Region: "us-west-2"}); cfg.Region != "us-west-2" {
		t.Errorf("the connection's region does not win: %q", cfg.Region)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	if cfg, _ := FromEnvironment(context.Background(), Options{}); cfg.Credentials != nil {
		t.Error("credentials made up from an empty environment")
	}
	if _, err := FromEnvironment(context.Background(), Options{Profile: "team"}); err == nil {
		t.Error("a profile was accepted without the shared files")
	}
}

// smithy-go's request body after the SDK closed it: Read and WriteTo report io.EOF.
type closedSDKBody struct{}

func (closedSDKBody) Read([]byte) (int, error)         { return 0, io.EOF }
func (closedSDKBody) WriteTo(io.Writer) (int64, error) { return 0, io.EOF }
func (closedSDKBody) Close() error                     { return nil }

// net/http copies a request body once more after its Content-Length bytes; a body the SDK
// has closed by then must read as finished, not fail the copy (which closes the connection
// under the response).
func TestSafeBodiesReadAClosedBodyAsFinished(t *testing.T) {
	if _, err := io.Copy(io.Discard, closedSDKBody{}); err == nil {
		t.Fatal("the stand-in does not show the failure: io.Copy passes WriteTo's io.EOF on")
	}
	var sent io.Reader
	c := SafeBodies(doFunc(func(r *http.Request) (*http.Response, error) { sent = r.Body; return &http.Response{}, nil }))
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", closedSDKBody{})
	if _, err := c.Do(req); err != nil {
		t.Fatal(err)
	}
	if _, ok := sent.(io.WriterTo); ok {
		t.Fatal("the body sent still has WriteTo")
	}
	if n, err := io.Copy(io.Discard, sent); n != 0 || err != nil {
		t.Errorf("copying the closed body: %d, %v; want 0, nil", n, err)
	}
	for _, loaded := range []func() (aws.Config, error){
		func() (aws.Config, error) { return FromEnvironment(context.Background(), Options{}) },
	} {
		cfg, err := loaded()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cfg.HTTPClient.(safeBodies); !ok {
			t.Errorf("the loader's HTTP client is %T, not SafeBodies", cfg.HTTPClient)
		}
	}
}

type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

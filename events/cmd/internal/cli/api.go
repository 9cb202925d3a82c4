package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/fngate/fngate/core/keystore"
)

// connect is the admin API the flags name: -url over HTTP with the token from
// FNGATE_ADMIN_TOKEN, else the config's stores behind the admin handler in this process.
// done releases what it opened.
func (o *op) connect(ctx context.Context) (*client, func(), error) {
	if o.url != "" {
		c, err := remoteClient(o.url, o.env.Getenv("FNGATE_ADMIN_TOKEN"), o.env.HTTPClient)
		return c, func() {}, err
	}
	return o.direct(ctx)
}

// do calls the API once and prints its answer: as it came with -json, else by text.
func (o *op) do(ctx context.Context, method, path string, query url.Values, body any, text func([]byte) error) error {
	c, done, err := o.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	data, err := c.call(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	return o.print(data, text)
}

// print shows an answer: with -json the API's document unchanged, else text's rendering. A
// secret in it (create, rotate) is on stdout this once; stderr says so.
func (o *op) print(data []byte, text func([]byte) error) error {
	if o.json {
		out := bytes.TrimRight(data, "\n")
		if _, err := fmt.Fprintf(o.env.Stdout, "%s\n", out); err != nil {
			return err
		}
	} else if err := text(data); err != nil {
		return err
	}
	var secret struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	if json.Unmarshal(data, &secret) == nil && strings.HasPrefix(secret.Key, keystore.SecretPrefix) {
		fmt.Fprintf(o.env.Stderr, "fngate: the key's secret is shown once, now: store it; if it is lost, `fngate keys rotate %s` makes a new one\n", secret.ID)
	}
	return nil
}

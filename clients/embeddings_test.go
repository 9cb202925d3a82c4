package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fngate/fngate/core/providers/mock"
)

// embeddingsScript calls the gateway's embeddings through the openai Node SDK twice: as it
// does unless told otherwise (it asks for base64 and decodes the float32s itself), and with
// encoding_format float and dimensions. It prints both answers, vectors as plain arrays.
const embeddingsScript = `
const OpenAI = require('openai').default ?? require('openai');
// Under node -e the first argument is process.argv[1]; without a base URL the SDK would
// reach for api.openai.com.
if (!process.argv[1]) { throw new Error('no base URL'); }
const client = new OpenAI({ baseURL: process.argv[1], apiKey: 'unused-locally', maxRetries: 0 });
const plain = (r) => ({ ...r, data: r.data.map((d) => ({ ...d, embedding: Array.from(d.embedding) })) });
(async () => {
  const byDefault = await client.embeddings.create({ model: 'mock/embed', input: ['alpha', 'beta gamma'] });
  const floats = await client.embeddings.create({ model: 'mock/embed', input: 'delta', encoding_format: 'float', dimensions: 8 });
  console.log(JSON.stringify({ byDefault: plain(byDefault), floats: plain(floats) }));
})().catch((e) => { console.error(String(e), e.cause ? String(e.cause) + ' ' + String(e.cause.cause || '') : ''); process.exit(1); });
`

// The openai Node SDK's embeddings.create against the gateway: by default it asks for base64
// and decodes it, and gets the mock's float32s exactly; asked for floats and 8 dimensions, it
// gets those, the very same numbers as JavaScript reads them.
func TestNodeSDKEmbeddings(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "openai", "package.json")); err != nil {
		t.Skip("the openai SDK is not installed: cd clients && npm ci --no-audit --no-fund --ignore-scripts")
	}
	url, logs := serve(t, `
connections:
  mock: {kind: mock}
models:
  mock/embed: {kind: embedding, dimensions: 64, routes: [{connection: mock, model: embed}]}
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", embeddingsScript, url+"/v1")
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL=", "OPENAI_API_KEY=", "OPENAI_LOG=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\ngateway log:\n%s", err, stderr.String(), logs.String())
	}
	type answer struct {
		Model string `json:"model"`
		Data  []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	var got struct{ ByDefault, Floats answer }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	check := func(name string, a answer, inputs []string, dims int) {
		if a.Model != "mock/embed" || len(a.Data) != len(inputs) {
			t.Fatalf("%s: %+v", name, a)
		}
		for i, d := range a.Data {
			want := mock.Embedding(inputs[i], dims)
			if d.Index != i || len(d.Embedding) != dims {
				t.Fatalf("%s item %d: index %d, %d dimensions", name, i, d.Index, len(d.Embedding))
			}
			for j := range want {
				if float32(d.Embedding[j]) != want[j] || float64(want[j]) != d.Embedding[j] {
					t.Fatalf("%s item %d number %d: %v, want the float32 %v", name, i, j, d.Embedding[j], want[j])
				}
			}
		}
	}
	check("by default (base64)", got.ByDefault, []string{"alpha", "beta gamma"}, 64)
	check("float, 8 dimensions", got.Floats, []string{"delta"}, 8)
	if got.ByDefault.Usage.PromptTokens != 3 {
		t.Errorf("usage %+v", got.ByDefault.Usage)
	}
	for _, r := range requests(t, logs) {
		if r["endpoint"] != "embeddings" || r["status"] != 200.0 {
			t.Errorf("request line %v", r)
		}
	}
}

package kinds_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/core/guardrail/kinds"
)

// The factory builds each kind from its own source: local with nothing, bedrock from the
// loader with the guardrail's region, model-armor only through the platform's constructor,
// which a binary without Google's libraries leaves out (and says so).
func TestFactory(t *testing.T) {
	var regions []string
	load := func(_ context.Context, o awsconf.Options) (aws.Config, error) {
		regions = append(regions, o.Region)
		if o.Region == "broken-1" {
			return aws.Config{}, errors.New("no credentials")
		}
		return aws.Config{Region: o.Region, Credentials: credentials.NewStaticCredentialsProvider("AKIDKINDS", "secret", "")}, nil
	}
	armored := 0
	armor := func(*config.Guardrail) (guardrail.Checker, error) { armored++; return nil, errors.New("armor built") }
	for _, tc := range []struct {
		name  string
		g     config.Guardrail
		armor kinds.Constructor
		err   string
	}{
		{"local", config.Guardrail{Kind: config.GuardrailLocal, Mask: []string{"email"}}, nil, ""},
		{"bedrock", config.Guardrail{Kind: config.GuardrailBedrock, ID: "gr-1", Version: "1", Region: "eu-west-1"}, nil, ""},
		{"bedrock without credentials", config.Guardrail{Kind: config.GuardrailBedrock, ID: "gr-1", Version: "1", Region: "broken-1"}, nil, "no credentials"},
		{"model-armor on Lambda", config.Guardrail{Kind: config.GuardrailModelArmor, Template: "projects/p/locations/l/templates/t"}, nil, "not built into this binary"},
		{"model-armor where built", config.Guardrail{Kind: config.GuardrailModelArmor, Template: "projects/p/locations/l/templates/t"}, armor, "armor built"},
		{"unknown", config.Guardrail{Kind: "sidecar"}, nil, `unknown guardrail kind "sidecar"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			g.Name = "test"
			c, err := kinds.Factory(load, tc.armor)(&g)
			if tc.err == "" {
				if err != nil || c == nil {
					t.Fatalf("checker %v, err %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
		})
	}
	if strings.Join(regions, ",") != "eu-west-1,broken-1" || armored != 1 {
		t.Errorf("loader asked for %q, armor constructor called %d times", regions, armored)
	}
}

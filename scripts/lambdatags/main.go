// Command lambdatags prints the build tags a Lambda bootstrap needs for a config file, for
// the Makefile's LAMBDA_FLAGS (so `make package CONFIG=...` and `CONFIG=... sam build`
// link what the config uses, and nothing else):
//
//	go run ./scripts/lambdatags fngate.yaml   # prints e.g. "mcp,otel" (nothing: no tag)
//
// Each tag is a feature most deployments leave off (functions/lambda): vertex for a
// connection of kind vertex, otel for a telemetry block, mcp for mcp_servers, bedrockguard
// for a guardrail of kind bedrock. It reads the YAML as it is (no ${ENV} expansion, no
// validation): the bootstrap validates at load, and refuses a feature it was built without,
// naming the tag.
package main

import (
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: lambdatags CONFIG.yaml")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "lambdatags:", err)
		os.Exit(1)
	}
	tags, err := tagsFor(b)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lambdatags:", os.Args[1]+":", err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(tags, ","))
}

// config is the part of the config the tags depend on.
type config struct {
	Connections map[string]struct {
		Kind string `yaml:"kind"`
	} `yaml:"connections"`
	Telemetry  any            `yaml:"telemetry"`
	MCPServers map[string]any `yaml:"mcp_servers"`
	Guardrails map[string]struct {
		Kind string `yaml:"kind"`
	} `yaml:"guardrails"`
}

// tagsFor returns the tags in a fixed order.
func tagsFor(b []byte) ([]string, error) {
	var c config
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	var tags []string
	for _, conn := range c.Connections {
		if conn.Kind == "vertex" {
			tags = append(tags, "vertex")
			break
		}
	}
	if c.Telemetry != nil {
		tags = append(tags, "otel")
	}
	if len(c.MCPServers) > 0 {
		tags = append(tags, "mcp")
	}
	for _, g := range c.Guardrails {
		if g.Kind == "bedrock" {
			tags = append(tags, "bedrockguard")
			break
		}
	}
	return tags, nil
}

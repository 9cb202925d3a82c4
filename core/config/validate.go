package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

func (c *Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	switch c.Auth {
	case "", "none":
	default:
		bad("auth: must be empty or \"none\", got %q", c.Auth)
	}
	if c.Auth == "none" && len(c.Keys) > 0 {
		bad("auth: \"none\" contradicts the configured keys")
	}
	names := map[string]bool{}
	for i := range c.Keys {
		k := &c.Keys[i]
		p := fmt.Sprintf("keys[%d]", i)
		if k.Name == "" {
			bad("%s.name is required", p)
		} else if names[k.Name] {
			bad("%s.name %q is used twice", p, k.Name)
		}
		names[k.Name] = true
		switch {
		case (k.SHA256 == "") == (k.Value == ""):
			bad("%s: give exactly one of sha256 and value", p)
		case k.Value != "":
			k.Hash = sha256.Sum256([]byte(k.Value))
			k.Value = "" // only the hash stays in memory
		default:
			raw, err := hex.DecodeString(strings.TrimSpace(k.SHA256))
			if err != nil || len(raw) != sha256.Size {
				bad("%s.sha256 must be 64 hexadecimal characters", p)
			} else {
				copy(k.Hash[:], raw)
			}
		}
		for _, g := range k.Models {
			if _, err := path.Match(g, ""); err != nil {
				bad("%s.models: bad glob %q", p, g)
			}
		}
	}

	for name, conn := range c.Connections {
		if !validName(name) {
			bad("connections.%s: names use letters, digits, '.', '_' and '-'", name)
		}
		if conn.Kind == "" {
			bad("connections.%s.kind is required", name)
		}
	}

	if len(c.Models) == 0 {
		bad("models: at least one model is required")
	}
	for name, m := range c.Models {
		p := "models." + name
		if strings.TrimSpace(name) == "" {
			bad("models: a model name is empty")
		}
		if len(m.Routes) == 0 {
			bad("%s.routes: at least one route is required", p)
		}
		if m.MaxOutputTokens < 0 {
			bad("%s.max_output_tokens must not be negative", p)
		}
		if pr := m.Price; pr != nil && (pr.InputPerMTok < 0 || pr.OutputPerMTok < 0 || pr.CachedInputPerMTok != nil && *pr.CachedInputPerMTok < 0) {
			bad("%s.price: prices must not be negative", p)
		}
		switch m.Routing.Policy {
		case "":
			m.Routing.Policy = PolicyOrdered
		case PolicyOrdered, PolicyWeighted:
		default:
			bad("%s.routing.policy must be ordered or weighted, got %q", p, m.Routing.Policy)
		}
		if m.Routing.MaxAttempts < 0 {
			bad("%s.routing.max_attempts must not be negative", p)
		}
		if m.Routing.MaxAttempts == 0 {
			m.Routing.MaxAttempts = min(len(m.Routes), DefaultMaxAttempts)
		}
		for i := range m.Routes {
			r := &m.Routes[i]
			rp := fmt.Sprintf("%s.routes[%d]", p, i)
			if _, ok := c.Connections[r.Connection]; !ok {
				bad("%s.connection %q is not a configured connection", rp, r.Connection)
			}
			if r.Model == "" {
				bad("%s.model is required", rp)
			}
			if r.Weight < 0 {
				bad("%s.weight must not be negative", rp)
			}
			if r.Weight == 0 {
				r.Weight = 1
			}
		}
	}
	if c.Limits.MaxBodyBytes < 0 || c.Limits.MaxMessages < 0 || c.Limits.MaxTools < 0 || c.Limits.MaxInFlight < 0 {
		bad("limits: values must not be negative")
	}
	if c.Limits.MaxBodyBytes == 0 {
		c.Limits.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Limits.MaxInFlight == 0 {
		c.Limits.MaxInFlight = DefaultMaxInFlight
	}
	c.Timeouts = c.Timeouts.Merge(Timeouts{
		Connect: Duration(DefaultConnect), FirstByte: Duration(DefaultFirstByte),
		Idle: Duration(DefaultIdle), Total: Duration(DefaultTotal),
	})
	switch c.Logging.Format {
	case "", "cloudwatch", "cloudlogging":
	default:
		bad("logging.format must be cloudwatch or cloudlogging, got %q", c.Logging.Format)
	}
	sortErrors(errs)
	return errors.Join(errs...)
}

// DefaultMaxAttempts caps attempts per request when a model does not say.
const DefaultMaxAttempts = 3

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func sortErrors(errs []error) {
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
}

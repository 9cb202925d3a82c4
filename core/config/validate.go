package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"path"
	"strings"
)

func (c *Config) validate() error {
	bad := &problems{where: c.where}

	switch c.Auth {
	case "", "none":
	default:
		bad.add("auth", ": must be empty or \"none\", got %q", c.Auth)
	}
	if c.Auth == "none" && len(c.Keys) > 0 {
		bad.add("auth", ": \"none\" contradicts the configured keys")
	}
	c.RequestProfile = checkProfile(bad, "request_profile", c.RequestProfile, ProfileStrict)
	checkIgnore(bad, "request_profile_ignore", c.RequestProfileIgnore)
	c.validateKeys(bad)
	c.validateLimits(bad)
	c.validateRegion(bad)

	for name, conn := range c.Connections {
		p := "connections." + name
		if !validName(name) {
			bad.add(p, ": names use letters, digits, '.', '_' and '-'")
		}
		if conn.Kind == "" {
			bad.add(p+".kind", " is required")
		}
		if conn.BaseURL != "" {
			if why := checkBaseURL(conn.BaseURL); why != "" {
				bad.add(p+".base_url", " %s", why)
			}
		}
	}

	if len(c.Models) == 0 {
		bad.add("models", ": at least one model is required")
	}
	for name, m := range c.Models {
		p := "models." + name
		if strings.TrimSpace(name) == "" {
			bad.add("models", ": a model name is empty")
		}
		if len(m.Routes) == 0 {
			bad.add(p+".routes", ": at least one route is required")
		}
		m.validateKind(p, bad)
		if m.MaxOutputTokens < 0 {
			bad.add(p+".max_output_tokens", " must not be negative")
		}
		if pr := m.Price; pr != nil && (pr.InputPerMTok < 0 || pr.OutputPerMTok < 0 || pr.CachedInputPerMTok != nil && *pr.CachedInputPerMTok < 0) {
			bad.add(p+".price", ": prices must not be negative")
		}
		switch m.Routing.Policy {
		case "":
			m.Routing.Policy = PolicyOrdered
		case PolicyOrdered, PolicyWeighted:
		default:
			bad.add(p+".routing.policy", " must be ordered or weighted, got %q", m.Routing.Policy)
		}
		if m.Routing.MaxAttempts < 0 {
			bad.add(p+".routing.max_attempts", " must not be negative")
		}
		if m.Routing.MaxAttempts == 0 {
			m.Routing.MaxAttempts = min(len(m.Routes), DefaultMaxAttempts)
		}
		sum := 0 // the weighted policy draws from the sum: it must fit an int
		for i := range m.Routes {
			r := &m.Routes[i]
			rp := fmt.Sprintf("%s.routes[%d]", p, i)
			if _, ok := c.Connections[r.Connection]; !ok {
				bad.add(rp+".connection", " %q is not a configured connection", r.Connection)
			}
			if r.Model == "" {
				bad.add(rp+".model", " is required")
			}
			switch {
			case r.Weight < 0:
				bad.add(rp+".weight", " must not be negative")
			case r.Weight == 0:
				r.Weight = 1
			}
			if r.Weight > 0 {
				if sum > math.MaxInt-r.Weight {
					bad.add(rp+".weight", ": the weights of %s's routes add up to more than %d", name, math.MaxInt)
					sum = math.MaxInt
				} else {
					sum += r.Weight
				}
			}
		}
	}
	if c.Limits.MaxBodyBytes < 0 || c.Limits.MaxMessages < 0 || c.Limits.MaxTools < 0 || c.Limits.MaxInFlight < 0 || c.Limits.WebSocketMaxMessageBytes < 0 {
		bad.add("limits", ": values must not be negative")
	}
	c.Limits.setDefaults()
	c.Timeouts = c.Timeouts.Merge(Timeouts{
		Connect: Duration(DefaultConnect), FirstByte: Duration(DefaultFirstByte),
		Idle: Duration(DefaultIdle), Total: Duration(DefaultTotal),
	})
	c.Responses.validate(bad)
	c.validateCache(bad)
	c.validateGuardrails(bad)
	c.KeyStore.validate(bad)
	c.Admin.validate(bad)
	c.validateCompactionKeys(bad)
	switch c.Logging.Format {
	case "", "cloudwatch", "cloudlogging", "text":
	default:
		bad.add("logging.format", " must be cloudwatch, cloudlogging or text, got %q", c.Logging.Format)
	}
	c.validateTelemetry(bad)
	c.validateMCP(bad)
	c.MCPOAuth.validate(bad, c.MCPServers)
	return bad.err()
}

// setDefaults gives each limit left 0 its default: the gateway reads them from the config
// alone. Negative values were refused with the other limits (the durations by their
// decoding). Messages and tools are left to the doors' decoding (llm.Limits), which every
// caller of a door shares.
func (l *Limits) setDefaults() {
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxInFlight == 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.BodyReadTimeout == 0 {
		l.BodyReadTimeout = Duration(DefaultBodyReadTimeout)
	}
	if l.WebSocketMaxMessageBytes == 0 {
		l.WebSocketMaxMessageBytes = l.MaxBodyBytes
	}
	if l.WebSocketIdleTimeout == 0 {
		l.WebSocketIdleTimeout = Duration(DefaultWebSocketIdleTimeout)
	}
	if l.WebSocketMaxDuration == 0 {
		l.WebSocketMaxDuration = Duration(DefaultWebSocketMaxDuration)
	}
}

// validateKeys hashes the client keys and refuses two with one secret: a request carries
// only its secret, so it would match one of them and the other's models and residency would
// silently never apply.
func (c *Config) validateKeys(bad *problems) {
	names := map[string]bool{}
	owner := map[[sha256.Size]byte]int{} // hash -> index of the first key with it
	for i := range c.Keys {
		k := &c.Keys[i]
		p := fmt.Sprintf("keys[%d]", i)
		if k.Name == "" {
			bad.add(p+".name", " is required")
		} else if names[k.Name] {
			bad.add(p+".name", " %q is used twice", k.Name)
		} else if strings.HasPrefix(k.Name, StoredKeyIDPrefix) {
			bad.add(p+".name", " %q begins with %s, which only the ids of stored keys do: name the key otherwise", k.Name, StoredKeyIDPrefix)
		}
		names[k.Name] = true
		k.ID = k.Name
		field, hashed := p+".sha256", false
		switch {
		case (k.SHA256 == "") == (k.Value == ""):
			bad.add(p, ": give exactly one of sha256 and value")
		case k.Value != "":
			field, hashed = p+".value", true
			k.Hash = sha256.Sum256([]byte(k.Value))
			k.Value = "" // only the hash stays in memory
		default:
			raw, err := hex.DecodeString(strings.TrimSpace(k.SHA256))
			if err != nil || len(raw) != sha256.Size {
				bad.add(field, " must be 64 hexadecimal characters")
				break
			}
			copy(k.Hash[:], raw)
			hashed = true
		}
		if first, dup := owner[k.Hash]; hashed && dup {
			bad.add(field, " is the secret of keys[%d] (%s) too: give each key its own secret, or merge the two keys", first, c.Keys[first].Name)
		} else if hashed {
			owner[k.Hash] = i
		}
		for _, g := range k.Models {
			if _, err := path.Match(g, ""); err != nil {
				bad.add(p+".models", ": bad glob %q", g)
			}
		}
		k.RequestProfile = checkProfile(bad, p+".request_profile", k.RequestProfile, c.RequestProfile)
		if k.RequestProfileIgnore == nil {
			k.RequestProfileIgnore = c.RequestProfileIgnore
		} else {
			checkIgnore(bad, p+".request_profile_ignore", k.RequestProfileIgnore)
		}
	}
}

// checkProfile returns a request_profile, or def when it is unset.
func checkProfile(bad *problems, p, v, def string) string {
	switch v {
	case "":
		return def
	case ProfileStrict, ProfileExtended:
	default:
		bad.add(p, " must be strict or extended, got %q", v)
	}
	return v
}

func checkIgnore(bad *problems, p string, list []string) {
	for i, v := range list {
		if v != IgnoreMessageNames {
			bad.add(fmt.Sprintf("%s[%d]", p, i), ": only %q can be ignored, got %q", IgnoreMessageNames, v)
		}
	}
}

// checkBaseURL says what is wrong with a base_url, or "". The message never repeats the URL:
// its query string may carry a credential.
func checkBaseURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "is not a valid URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http:// or https:// URL"
	case u.Host == "":
		return "has no host"
	}
	return ""
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

func (c *Config) validateTelemetry(bad *problems) {
	o := c.Telemetry.OTLP
	if o == nil {
		return
	}
	switch o.Protocol {
	case "", ProtocolHTTP, ProtocolGRPC:
	default:
		bad.add("telemetry.otlp.protocol", " must be http/protobuf or grpc, got %q", o.Protocol)
	}
	if o.Endpoint != "" {
		if u, err := url.Parse(o.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad.add("telemetry.otlp.endpoint", " must be an http:// or https:// URL such as http://127.0.0.1:4318, got %q", o.Endpoint)
		}
	}
	if r := o.SampleRatio; r != nil && !(*r >= 0 && *r <= 1) {
		bad.add("telemetry.otlp.sample_ratio", " must be between 0 and 1, got %v", *r)
	}
}

package builtin

import "strings"

// apiKey returns the end of a well-known secret starting at the word at s[i], or -1. Each
// format has a minimum length, so prose that shares a prefix ("sk-8", "ghp_", "AKIA is")
// is not a key.
func apiKey(s string, i int) int {
	rest := s[i:]
	switch s[i] {
	case 's':
		switch {
		case strings.HasPrefix(rest, "sk-"):
			// OpenAI (sk-..., sk-proj-..., sk-svcacct-...), Anthropic (sk-ant-...) and fngate
			// (sk-fngate-...) share one shape: a long random tail.
			return randomTail(s, i+3, 20)
		case strings.HasPrefix(rest, "sk_live_"):
			return fixedTail(s, i+8, 24, 0, classDigit|classUpper|classLower) // Stripe secret key
		}
	case 'r':
		if strings.HasPrefix(rest, "rk_live_") {
			return fixedTail(s, i+8, 24, 0, classDigit|classUpper|classLower) // Stripe restricted key
		}
	case 'g':
		switch {
		case len(rest) > 4 && rest[0:2] == "gh" && strings.IndexByte("pousr", rest[2]) >= 0 && rest[3] == '_':
			return fixedTail(s, i+4, 36, 0, classDigit|classUpper|classLower) // GitHub tokens
		case strings.HasPrefix(rest, "github_pat_"):
			return fixedTail(s, i+11, 50, 0, classWord) // GitHub fine-grained token
		case strings.HasPrefix(rest, "glpat-"):
			return fixedTail(s, i+6, 20, 0, classB64) // GitLab personal access token
		}
	case 'x':
		if len(rest) > 5 && rest[0:3] == "xox" && strings.IndexByte("abpors", rest[3]) >= 0 && rest[4] == '-' {
			return slackTail(s, i+5) // Slack tokens
		}
	case 'A':
		switch {
		case strings.HasPrefix(rest, "AKIA"), strings.HasPrefix(rest, "ASIA"):
			return fixedTail(s, i+4, 16, 16, classDigit|classUpper) // AWS access key id
		case strings.HasPrefix(rest, "AIza"):
			return fixedTail(s, i+4, 35, 35, classB64) // Google API key
		}
	case 'e':
		if strings.HasPrefix(rest, "eyJ") {
			return jwt(s, i)
		}
	}
	return -1
}

// fixedTail reads the run of class cl at s[j]: at least minLen bytes and, when maxLen is not
// 0, exactly up to maxLen; the run must end at a word boundary.
func fixedTail(s string, j, minLen, maxLen int, cl uint8) int {
	end := runEnd(s, j, cl)
	n := end - j
	if n < minLen || maxLen > 0 && n != maxLen || wordAfter(s, end) || end < len(s) && isB64(s[end]) {
		return -1
	}
	return end
}

// randomTail reads a base64url tail at s[j] of at least minLen bytes that looks random:
// upper- and lower-case letters and a digit. That sets kebab-case words (sk-learn-pipeline)
// aside; a random 20-character tail lacks one of the three about 3% of the time, a 40-
// character one (the keys here are 43 and more) almost never.
func randomTail(s string, j, minLen int) int {
	end := runEnd(s, j, classB64)
	for end > j && s[end-1] == '-' {
		end--
	}
	if end-j < minLen || wordAfter(s, end) {
		return -1
	}
	var seen uint8
	for k := j; k < end; k++ {
		seen |= classes[s[k]]
	}
	if seen&classUpper == 0 || seen&classLower == 0 || seen&classDigit == 0 {
		return -1
	}
	return end
}

// slackTail reads a Slack token's tail (xoxb-123456789012-1234567890123-AbC...): digits,
// letters and dashes, at least 20, with digits.
func slackTail(s string, j int) int {
	end := j
	for end < len(s) && (isAlnum(s[end]) || s[end] == '-') {
		end++
	}
	for end > j && s[end-1] == '-' {
		end--
	}
	if end-j < 20 || wordAfter(s, end) || !strings.ContainsAny(s[j:end], "0123456789") {
		return -1
	}
	return end
}

// jwt reads a JSON Web Token at s[i]: header and payload are base64url JSON objects (so both
// start eyJ, "{"), and a signature of at least 16 characters (an unsigned token is not a
// credential).
func jwt(s string, i int) int {
	j := runEnd(s, i, classB64)
	if j-i < 10 || j >= len(s) || s[j] != '.' || !strings.HasPrefix(s[j+1:], "eyJ") {
		return -1
	}
	k := runEnd(s, j+1, classB64)
	if k-j-1 < 10 || k >= len(s) || s[k] != '.' {
		return -1
	}
	end := runEnd(s, k+1, classB64)
	if end-k-1 < 16 || wordAfter(s, end) {
		return -1
	}
	return end
}

// PEM private keys: the block from BEGIN to END, which is at most a few KB (an RSA 8192 key
// is about 6.5 KB).
const maxPEM = 16 << 10

// pemBlock returns the end of a PEM private key block starting at s[i] ('-'), or -1. A block
// whose END is not there (a stream cut in the middle, a truncated paste) is masked from its
// BEGIN through the base64 that follows, which is still the key.
func pemBlock(s string, i int) int {
	const begin = "-----BEGIN "
	if !strings.HasPrefix(s[i:], begin) {
		return -1
	}
	j := i + len(begin)
	k := strings.Index(s[j:min(len(s), j+64)], "-----")
	if k < 0 {
		return -1
	}
	label := s[j : j+k]
	if !strings.HasSuffix(label, "PRIVATE KEY") || strings.ContainsAny(label, "\r\n") {
		return -1
	}
	body := j + k + len("-----")
	window := s[body:min(len(s), body+maxPEM)]
	if e := strings.Index(window, "-----END "+label+"-----"); e >= 0 {
		return body + e + len("-----END -----") + len(label)
	}
	end := body
	for end < len(s) && end-body < maxPEM {
		b := s[end]
		if !isAlnum(b) && b != '+' && b != '/' && b != '=' && b != '\n' && b != '\r' {
			break
		}
		end++
	}
	for end > body && (s[end-1] == '\n' || s[end-1] == '\r') {
		end--
	}
	return end
}

package local

import (
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

// The keys below are assembled from parts, so no secret scanner mistakes the tests for a
// leak; none of them is a real credential.
var (
	openAIKey    = "sk-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6n"
	openAIProj   = "sk-" + "proj-" + "Zq8_Xw7-Vu6tSr5qPo4nMl3kJi2hGf1eDc0bAa9zYx8wVv7u"
	anthropicKey = "sk-" + "ant-api03-" + "Qw1eRt2yUi3oPa4sDf5gHj6kLz7xCv8bNm9Q-w0eRt1yUi2oPa3sDf4gHj5kLz6xCv7bNm8-AA"
	fngateKey    = "sk-" + "fngate-" + "7Hq2Lm9Xv4Rt8Kp3Ws6Nb1Yc5Jd0Fg7Zh2Ue4Ia9Oq3Tl"
	awsKeyID     = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSession   = "ASIA" + "Y34FZKBOKMUTVV7A"
	githubToken  = "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	githubOAuth  = "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	githubPAT    = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP0123456789ab"
	gitlabToken  = "glpat-" + "xYz12-AbCdEfGhIjKlMn"
	slackToken   = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	googleKey    = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	stripeLive   = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
	stripeRK     = "rk_" + "live_" + "51H8eC39HqLyjWDarjtT1zdp7dc"
	jwtToken     = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemKey       = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx5P1c0Vx+Zr4lGq2\nb3NoZXJlIGlzIG5vIGtleSBoZXJl==\n-----END RSA PRIVATE KEY-----"
)

type maskCase struct {
	name, in, want string
}

func allBuiltins(t testing.TB) *Checker {
	t.Helper()
	c, err := New(&config.Guardrail{Kind: "local", Name: "pii", Mask: config.LocalPII})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runMaskCases(t *testing.T, cases []maskCase) {
	t.Helper()
	c := allBuiltins(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, kinds := c.Mask(tc.in)
			if got != tc.want {
				t.Errorf("Mask(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if (tc.in == tc.want) != (kinds == nil) {
				t.Errorf("Mask(%q) kinds = %v", tc.in, kinds)
			}
		})
	}
}

func TestEmail(t *testing.T) {
	runMaskCases(t, []maskCase{
		// true positives
		{"prose", "Write to jane.doe@example.com today.", "Write to [EMAIL] today."},
		{"text edges", "bob@example.org", "[EMAIL]"},
		{"plus tag", "alerts: ops+pager@corp.example.co.uk,", "alerts: [EMAIL],"},
		{"upper case", "JOHN_SMITH@EXAMPLE.COM", "[EMAIL]"},
		{"json", `{"email":"a.b-c@mail.example.io","id":1}`, `{"email":"[EMAIL]","id":1}`},
		{"angle brackets", "From: Jane <jane@example.net>", "From: Jane <[EMAIL]>"},
		{"mailto link", "[mail me](mailto:me@example.dev)", "[mail me](mailto:[EMAIL])"},
		{"markdown link text", "[me@example.dev](mailto:me@example.dev)", "[[EMAIL]](mailto:[EMAIL])"},
		{"sentence end", "Contact: support@example.com.", "Contact: [EMAIL]."},
		{"colon then space", "email a@example.com: it works", "email [EMAIL]: it works"},
		{"unicode around", "écrire à zoe_x@example.fr — merci", "écrire à [EMAIL] — merci"},
		{"cjk around", "连接admin@example.cn请", "连接[EMAIL]请"},
		{"log line", "level=info user=u123@example.com msg=login", "level=info user=[EMAIL] msg=login"},
		{"two", "a@example.com,b@example.com", "[EMAIL],[EMAIL]"},
		{"url credentials", "https://user:pass@host.example.com/x", "https://user:[EMAIL]/x"},
		{"leading dots stripped", "see...john@example.com", "see...[EMAIL]"},
		// false positives
		{"scp remote", "git clone git@github.com:fngate/fngate.git", "git clone git@github.com:fngate/fngate.git"},
		{"npm scope", "import x from '@types/node'", "import x from '@types/node'"},
		{"package version", "npm i lodash@4.17.21", "npm i lodash@4.17.21"},
		{"go module version", "go get golang.org/x/tools@v0.21.0", "go get golang.org/x/tools@v0.21.0"},
		{"retina image", "![logo](img/logo@2x.png)", "![logo](img/logo@2x.png)"},
		{"decorator", "@Override\npublic void run()", "@Override\npublic void run()"},
		{"mention", "thanks @alice and @bob.", "thanks @alice and @bob."},
		{"no tld", "root@localhost", "root@localhost"},
		{"numeric tld", "user@10.0.0.1", "user@10.0.0.1"},
		{"docker digest", "image@sha256:abc123", "image@sha256:abc123"},
		{"split by newline", "jane\n@example.com", "jane\n@example.com"},
		{"domain split by newline", "jane@\nexample.com", "jane@\nexample.com"},
		{"dot before at", "jane.@example.com", "jane.@example.com"},
		{"double dot is prose", "ja..ne@example.com", "ja..[EMAIL]"},
		{"glued to a word", "jane@example.com_backup", "jane@example.com_backup"},
		{"css at-rule", "@media (max-width: 600px) {}", "@media (max-width: 600px) {}"},
	})
}

func TestPhone(t *testing.T) {
	runMaskCases(t, []maskCase{
		// true positives
		{"e164 plain", "call +14155552671 now", "call [PHONE] now"},
		{"e164 spaced", "UK office: +44 20 7946 0958.", "UK office: [PHONE]."},
		{"e164 trunk prefix", "+44 (0)20 7946 0958", "[PHONE]"},
		{"e164 parens", "tel +1 (415) 555-2671;", "tel [PHONE];"},
		{"e164 dashes", "+49-30-901820", "[PHONE]"},
		{"e164 dots", "+33.1.23.45.67.89", "[PHONE]"},
		{"nanp parens", "Call (555) 123-4567 today", "Call [PHONE] today"},
		{"nanp parens no space", "(555)123-4567", "[PHONE]"},
		{"nanp dashes", "phone: 555-123-4567", "phone: [PHONE]"},
		{"nanp dots", "555.123.4567", "[PHONE]"},
		{"nanp country code", "dial 1-800-555-0199.", "dial [PHONE]."},
		{"json", `{"phone":"212-555-0143"}`, `{"phone":"[PHONE]"}`},
		{"markdown table", "| Jane | 646.555.0100 |", "| Jane | [PHONE] |"},
		{"unicode around", "☎ +81 3-1234-5678 まで", "☎ [PHONE] まで"},
		{"after colon", "mobile:+447911123456", "mobile:[PHONE]"},
		// false positives
		{"date", "released 2026-12-02", "released 2026-12-02"},
		{"iso timestamp", "at 2026-12-02T10:38:52+00:00 we", "at 2026-12-02T10:38:52+00:00 we"},
		{"time", "meet at 10:38:52", "meet at 10:38:52"},
		{"version", "go 1.25.3 and v2.10.4", "go 1.25.3 and v2.10.4"},
		{"ip address", "host 192.168.100.200 port", "host 192.168.100.200 port"},
		{"order id", "order 100234567890123 shipped", "order 100234567890123 shipped"},
		{"long digit run after plus", "+1234567890123456789", "+1234567890123456789"},
		{"short plus", "x +12345 y", "x +12345 y"},
		{"timezone offset", "UTC+05:30", "UTC+05:30"},
		{"arithmetic", "a+1234567890", "a+1234567890"},
		{"area code from 1", "123-456-7890", "123-456-7890"},
		{"area code from 0", "055-123-4567", "055-123-4567"},
		{"longer dashed id", "555-123-4567-89", "555-123-4567-89"},
		{"inside dotted number", "10.555.123.4567", "10.555.123.4567"},
		{"split by newline", "555-123-\n4567", "555-123-\n4567"},
		{"glued to a word", "id555-123-4567", "id555-123-4567"},
		{"card number", "4111 1111 1111 1111", "[CARD]"},
		{"ssn shape", "078-05-1120", "078-05-1120"},
	})
}

func TestCard(t *testing.T) {
	runMaskCases(t, []maskCase{
		// true positives
		{"visa plain", "card 4111111111111111 exp", "card [CARD] exp"},
		{"visa spaced", "4111 1111 1111 1111", "[CARD]"},
		{"mastercard dashed", "pay with 5555-5555-5555-4444.", "pay with [CARD]."},
		{"mastercard 2 series", "2223003122003222", "[CARD]"},
		{"amex 4-6-5", "Amex: 3782 822463 10005", "Amex: [CARD]"},
		{"amex plain", "378282246310005", "[CARD]"},
		{"discover", "(6011111111111117)", "([CARD])"},
		{"jcb", "jcb=3530111333300000&x", "jcb=[CARD]&x"},
		{"diners 14", "30569309025904", "[CARD]"},
		{"unionpay", "6200000000000005", "[CARD]"},
		{"visa 13", "4222222222222", "[CARD]"},
		{"19 digits", "4000123412341000003", "[CARD]"},
		{"json number", `{"pan":4111111111111111}`, `{"pan":[CARD]}`},
		{"then expiry", "4111 1111 1111 1111 12/27", "[CARD] 12/27"},
		{"then more groups", "4111 1111 1111 1111 2026", "[CARD] 2026"},
		{"unicode around", "карта 4111111111111111 ✓", "карта [CARD] ✓"},
		{"markdown code", "`5555555555554444`", "`[CARD]`"},
		// false positives
		{"luhn fails", "4111111111111112", "4111111111111112"},
		{"no brand", "1000000000000008", "1000000000000008"},
		{"no brand 9", "9000000000000001", "9000000000000001"},
		{"too long", "41111111111111110", "41111111111111110"},
		{"part of a longer run", "order 411111111111111100000", "order 411111111111111100000"},
		{"glued to letters", "tx4111111111111111", "tx4111111111111111"},
		{"followed by letters", "4111111111111111abc", "4111111111111111abc"},
		{"hex hash", "sha 4111111111111111deadbeef", "sha 4111111111111111deadbeef"},
		{"mixed separators", "4111 1111-1111 1111", "4111 1111-1111 1111"},
		{"double spaces", "4111  1111  1111  1111", "4111  1111  1111  1111"},
		{"split by newline", "4111 1111\n1111 1111", "4111 1111\n1111 1111"},
		{"decimal", "3.4111111111111111", "3.4111111111111111"},
		{"too short", "411111111111", "411111111111"},
		{"uuid digits", "550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4-a716-446655440000"},
		{"timestamp ms", "ts=1733135932000", "ts=1733135932000"},
		{"single digit groups", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"},
	})
}

func TestIBAN(t *testing.T) {
	runMaskCases(t, []maskCase{
		// true positives
		{"de print", "IBAN: DE89 3704 0044 0532 0130 00.", "IBAN: [IBAN]."},
		{"de compact", "DE89370400440532013000", "[IBAN]"},
		{"gb", "pay GB29 NWBK 6016 1331 9268 19 by Friday", "pay [IBAN] by Friday"},
		{"gb other", "GB82WEST12345698765432", "[IBAN]"},
		{"fr letters in bban", "FR14 2004 1010 0505 0001 3M02 606", "[IBAN]"},
		{"nl", "(NL91ABNA0417164300)", "([IBAN])"},
		{"be shortest sepa", "BE68539007547034", "[IBAN]"},
		{"ch", "CH9300762011623852957", "[IBAN]"},
		{"es json", `{"iban":"ES9121000418450200051332"}`, `{"iban":"[IBAN]"}`},
		{"it", "IT60X0542811101000000123456", "[IBAN]"},
		{"no shortest", "NO93 8601 1117 947", "[IBAN]"},
		{"mt longest", "MT84MALT011000012345MTLCAST001S", "[IBAN]"},
		{"unicode around", "Überweisung an DE89370400440532013000 – danke", "Überweisung an [IBAN] – danke"},
		{"markdown bold", "**DE89 3704 0044 0532 0130 00**", "**[IBAN]**"},
		{"then currency", "DE89 3704 0044 0532 0130 00 EUR", "[IBAN] EUR"},
		// false positives
		{"check fails", "DE89370400440532013001", "DE89370400440532013001"},
		{"unknown country", "XX89370400440532013000", "XX89370400440532013000"},
		{"wrong length", "DE8937040044053201300", "DE8937040044053201300"},
		{"too long", "DE890370400440532013000", "DE890370400440532013000"},
		{"glued to a word", "xDE89370400440532013000", "xDE89370400440532013000"},
		{"followed by letters", "DE89370400440532013000X", "DE89370400440532013000X"},
		{"lower case", "de89370400440532013000", "de89370400440532013000"},
		{"bad grouping", "DE89 37040044 0532 0130 00", "DE89 37040044 0532 0130 00"},
		{"split by newline", "DE89 3704 0044\n0532 0130 00", "DE89 3704 0044\n0532 0130 00"},
		{"product code", "model DE12 ships", "model DE12 ships"},
		{"constant", "const GB29 = 1", "const GB29 = 1"},
		{"hex", "ES9121000418450200051332ab", "ES9121000418450200051332ab"},
		{"sku", "SKU FR14-2004-1010", "SKU FR14-2004-1010"},
		{"double space", "DE89  3704 0044 0532 0130 00", "DE89  3704 0044 0532 0130 00"},
		{"placeholder", "[IBAN]", "[IBAN]"},
	})
}

func TestAPIKey(t *testing.T) {
	pemNoEnd := pemKey[:strings.Index(pemKey, "-----END")]
	runMaskCases(t, []maskCase{
		// true positives
		{"openai", "OPENAI_API_KEY=" + openAIKey, "OPENAI_API_KEY=[API_KEY]"},
		{"openai project", `{"key": "` + openAIProj + `"}`, `{"key": "[API_KEY]"}`},
		{"anthropic", "x-api-key: " + anthropicKey + "\n", "x-api-key: [API_KEY]\n"},
		{"fngate", "Authorization: Bearer " + fngateKey, "Authorization: Bearer [API_KEY]"},
		{"aws key id", "aws_access_key_id = " + awsKeyID, "aws_access_key_id = [API_KEY]"},
		{"aws session key id", "'" + awsSession + "'", "'[API_KEY]'"},
		{"github", "token: " + githubToken + ".", "token: [API_KEY]."},
		{"github oauth", githubOAuth, "[API_KEY]"},
		{"github fine grained", "GH_TOKEN=" + githubPAT, "GH_TOKEN=[API_KEY]"},
		{"gitlab", "glab auth --token " + gitlabToken, "glab auth --token [API_KEY]"},
		{"slack", "SLACK_BOT_TOKEN=" + slackToken + " #bot", "SLACK_BOT_TOKEN=[API_KEY] #bot"},
		{"google", "https://maps.example.com/api?key=" + googleKey + "&q=1", "https://maps.example.com/api?key=[API_KEY]&q=1"},
		{"stripe", "stripe.api_key = \"" + stripeLive + "\"", "stripe.api_key = \"[API_KEY]\""},
		{"stripe restricted", stripeRK, "[API_KEY]"},
		{"jwt", "Authorization: Bearer " + jwtToken, "Authorization: Bearer [API_KEY]"},
		{"pem", "key:\n" + pemKey + "\nend", "key:\n[API_KEY]\nend"},
		{"pem without end", "```\n" + pemNoEnd, "```\n[API_KEY]\n"},
		{"unicode around", "clé «" + openAIKey + "»", "clé «[API_KEY]»"},
		// false positives
		{"short sk", "use sk-8 for the small model", "use sk-8 for the small model"},
		{"kebab case", "pip install sk-learn-model-selection-tools-extra", "pip install sk-learn-model-selection-tools-extra"},
		{"lower case with digits", "sk-release-2026-12-02-notes-and-more", "sk-release-2026-12-02-notes-and-more"},
		{"inside a word", "task-" + openAIKey[3:], "task-" + openAIKey[3:]},
		{"akia prose", "AKIA is the prefix of AWS access key ids", "AKIA is the prefix of AWS access key ids"},
		{"aws too long", awsKeyID + "X", awsKeyID + "X"},
		{"aws lower", "AKIAiosfodnn7example", "AKIAiosfodnn7example"},
		{"github short", "ghp_abc is a prefix", "ghp_abc is a prefix"},
		{"github in identifier", "my_" + githubToken, "my_" + githubToken},
		{"slack prose", "xoxb-tokens are for bots", "xoxb-tokens are for bots"},
		{"google short", "AIzaSyD-short", "AIzaSyD-short"},
		{"jwt unsigned", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0In0.", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0In0."},
		{"jwt header only", "eyJhbGciOiJIUzI1NiJ9 is base64", "eyJhbGciOiJIUzI1NiJ9 is base64"},
		{"pem public key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----"},
		{"pem certificate", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"markdown rule", "-----\ntitle\n-----", "-----\ntitle\n-----"},
		{"stripe test key", "sk_" + "test_4eC39HqLyjWDarjtT1zdp7dc", "sk_" + "test_4eC39HqLyjWDarjtT1zdp7dc"},
		{"split by newline", openAIKey[:20] + "\n" + openAIKey[20:], openAIKey[:20] + "\n" + openAIKey[20:]},
	})
}

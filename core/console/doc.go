// Package console is the web console at /console, served by the control-plane function
// beside the admin API: sign in with the organisation's identity provider (OIDC,
// authorization code with PKCE) or an admin key; keys (list, search, create with the secret
// shown once, edit limits, disable, enable, rotate, delete); each key's spend and tokens per
// model over days and months as charts; the routes' health and why a route is cooled, with
// cool and restore; the audit log. Every operation is an admin API call made in process as
// the signed-in principal (admin.WithPrincipal), so roles and the audit are the admin API's.
// Pages are drawn by the server with html/template; the static assets are embedded; the
// one script (a copy button, confirmations) is optional.
//
//	console.go    Options, New, the routes, the session check and form tokens of every request
//	session.go    signed cookies (session, sign-in trip) and per-form tokens, HMAC-SHA256
//	auth.go       sign-in with an admin key, with OIDC (code + PKCE, state and nonce), sign-out
//	api.go        the in-process admin API call, its bounded answer and its error shape
//	resources.go  the admin API's JSON as the console reads it
//	keys.go       the keys pages and their changes; forms to admin API bodies
//	usage.go      the usage span (days or months) and its charts
//	routes.go     the routes page, cool and restore; the audit log page
//	chart.go      stacked bar charts drawn as SVG (golden files under testdata/)
//	render.go     the templates (templates/), what each page is drawn from
//	static/       console.css, console.js (embedded; nothing from another site)
package console

#!/usr/bin/env bash
# make run: build the local server, saying first what a first build downloads and roughly how
# long it takes (a fresh machine otherwise sees minutes of "go: downloading" and nothing
# else), then serve. Messages go to stderr: `make run > gateway.log` keeps the log pure.
#
# VERTEX=auto (the default) builds the Vertex AI provider in when GOOGLE_CLOUD_PROJECT is set
# (the embedded default switches Vertex AI on only then) or when its SDK is already in the
# module cache (then it costs nothing); otherwise the server is built with -tags novertex,
# which saves about 655 of the 680 MB a first build downloads. VERTEX=1 always builds it in,
# VERTEX=0 never. Figures measured with an empty module and build cache (docs/development.md, "The first run").
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
bin="${BUILD_DIR:-build}/fngate-local"
say() { printf 'fngate: %s\n' "$*" >&2; }

# stale TAGS prints whether a build with these tags must compile (true/false), offline; it
# fails when the module cache lacks a module the build needs (-deps makes go list load them
# all; without it a missing module is only a note in the package's DepsErrors). A command is
# always "stale" for go list when it is not installed; the build cache having it is what
# counts here.
stale() {
	GOPROXY=off "$GO" list -deps -tags "$1" \
		-f '{{if not .DepOnly}}{{if and .Stale (ne .StaleReason "not installed but available in build cache")}}true{{else}}false{{end}}{{end}}' \
		./functions/local 2>/dev/null
}

tags=""
state=$(stale "") || state=missing
case "${VERTEX:-auto}" in
1 | yes | true | on) ;;
0 | no | false | off) tags=novertex ;;
auto) if [ "$state" = missing ] && [ -z "${GOOGLE_CLOUD_PROJECT:-}" ]; then tags=novertex; fi ;;
*)
	say "VERTEX=${VERTEX}: use auto (the default), 1 or 0"
	exit 2
	;;
esac
if [ "$tags" = novertex ]; then
	state=$(stale novertex) || state=missing
	if [ "${VERTEX:-auto}" = auto ]; then
		say "Vertex AI provider left out: GOOGLE_CLOUD_PROJECT is unset and its SDK (about 655 MB of modules) is not downloaded; \`make run VERTEX=1\` builds it in"
	else
		say "Vertex AI provider left out (VERTEX=${VERTEX})"
	fi
fi
case "$state" in
missing)
	if [ "$tags" = novertex ]; then
		say "first run: downloading the modules the local server needs (about 23 MB) and compiling it; roughly 2 to 4 minutes on a 2-core machine, most of it compiling"
	else
		say "first run: downloading the modules the local server needs (about 680 MB, most of it the Vertex AI SDK) and compiling it; roughly 2 to 6 minutes on a 2-core machine"
	fi
	say "the 'go: downloading' lines below are that; nothing is wrong while they scroll"
	;;
true) say "compiling the local server: up to a minute or two after a fresh checkout or a Go upgrade, seconds after a small change" ;;
esac
mkdir -p "$(dirname "$bin")"
SECONDS=0
"$GO" build -tags "$tags" -o "$bin" ./functions/local
if [ "$SECONDS" -ge 5 ]; then
	say "built in ${SECONDS}s"
fi
say "starting: the \"listening\" line says where, once it serves"
exec "$bin" "$@"

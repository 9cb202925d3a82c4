# fngate: `make run` serves the gateway on 127.0.0.1:8080 with the embedded default config;
# `make test` runs every test.
GO        ?= go
GOFLAGS   ?=
BUILD_DIR ?= build
LDFLAGS   := -s -w
# Lambda: provided.al2023 on arm64; lambda.norpc drops net/rpc (4 MB) from the binary.
LAMBDA_ENV   := CGO_ENABLED=0 GOOS=linux GOARCH=arm64
LAMBDA_FLAGS := -trimpath -tags lambda.norpc -ldflags="$(LDFLAGS)"

.PHONY: run test test-short lint fmt vet bench soak build-lambda build-gcf package clean

run:
	$(GO) run ./functions/local $(ARGS)

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

test-short:
	$(GO) test -count=1 ./...

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BUILD_DIR)

# Side-by-side latency, CPU and memory figures (fake upstream, gateway, bare reverse proxy).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms ./core/openai/ ./core/providers/openaicompat/ ./core/providers/anthropic/ ./core/gateway/
	$(GO) run ./scripts/bench $(BENCH_ARGS)

# Mixed load with injected faults; fails on unexpected outcomes or growth. SOAK_ARGS=-duration 30s
soak:
	$(GO) run ./scripts/soak $(SOAK_ARGS)

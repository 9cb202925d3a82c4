# fngate: `make run` serves the gateway on 127.0.0.1:8080 with the embedded default config;
# `make test` runs every test.
GO        ?= go
GOFLAGS   ?=
BUILD_DIR ?= build
LDFLAGS   := -s -w
# Lambda: provided.al2023 on arm64; lambda.norpc drops net/rpc (4 MB) from the binary.
LAMBDA_ENV   := CGO_ENABLED=0 GOOS=linux GOARCH=arm64
# LAMBDA_TAGS=lambda.norpc,vertex adds the Vertex AI provider (+10.7 MB, +25 ms cold start);
# LAMBDA_TAGS=lambda.norpc,otel the OpenTelemetry export (+5.4 MB; both: +12.6 MB);
# LAMBDA_TAGS=lambda.norpc,mcp the MCP gateway at /mcp (the MCP Go SDK: +2.2 MB, 13.6 MB).
# LAMBDA_TAGS=lambda.norpc,bedrockguard Bedrock guardrails (kind: bedrock; +0.13 MB).
LAMBDA_TAGS  ?= lambda.norpc
# CONFIG=path adds the tags its config needs (scripts/lambdatags: vertex, otel, mcp,
# bedrockguard), so `make package CONFIG=...` and `CONFIG=... sam build` link what the config
# uses; a bootstrap started with a feature it lacks refuses to load and names the tag.
comma := ,
CONFIG_TAGS := $(if $(CONFIG),$(shell $(GO) run ./scripts/lambdatags $(CONFIG)))
# grpcnotrace keeps gRPC's golang.org/x/net/trace (and the html/template it brings, which
# stops the linker from dropping unused methods) out of builds that carry gRPC: 8-9 MB less.
LAMBDA_FLAGS := -trimpath -tags $(LAMBDA_TAGS)$(if $(CONFIG_TAGS),$(comma)$(CONFIG_TAGS)),grpcnotrace -ldflags="$(LDFLAGS)"
LAMBDA_DIR   := $(BUILD_DIR)/lambda
REMEDIATION_DIR := $(BUILD_DIR)/remediation
CONTROLPLANE_DIR := $(BUILD_DIR)/controlplane
# CONFIG=path/to/fngate.yaml packs a config file beside bootstrap (package, sam build).
CONFIG ?=

.PHONY: run test test-short lint fmt vet bench bench-sizes cost soak build build-cli build-lambda build-gcf package package-gcf build-GatewayFunction clean \
	build-remediation package-remediation build-RemediationFunction package-gcf-remediation \
	build-controlplane package-controlplane build-ControlPlaneFunction package-gcf-controlplane

# make run says what a first build downloads and how long it takes, then serves. VERTEX=auto
# builds the Vertex AI provider in when GOOGLE_CLOUD_PROJECT is set or its SDK is already in
# the module cache (VERTEX=1 always, VERTEX=0 never): see scripts/run-local.sh.
VERTEX ?= auto
run:
	@GO="$(GO)" BUILD_DIR="$(BUILD_DIR)" VERTEX="$(VERTEX)" ./scripts/run-local.sh $(ARGS)

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

test-short:
	$(GO) test -count=1 ./...

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags lambda.norpc,vertex ./functions/lambda
	$(GO) vet -tags lambda.norpc,otel ./functions/lambda
	$(GO) vet -tags lambda.norpc,mcp ./functions/lambda
	$(GO) vet -tags lambda.norpc,bedrockguard ./functions/lambda
	@if command -v cfn-lint >/dev/null 2>&1; then cfn-lint template.yaml; else echo "lint: cfn-lint not installed, template.yaml not linted"; fi
	@if command -v terraform >/dev/null 2>&1; then TF_CLI_CONFIG_FILE=/dev/null terraform fmt -check -recursive infra/terraform; else echo "lint: terraform not installed, infra/terraform not format-checked"; fi

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# make build: the binaries for this machine, in $(BUILD_DIR)/bin. The functions' builds are
# build-lambda, build-remediation and build-gcf (another platform, their own flags).
build: build-cli

# The operator's command, fngate (docs/cli.md), and its old name fngate-remediate (one more
# release). `fngate version` names the commit it was built from (unless -buildvcs=false).
build-cli:
	@mkdir -p $(BUILD_DIR)/bin
	$(GO) build -trimpath -ldflags="$(LDFLAGS)" -o $(BUILD_DIR)/bin/ ./events/cmd/fngate ./events/cmd/fngate-remediate

# The Lambda bootstrap for provided.al2023 on arm64.
build-lambda:
	@mkdir -p $(LAMBDA_DIR)
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(LAMBDA_DIR)/bootstrap ./functions/lambda

# The deployment zip for Terraform or the console: bootstrap at the root, fngate.yaml when
# CONFIG is set. Fixed timestamps make an unchanged build give an identical zip (and hash).
package: build-lambda
	@rm -f $(LAMBDA_DIR)/fngate.yaml $(BUILD_DIR)/gateway.zip
	$(if $(CONFIG),cp $(CONFIG) $(LAMBDA_DIR)/fngate.yaml)
	touch -t 202001010000 $(LAMBDA_DIR)/bootstrap $(if $(CONFIG),$(LAMBDA_DIR)/fngate.yaml)
	cd $(LAMBDA_DIR) && zip -qX9 ../gateway.zip bootstrap $(if $(CONFIG),fngate.yaml)
	@ls -l $(LAMBDA_DIR)/bootstrap $(BUILD_DIR)/gateway.zip

# sam build (template.yaml, BuildMethod makefile) runs this with ARTIFACTS_DIR set.
build-GatewayFunction: build-lambda
	@test -n "$(ARTIFACTS_DIR)" || { echo "ARTIFACTS_DIR is not set: this target is run by sam build"; exit 1; }
	cp $(LAMBDA_DIR)/bootstrap $(ARTIFACTS_DIR)/bootstrap
	$(if $(CONFIG),cp $(CONFIG) $(ARTIFACTS_DIR)/fngate.yaml)

# The self-repair function (events/eventbridge) for provided.al2023 on arm64, same flags.
build-remediation:
	@mkdir -p $(REMEDIATION_DIR)
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(REMEDIATION_DIR)/bootstrap ./events/eventbridge

# Its zip for Terraform (remediation_package_zip): bootstrap at the root, reproducible like
# `make package`. CONFIG=path packs the gateway's config beside it too: the function reads it
# for which routes run where (a provider incident cools the routes in its region).
package-remediation: build-remediation
	@rm -f $(REMEDIATION_DIR)/fngate.yaml $(BUILD_DIR)/remediation.zip
	$(if $(CONFIG),cp $(CONFIG) $(REMEDIATION_DIR)/fngate.yaml)
	touch -t 202001010000 $(REMEDIATION_DIR)/bootstrap $(if $(CONFIG),$(REMEDIATION_DIR)/fngate.yaml)
	cd $(REMEDIATION_DIR) && zip -qX9 ../remediation.zip bootstrap $(if $(CONFIG),fngate.yaml)
	@ls -l $(REMEDIATION_DIR)/bootstrap $(BUILD_DIR)/remediation.zip

# sam build runs this for RemediationFunction with ARTIFACTS_DIR set (and CONFIG, as for the
# gateway).
build-RemediationFunction: build-remediation
	@test -n "$(ARTIFACTS_DIR)" || { echo "ARTIFACTS_DIR is not set: this target is run by sam build"; exit 1; }
	cp $(REMEDIATION_DIR)/bootstrap $(ARTIFACTS_DIR)/bootstrap
	$(if $(CONFIG),cp $(CONFIG) $(ARTIFACTS_DIR)/fngate.yaml)

# The control-plane function (the admin API and the console, functions/controlplane/lambda)
# for provided.al2023 on arm64, same flags: a binary of its own, so the gateway's carries none
# of it.
build-controlplane:
	@mkdir -p $(CONTROLPLANE_DIR)
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(CONTROLPLANE_DIR)/bootstrap ./functions/controlplane/lambda

# Its zip for Terraform (control_plane_package_zip), reproducible like `make package`.
# CONFIG=path packs the gateway's config beside it: the control plane reads the same config
# (its admin section, the keys in config, the models a key may be given).
package-controlplane: build-controlplane
	@rm -f $(CONTROLPLANE_DIR)/fngate.yaml $(BUILD_DIR)/controlplane.zip
	$(if $(CONFIG),cp $(CONFIG) $(CONTROLPLANE_DIR)/fngate.yaml)
	touch -t 202001010000 $(CONTROLPLANE_DIR)/bootstrap $(if $(CONFIG),$(CONTROLPLANE_DIR)/fngate.yaml)
	cd $(CONTROLPLANE_DIR) && zip -qX9 ../controlplane.zip bootstrap $(if $(CONFIG),fngate.yaml)
	@ls -l $(CONTROLPLANE_DIR)/bootstrap $(BUILD_DIR)/controlplane.zip

# sam build runs this for ControlPlaneFunction with ARTIFACTS_DIR set (and CONFIG, as for the
# gateway).
build-ControlPlaneFunction: build-controlplane
	@test -n "$(ARTIFACTS_DIR)" || { echo "ARTIFACTS_DIR is not set: this target is run by sam build"; exit 1; }
	cp $(CONTROLPLANE_DIR)/bootstrap $(ARTIFACTS_DIR)/bootstrap
	$(if $(CONFIG),cp $(CONFIG) $(ARTIFACTS_DIR)/fngate.yaml)

# The Cloud Functions runner for local runs (Cloud Build compiles its own from the upload).
build-gcf:
	@mkdir -p $(BUILD_DIR)/gcf
	$(GO) build -trimpath -ldflags="$(LDFLAGS)" -o $(BUILD_DIR)/gcf/fngate-gcf ./functions/gcf/cmd

# The Cloud Functions source upload (see functions/gcf/gcfsource for its layout).
package-gcf:
	$(GO) run ./functions/gcf/gcfsource -out $(BUILD_DIR)/gcf-source.zip

# The remediation function's upload (root package imports events/eventarc).
package-gcf-remediation:
	$(GO) run ./functions/gcf/gcfsource -function remediation -out $(BUILD_DIR)/gcf-remediation-source.zip

# The control-plane function's upload (root package imports functions/controlplane/gcf).
package-gcf-controlplane:
	$(GO) run ./functions/gcf/gcfsource -function controlplane -out $(BUILD_DIR)/gcf-controlplane-source.zip

clean:
	rm -rf $(BUILD_DIR)

# Side-by-side latency, CPU and memory figures (fake upstream, gateway, bare reverse proxy).
# BENCH_ARGS="-baseline main -only stream -cpuprofile /tmp/prof": the gateway at main beside this
# checkout's, only the scenarios matching "stream", a CPU profile of each (see scripts/bench).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms ./core/openai/ ./core/providers/openaicompat/ ./core/providers/anthropic/ ./core/gateway/
	$(GO) run ./scripts/bench $(BENCH_ARGS)

# The gateway under the CPU share of each Lambda memory size and Cloud Functions vCPU setting (a
# cgroup CPU quota: needs root here), beside a bare reverse proxy under the same quota; writes the
# table to $(BUILD_DIR)/bench-sizes.md and the figures `fngate cost` embeds to core/cost/measured.json
# (about 25 minutes). SIZES_ARGS="-only 'Lambda 128'" for one size, -quick for a smoke run.
bench-sizes:
	mkdir -p $(BUILD_DIR)
	$(GO) run ./scripts/bench -sizes -rounds 3 -phase 2s -out $(BUILD_DIR)/bench-sizes.md -json core/cost/measured.json $(SIZES_ARGS)

# What the gateway costs per million requests (docs/cost.md); COST_ARGS="-requests 5000000".
cost:
	$(GO) run ./events/cmd/fngate cost $(COST_ARGS)

# Mixed load with injected faults; fails on unexpected outcomes or growth. SOAK_ARGS=-duration 30s
soak:
	$(GO) run ./scripts/soak $(SOAK_ARGS)

# patchkit — see README.md. `make demo` and `make test` prove it on a fresh machine.
GO      ?= go
BIN     ?= bin/patchkit
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/patchkit/patchkit/internal/cmd/root.Version=$(VERSION)
# Packages whose tests run in `make test`.
PKGS    ?= ./...
# mikefarah yq, the oracle of the stamp tests (hack/install-deps.sh installs it).
export PATCHKIT_YQ ?= $(CURDIR)/bin/tools/yq
# Benchmarks: which and how long (see docs/benchmarks.md).
BENCH      ?= .
BENCHTIME  ?= 3x
BENCHCOUNT ?= 1

.PHONY: all bin build test deps bats demo bench bench-check lint docs fmt clean

all: bin

## bin: build bin/patchkit, static (CGO_ENABLED=0): without libc and the
## dynamic loader every command's peak memory is 1.4 MiB lower (see
## docs/benchmarks.md, "the process floor"). CGO_ENABLED=1 builds the
## cgo binary (name service switch lookups for hosts and users).
CGO_ENABLED ?= 0
bin:
	CGO_ENABLED=$(CGO_ENABLED) $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/patchkit

## build: bin/patchkit, then every image unit. The `make image IMAGE=<name>`
## lines below are the one list of units: hack/build-matrix.sh and
## `patchkit verify` read them.
build: bin
	$(MAKE) image IMAGE=kubeovn

IMAGE          ?=
PUSH           ?= $(if $(REGISTRY),1,0)
PATCHKIT_FLAGS ?=
.PHONY: image
## image: gate, build, push (PUSH=1|true|yes, to $$REGISTRY) and stamp IMAGE; IMAGE_TAG overrides the tag.
## PUSH empty, 0 or anything else: no push (the image goes to _output/IMAGE/oci).
image: bin
	@test -n "$(IMAGE)" || { echo "usage: make image IMAGE=<name> [REGISTRY=...] [IMAGE_TAG=...] [PUSH=0|1]" >&2; exit 2; }
	$(BIN) $(PATCHKIT_FLAGS) build $(IMAGE) $(if $(filter 1 true yes,$(PUSH)),--push) --stamp \
	  $(if $(REGISTRY),--registry $(REGISTRY)) $(if $(IMAGE_TAG),--tag $(IMAGE_TAG))

## deps: the system tools the tests use (hack/install-deps.sh has the list):
## installed when missing and run as root with apt-get, else named, with the
## command that installs them.
deps:
	@hack/install-deps.sh

## test: vet, every Go test (parity, hostile, upstream, cmd), bench-check, then the bats suite.
test: deps bin
	$(GO) vet ./...
	$(GO) test -count=1 $(PKGS)
	$(MAKE) bench-check
	$(MAKE) bats

# bats-core and its helpers, pinned in tests/bats/package-lock.json.
BATS := tests/bats/node_modules/bats/bin/bats
$(BATS): tests/bats/package.json tests/bats/package-lock.json
	cd tests/bats && npm ci --no-audit --no-fund --loglevel=error
	touch $@

## bats: the command-line suite in tests/bats, against bin/patchkit.
bats: deps bin $(BATS)
	$(BATS) tests/bats

## demo: run the pipeline on the embedded example, offline.
demo: bin
	./examples/demo.sh $(BIN)

## bench: patchkit beside the git CLI on generated upstreams.
bench:
	$(GO) test -run='^$$' -bench='$(BENCH)' -benchtime=$(BENCHTIME) -count=$(BENCHCOUNT) -benchmem ./bench/...

## bench-check: the benchmarks' memory bounds (100 MiB cold, 200 MiB on a
## kube-sized unit and over a 12-unit monorepo, 3x a large patch) and their
## verdict agreement with the git CLI, once each on -short inputs; nothing
## timed (make test runs it).
BENCHCHECK ?= ^(BenchmarkColdApplyCheck|BenchmarkApplyBigPatch|BenchmarkObsoleteKubeOVN|BenchmarkObsoleteWarm|BenchmarkMemoryKubeOVN|BenchmarkMonorepo)$$
bench-check: deps
	$(GO) test -short -count=1 -run='^$$' -bench='$(BENCHCHECK)' -benchtime=1x ./bench/...

## lint: gofmt, go vet, actionlint on .github/workflows, and a CLI reference
## in docs/cli that matches the code.
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
lint:
	$(GO) run $(ACTIONLINT)
	@out=$$(gofmt -l cmd internal bench hack 2>/dev/null); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@tmp=$$(mktemp -d); $(GO) run ./hack/gendocs $$tmp/cli && diff -ru docs/cli $$tmp/cli; rc=$$?; rm -rf $$tmp; \
	  if [ $$rc -ne 0 ]; then echo "docs/cli is stale: run make docs"; exit 1; fi

## docs: regenerate the CLI reference in docs/cli from the cobra commands.
docs:
	$(GO) run ./hack/gendocs docs/cli

fmt:
	gofmt -w cmd internal bench hack

clean:
	rm -rf bin _output

# patchkit — see README.md. `make demo` and `make test` prove it on a fresh machine.
GO      ?= go
BIN     ?= bin/patchkit
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/patchkit/patchkit/internal/cmd/root.Version=$(VERSION)
# Packages whose tests run in `make test`.
PKGS    ?= ./...
# Benchmarks: which and how long (see docs/benchmarks.md).
BENCH      ?= .
BENCHTIME  ?= 3x
BENCHCOUNT ?= 1

.PHONY: all build test demo bench lint docs fmt clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/patchkit

## test: vet, then every Go test (parity, hostile, upstream, cmd).
test: build
	$(GO) vet ./...
	$(GO) test -count=1 $(PKGS)

## demo: run the pipeline on the embedded example, offline.
demo: build
	./examples/demo.sh $(BIN)

## bench: patchkit beside the git CLI on generated upstreams.
bench:
	$(GO) test -run='^$$' -bench='$(BENCH)' -benchtime=$(BENCHTIME) -count=$(BENCHCOUNT) -benchmem ./bench/...

## lint: gofmt, go vet, and a CLI reference in docs/cli that matches the code.
lint:
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

# The two commands a newcomer needs:
#   make run    serve the example server on stdio (go run ./examples/showcase)
#   make test   run every check CI runs (installs the Node clients first)
.PHONY: run test deps check-generated lint unit e2e apps cluster conformance conformance-client load bench-smoke bench mutate

GO ?= go

run:
	$(GO) run ./examples/showcase

test: deps lint check-generated bench-smoke unit conformance conformance-client e2e apps cluster

# The official JSON-Schema-Test-Suite that adapters/jsonschema's fast pre-check
# is tested against comes pinned inside a Go module (cuelang.org/go vendors it;
# the version and hash are in adapters/jsonschema/suite_test.go, keep them in
# step): downloaded into the module cache, go.mod untouched.
SCHEMA_SUITE_MODULE = cuelang.org/go@v0.17.1

deps:
	cd test/e2e && npm ci --no-audit --no-fund --loglevel=error
	cd test/conformance && npm ci --no-audit --no-fund --loglevel=error
	cd test/apps && npm ci --no-audit --no-fund --loglevel=error
	cd adapters/oauth/testdata/as && npm ci --no-audit --no-fund --loglevel=error
	$(GO) mod download $(SCHEMA_SUITE_MODULE)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd test/bench && $(GO) vet ./...
	cd otel && $(GO) vet ./...

# Generated code (port mocks, mcpgen tool registrations) must be up to date.
check-generated:
	$(GO) generate ./...
	@if [ -n "$$(git status --porcelain -- '*.go')" ]; then git status --porcelain -- '*.go'; git diff; echo "generated files are stale: run go generate ./..."; exit 1; fi

unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /test/e2e -e /test/cluster -e /test/apps -e /test/hostile)
	# The hostile clients attack a showcase process built without the race
	# detector; under -race their floods ran 7 times slower and were cut
	# short by the attack's 2-minute deadline, so they run without it.
	$(GO) test -count=1 ./test/hostile/
	cd test/bench && $(GO) test -race -count=1 -run '^Test' ./...
	cd otel && $(GO) test -race -count=1 ./...
	# Allocation counts are asserted without the race detector, which changes them.
	$(GO) test -count=1 -run 'Alloc' ./adapters/... ./app/ ./domain/

e2e:
	E2E_REQUIRED=1 $(GO) test -race -count=1 -v ./test/e2e/

# The showcase's MCP Apps view in headless Chromium under an ext-apps host
# page (test/apps/README.md; needs chromium).
apps:
	E2E_REQUIRED=1 $(GO) test -race -count=1 -v ./test/apps/

# Three showcase instances sharing one Redis behind haproxy and an
# in-process round-robin proxy (test/cluster/README.md; reuses test/e2e's
# Node clients). The instances are separate processes built without the
# race detector: -race covers the test binary (clients, proxy, harness).
cluster:
	E2E_REQUIRED=1 $(GO) test -race -count=1 -v ./test/cluster/

# The official conformance suite (0.1.16; 0.2.0-alpha.12 at 2025-11-25 and
# 2026-07-28) against test/conformance over Streamable HTTP.
conformance:
	bash test/conformance/run.sh

# The suite's client scenarios (0.2.0-alpha.12, --requirements 2025-11-25
# and 2026-07-28, no baseline) against test/conformance/client, the client
# built on package client and client/auth.
conformance-client:
	bash test/conformance/run-client.sh

# The load test at full size (CI runs it small, with -race, in unit).
load:
	LOAD_SESSIONS=200 LOAD_CALLS=50 $(GO) test -count=1 -v -run Load ./test/load/

# Every benchmark once, so the suite cannot rot; real figures: make bench.
bench-smoke:
	cd test/bench && $(GO) test -run '^$$' -bench . -benchtime 1x ./...
	$(GO) test -run '^$$' -bench . -benchtime 1x ./test/cluster/

bench:
	cd test/bench && $(GO) test -run '^$$' -bench . -benchmem -count 5 ./...
	$(GO) test -run '^$$' -bench . -benchtime 2s ./test/cluster/

# A round of mutation testing (not part of make test: minutes per package):
# plants one small fault at a time in PKG's non-test files and lists the
# faults its own tests miss. make mutate PKG=app N=40 (TESTS=dir,dir: judge by those packages' tests instead)
PKG ?= app
N ?= 40
mutate:
	$(GO) run ./internal/mutate -pkg $(PKG) -n $(N) -seed 1 $(if $(TESTS),-tests $(TESTS))

# The two commands a newcomer needs:
#   make run    serve the example server on stdio (go run ./examples/showcase)
#   make test   run every check CI runs (installs the Node clients first)
.PHONY: run test deps check-generated lint unit e2e bench-smoke bench

GO ?= go

run:
	$(GO) run ./examples/showcase

test: deps lint check-generated bench-smoke unit e2e

deps:
	cd test/e2e && npm ci --no-audit --no-fund --loglevel=error

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd test/bench && $(GO) vet ./...

# Generated mocks must match the ports.
check-generated:
	$(GO) generate ./ports/...
	@git diff --exit-code -- ports/mocks || { echo "ports/mocks is stale: run go generate ./ports/..."; exit 1; }

unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /test/e2e)

e2e:
	E2E_REQUIRED=1 $(GO) test -race -count=1 -v ./test/e2e/

# Every benchmark once, so the suite cannot rot; real figures: make bench.
bench-smoke:
	cd test/bench && $(GO) test -run '^$$' -bench . -benchtime 1x ./...

bench:
	cd test/bench && $(GO) test -run '^$$' -bench . -benchmem -count 5 ./...

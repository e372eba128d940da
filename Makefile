# Hangar — `make help` lists the targets.
GO ?= go
BIN := bin/hangar

.PHONY: help build test quickstart bench vet fuzz faults clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/hangar
	$(GO) build -o $(BIN) ./cmd/hangar

quickstart: build ## run the sample training job on the local target and show its results
	bash scripts/quickstart.sh

test: ## the whole test suite, as CI runs it (installs what the tests need first)
	bash scripts/test.sh

vet: ## go vet
	$(GO) vet ./...

FUZZTIME ?= 5s
fuzz: ## run every fuzz target briefly (FUZZTIME each, default 5s)
	bash scripts/fuzz.sh $(FUZZTIME)

faults: ## run the fault suite and print RELIABILITY.md's fault matrix
	$(GO) run ./cmd/hangar-faults

bench: build ## run the benchmarks recorded in BENCHMARKS.md
	$(GO) run ./cmd/hangar-bench -hangar $(BIN)

clean: ## remove build outputs
	rm -rf bin quickstart-out

# torchmem — the two commands a fresh machine needs are `make run` and `make test`.
SHELL   := /bin/bash
GO      ?= $(shell command -v go || echo /usr/local/go/bin/go)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/torchmem/torchmem/internal/cli.Version=$(VERSION)
BIN     := ./torchmem
PYTHON  ?= /usr/bin/python3
# Where the demo keeps its history and report (override: make run DEMO_DIR=...).
DEMO_DIR ?= $(CURDIR)/build/demo

.PHONY: build run deps test-deps test test-race bench reliability fuzz glibc-check image deploy-check clean

## build: the release binary (no cgo: runs on glibc 2.17 / CentOS 7 and later)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/torchmem

## deps: what the demo and the tests need on Debian/Ubuntu (PyTorch CPU from the distribution)
deps:
	@bash scripts/install-deps.sh

## run: the whole set-up, then the main job: a small training run under `torchmem run`,
## then a second one that leaks host memory step by step under --memory-max: torchmem
## projects the OOM, warns, stops it before the kernel's OOM killer (examples/leak-policy.yaml)
## and the post-mortem and report say it was a leak, not a peak (about 2 minutes in all)
run: deps build
	@mkdir -p $(DEMO_DIR)
	$(BIN) run --db $(DEMO_DIR)/torchmem.db --memory-max 2G -- $(PYTHON) examples/train.py --epochs 2
	$(BIN) report last --db $(DEMO_DIR)/torchmem.db -o $(DEMO_DIR)/report.html
	@echo; echo "== 2. the same job with a leak (8 MiB kept per step) under --memory-max 2G =="
	@$(BIN) run --db $(DEMO_DIR)/torchmem.db --memory-max 2G --policy examples/leak-policy.yaml \
		-- $(PYTHON) examples/train.py --epochs 30 --grow-mb 8 || \
		echo "(exit status $$?: expected, torchmem stopped the leaking job before the OOM killer)"
	$(BIN) runs --db $(DEMO_DIR)/torchmem.db
	$(BIN) report last --db $(DEMO_DIR)/torchmem.db -o $(DEMO_DIR)/report-leak.html
	@echo "HTML reports: $(DEMO_DIR)/report.html (normal run), $(DEMO_DIR)/report-leak.html (the leak)"

## test: the whole suite (needs root for the cgroup and OOM tests; skips them otherwise);
## internal/buildcheck runs scripts/check-glibc.sh on ./cmd/torchmem within it
## test-deps: deps, and Debian 13's torch 2.6 in .cache/torch2-root (run from this host, no
## chroot) for the tracer's torch-2 tests; made once (~2-8 min, 1.4 GB), then only checked
test-deps: deps
	@if [ "$$(id -u)" = 0 ]; then bash scripts/torch2-root.sh .cache/torch2-root; \
	else echo "test-deps: not root, so no torch 2.6 root (debootstrap needs root): the torch-2 tests skip"; fi

# (-timeout is per package: internal/tracerun traces training scripts under
# two PyTorch builds, about 35 minutes alone on a 2-core VM)
test: test-deps
	CGO_ENABLED=0 $(GO) build ./...
	@unformatted=$$($(dir $(GO))gofmt -l cmd internal bench 2>/dev/null || gofmt -l cmd internal bench); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 60m ./...

## test-race: the race detector (needs cgo) over the concurrent packages
test-race:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 15m ./internal/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...

## reliability: the TestReliability... checks (as root), as a table in bench/results/reliability.md
reliability:
	GO=$(GO) bash bench/reliability.sh

## fuzz: every go test -fuzz target, one after another, FUZZTIME each (10s: about 10 minutes
## in all; make fuzz FUZZTIME=1m searches longer). A failing input lands in its package's testdata/fuzz.
FUZZTIME ?= 10s
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

glibc-check: build
	bash scripts/check-glibc.sh $(BIN)

## image: the container image without a Docker daemon (go-containerregistry): the CGO-free
## binary and the glibc loader it links (for NVML), on no base image, as an OCI layout
## tarball; push with skopeo copy oci-archive:$(IMAGE) docker://REGISTRY/torchmem:TAG
IMAGE ?= dist/torchmem-oci.tar
image: build
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || echo 0)} \
	$(GO) run ./packaging/ociimage -binary $(BIN) -version $(VERSION) \
		-revision $$(git rev-parse HEAD 2>/dev/null) -out $(IMAGE)

## deploy-check: the alert rules (promtool test rules), the Helm chart (helm lint, helm
## template decoded into the Kubernetes API types) and the kustomize base (kustomize build,
## decoded likewise); helm and kustomize are built from their modules when not on PATH
HELM_VERSION ?= v3.22.0
KUSTOMIZE_VERSION ?= v5.7.1
HELM ?= $(shell command -v helm || echo $(CURDIR)/build/tools/helm)
KUSTOMIZE ?= $(shell command -v kustomize || echo $(CURDIR)/build/tools/kustomize)
deploy-check:
	@test -x $(HELM) || GOBIN=$(CURDIR)/build/tools CGO_ENABLED=0 $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	@test -x $(KUSTOMIZE) || GOBIN=$(CURDIR)/build/tools CGO_ENABLED=0 $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	promtool check rules deploy/prometheus/alerts.yml
	promtool test rules deploy/prometheus/alerts_test.yml
	$(HELM) lint --strict deploy/helm/torchmem
	$(KUSTOMIZE) build deploy/kubernetes >/dev/null
	HELM=$(HELM) KUSTOMIZE=$(KUSTOMIZE) $(GO) test -count=1 ./deploy/

clean:
	rm -rf $(BIN) build dist

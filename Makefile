# Idempotency Lab: the one build entry point.
#
#   make serve   install what is missing, then serve the lesson on http://127.0.0.1:8080 (live reload)
#   make test    install what is missing, then run every check (what CI runs: .ci/run)
#   make build   release build into dist/ (installs nothing: says what is missing)
#   make stores  replay the statements the model's stores ran on a real PostgreSQL and Redis
#                (a subset: make stores ONLY='concurrent-duplicates +atomic-claim seed=3' REPEAT=20)
#   make bench   sizes of dist/ and time to interactive in headless Chromium
#   make scorm   release build as a SCORM 1.2 package: target/scorm/idempotency-lab.zip
#   make setup   only install what is missing (scripts/setup.sh)

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Tools: cargo-installed trunk and wasm-bindgen, and wasm-opt from the npm package binaryen@132.
export PATH := $(CURDIR)/e2e/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)

WASM_TARGET := wasm32-unknown-unknown
# `test-e2e` runs two of these files at a time (Node sorts them by name), each in its own
# Node process with its own Chromium, one page in front in each (two pages in one
# browser ran slower: d22bf79).
E2E_TESTS   := e2e/dist.test.mjs e2e/page.test.mjs e2e/lab.test.mjs e2e/lesson.test.mjs e2e/front.test.mjs e2e/robust.test.mjs e2e/a11y.test.mjs e2e/scorm.test.mjs e2e/paint.test.mjs e2e/questions.test.mjs e2e/explore.test.mjs e2e/policy.test.mjs e2e/layout.test.mjs

# Never run these steps in parallel, even under `make -j`.
.NOTPARALLEL:

.PHONY: help setup tools serve build test stores bench scorm clean \
        test-fmt test-clippy test-clippy-wasm test-rust test-stores test-build test-e2e

help:
	@sed -n '3,10p' Makefile | sed 's/^# \{0,1\}//'

setup:
	@bash scripts/setup.sh

# The debug build goes to target/serve, never to dist/: dist/ only ever holds a release
# build (a debug build's inline reload script breaks the strict CSP where dist/ is copied).
# What `make build` needs, checked without installing anything.
tools:
	@for t in trunk wasm-bindgen wasm-opt; do \
	  command -v $$t >/dev/null || { echo "make build: $$t is missing; 'make setup' installs it" >&2; exit 1; }; \
	done

serve: setup
	trunk serve --offline --locked --dist target/serve

build: tools
	trunk build --release --offline --locked

# The steps run in this order and stop at the first failure.
test: setup
	@$(MAKE) --no-print-directory test-fmt test-clippy test-clippy-wasm test-rust test-stores test-build test-e2e
	@echo "make test: all checks passed"

test-fmt:
	cargo fmt --all -- --check

test-clippy:
	cargo clippy --locked --workspace --all-targets -- -D warnings

test-clippy-wasm:
	cargo clippy --locked -p idempotency-lab -p explore-worker --target $(WASM_TARGET) -- -D warnings

test-rust:
	cargo test --locked --workspace

# The differential test of the stores: the model's runs dumped as JSON (stores/, a crate
# of its own), replayed by stores/replay.py on a private PostgreSQL cluster and Redis it
# starts on 127.0.0.1 and stops on exit. Fails on any mismatch or a server that cannot start.
stores: setup
	@$(MAKE) --no-print-directory test-stores

# ONLY: the runs whose name starts with it, each REPEAT times (a race Postgres's scheduler
# decides may show on some repeats only).
test-stores:
	@mkdir -p target/stores
	cargo build --locked -q -p idem-stores
	target/debug/idem-stores $(if $(ONLY),--only '$(ONLY)' --repeat $(or $(REPEAT),1)) > target/stores/runs.jsonl
	/usr/bin/python3 stores/replay.py target/stores/runs.jsonl target/debug/idem-stores

test-build:
	trunk build --release --offline --locked

test-e2e:
	node --test --test-reporter=tap --test-concurrency=2 $(E2E_TESTS)

bench: setup build
	node scripts/bench.mjs

# dist/ and imsmanifest.xml, zipped (scripts/scorm.mjs; the SCO's run-time side is scorm.js).
scorm: build
	node scripts/scorm.mjs

clean:
	cargo clean
	rm -rf dist e2e/artifacts

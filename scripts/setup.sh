#!/usr/bin/env bash
# Installs what the build and the tests need, skipping whatever is already present.
# Safe to run any number of times; `make serve` and `make test` run it first (`make build`
# installs nothing: it says what is missing).
#
#   Rust 1.95.0        the release rust-toolchain.toml pins (the stable toolchain, named so)
#   wasm32 target      rustup target add wasm32-unknown-unknown
#   trunk 0.21.14      cargo install trunk --version 0.21.14 --locked --no-default-features
#   wasm-bindgen-cli   cargo install wasm-bindgen-cli --version <wasm-bindgen in Cargo.lock>
#                      --no-default-features --bin wasm-bindgen
#                      (no --locked: one of its pinned dependencies is not on the registry)
#                      Both compile quickly (`quick_install`): no TLS, no LTO, opt-level 1.
#   chromium + a font  apt-get install chromium fonts-dejavu-core (and zip, unzip: make scorm, its test)
#   the real stores    apt-get install postgresql redis-server python3-psycopg2 python3-redis
#                      (make stores replays the model's statements on them)
#   e2e/node_modules   npm ci (playwright-core, binaryen@132 = wasm-opt, terser, csso, axe-core,
#                      scorm-again = the SCORM 1.2 LMS of e2e/scorm.test.mjs)
#
# Versions that work on these machines, and those that do not: ARCHITECTURE.md, Dependencies.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$ROOT/e2e/node_modules/.bin:$PATH"

TRUNK_VERSION="0.21.14"
LOG_DIR="$ROOT/target/setup-logs"
installed=()

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# Runs a long install quietly; on failure shows the end of its log.
run_logged() {
  local name="$1"; shift
  mkdir -p "$LOG_DIR"
  local log="$LOG_DIR/$name.log"
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    die "$name failed (full log: $log)"
  fi
}

# `cargo install`, compiled for a short build rather than a fast binary. The tools run for
# seconds per build, while their release profiles (trunk's: fat LTO, one codegen unit) cost
# most of a fresh machine's setup. Without default features they carry no TLS stack: they
# never download (trunk runs --offline and finds the tools on PATH).
quick_install() {
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_DEBUG=false \
    cargo install --no-default-features "$@"
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else die "need root to run: $*"
  fi
}

apt_install() {
  say "installing Debian packages: $* (apt-get)"
  run_logged apt-update as_root apt-get update
  run_logged "apt-install" as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y "$@"
}

# --- Rust: the pinned toolchain of rust-toolchain.toml, and its wasm target -----------
command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust with rustup first"
# rustup would try to download a toolchain named in rust-toolchain.toml that it lacks, and
# only the package registries are reachable here. When the machine's stable toolchain is
# that very release, it is the pinned toolchain: name it so (a link, as rustup would lay it).
PINNED="$(sed -n 's/^channel = "\(.*\)"$/\1/p' rust-toolchain.toml)"
[ -n "$PINNED" ] || die "rust-toolchain.toml names no channel"
if ! RUSTUP_TOOLCHAIN=stable rustup toolchain list | grep -q "^$PINNED-"; then
  stable="$(RUSTUP_TOOLCHAIN=stable rustc --version 2>/dev/null | cut -d' ' -f2)"
  host="$(RUSTUP_TOOLCHAIN=stable rustc -vV | sed -n 's/^host: //p')"
  home="${RUSTUP_HOME:-$HOME/.rustup}"
  [ "$stable" = "$PINNED" ] && [ -d "$home/toolchains/stable-$host" ] ||
    die "Rust $PINNED (rust-toolchain.toml) is not installed and the stable toolchain is ${stable:-missing}: install it with 'rustup toolchain install $PINNED'"
  say "naming the stable toolchain (Rust $PINNED) $PINNED-$host, as rust-toolchain.toml pins it"
  ln -s "$home/toolchains/stable-$host" "$home/toolchains/$PINNED-$host"
  installed+=("Rust $PINNED")
fi
# (Read the list first: `rustup … | grep -q` can fail under pipefail when grep exits early.)
targets="$(rustup target list --installed)"
if ! grep -qx 'wasm32-unknown-unknown' <<<"$targets"; then
  say "adding rustup target wasm32-unknown-unknown"
  run_logged rustup-target rustup target add wasm32-unknown-unknown
  installed+=("wasm32 target")
fi

# --- Chromium, Node, a font, zip and unzip (Debian packages) -------------------------------------
debs=()
[ -x /usr/bin/chromium ] || debs+=(chromium)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || debs+=(fonts-dejavu-core)
command -v zip >/dev/null 2>&1 || debs+=(zip)
command -v unzip >/dev/null 2>&1 || debs+=(unzip)
command -v node >/dev/null 2>&1 || debs+=(nodejs)
command -v npm >/dev/null 2>&1 || debs+=(npm)
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || debs+=(postgresql)
[ -x /usr/bin/redis-server ] || debs+=(redis-server)
/usr/bin/python3 -c 'import psycopg2' >/dev/null 2>&1 || debs+=(python3-psycopg2)
/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || debs+=(python3-redis)
# apt downloads while cargo compiles the tools below (the network and the two cores at once).
apt_pid=""
if [ "${#debs[@]}" -gt 0 ]; then
  apt_install "${debs[@]}" &
  apt_pid=$!
fi

# --- trunk ---------------------------------------------------------------------------
if [ "$(trunk --version 2>/dev/null || true)" != "trunk $TRUNK_VERSION" ]; then
  say "installing trunk $TRUNK_VERSION (cargo install, a few minutes; log: target/setup-logs/trunk.log)"
  run_logged trunk quick_install trunk --version "$TRUNK_VERSION" --locked --force
  installed+=("trunk $TRUNK_VERSION")
fi

# --- wasm-bindgen-cli: exactly the wasm-bindgen version of Cargo.lock ----------------
WB_VERSION="$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)"
[ -n "$WB_VERSION" ] || die "could not find the wasm-bindgen version in Cargo.lock"
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WB_VERSION" ]; then
  say "installing wasm-bindgen-cli $WB_VERSION (cargo install, a few minutes; log: target/setup-logs/wasm-bindgen.log)"
  run_logged wasm-bindgen quick_install wasm-bindgen-cli --version "$WB_VERSION" --bin wasm-bindgen --force
  installed+=("wasm-bindgen-cli $WB_VERSION")
fi

if [ -n "$apt_pid" ]; then
  wait "$apt_pid" || die "the Debian packages could not be installed (log: target/setup-logs/apt-install.log)"
  installed+=("${debs[*]}")
fi

# --- e2e npm packages, from the committed lockfile -------------------------------------
# npm ci when node_modules is missing or was installed from another package-lock.json.
LOCK_HASH="$(sha256sum e2e/package-lock.json | cut -d' ' -f1)"
STAMP="e2e/node_modules/.installed-from-lock"
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$LOCK_HASH" ]; then
  say "installing e2e npm packages (npm ci)"
  run_logged npm-ci npm ci --prefix e2e --no-audit --no-fund
  echo "$LOCK_HASH" >"$STAMP"
  installed+=("e2e/node_modules")
fi

# --- final check: every tool answers with the expected version -----------------------
[ "$(trunk --version)" = "trunk $TRUNK_VERSION" ] || die "trunk on PATH is not $TRUNK_VERSION"
[ "$(wasm-bindgen --version)" = "wasm-bindgen $WB_VERSION" ] || die "wasm-bindgen on PATH is not $WB_VERSION"
case "$(wasm-opt --version)" in
  *"version 132"*) ;;
  *) die "wasm-opt on PATH is not binaryen 132 (is e2e/node_modules/.bin first on PATH?)" ;;
esac

if [ "${#installed[@]}" -gt 0 ]; then
  say "installed: $(IFS=,; echo "${installed[*]}" | sed 's/,/, /g')"
else
  say "all tools present (trunk $TRUNK_VERSION, wasm-bindgen $WB_VERSION, wasm-opt 132, chromium, postgresql, redis-server, e2e packages)"
fi

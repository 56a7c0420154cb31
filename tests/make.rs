//! The build's own rules, read from its files: `make test` (what CI runs) runs every
//! end-to-end test file (a file under `e2e/` that `E2E_TESTS` in the Makefile does not
//! name would never run), and the build is what `Cargo.toml` says it is.

use std::fs;

#[test]
fn make_test_runs_every_e2e_file() {
    let makefile = fs::read_to_string("Makefile").expect("Makefile");
    let listed: Vec<&str> = makefile
        .lines()
        .find_map(|l| l.strip_prefix("E2E_TESTS"))
        .and_then(|l| l.split_once(":="))
        .map(|(_, files)| files.split_whitespace().collect())
        .expect("E2E_TESTS := … in the Makefile");
    let mut files: Vec<String> = fs::read_dir("e2e")
        .expect("e2e/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".test.mjs"))
        .map(|n| format!("e2e/{n}"))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "{files:?}");
    for f in &files {
        assert!(
            listed.contains(&f.as_str()),
            "{f} is not in the Makefile's E2E_TESTS"
        );
    }
    for f in &listed {
        assert!(
            files.iter().any(|x| x == f),
            "E2E_TESTS names {f}, which does not exist"
        );
    }
}

/// `[patch.crates-io]` puts `patch/wasm-streams` (−7.4 KB gzip per page load) and
/// `patch/send-wrapper` (with `src/heap.rs`, −3.6 KB) in place of the registry's crates.
/// If a patch stopped applying (a version that no longer matches), cargo would only
/// warn, take the registry's crate and build a page that may still fit its budget: the
/// lock file is where that shows, as a registry source or an unused patch.
#[test]
fn the_crate_patches_apply() {
    let lock = fs::read_to_string("Cargo.lock").expect("Cargo.lock");
    assert!(
        !lock.contains("[[patch.unused]]"),
        "Cargo.lock lists an unused patch: {}",
        lock.split("[[patch.unused]]").nth(1).unwrap_or_default()
    );
    for name in ["wasm-streams", "send_wrapper"] {
        let packages: Vec<&str> = lock
            .split("[[package]]")
            .filter(|p| p.contains(&format!("\nname = \"{name}\"\n")))
            .collect();
        assert_eq!(packages.len(), 1, "one {name} in Cargo.lock");
        assert!(
            !packages[0].contains("\nsource = "),
            "{name} comes from {}, not from patch/",
            packages[0]
                .lines()
                .find(|l| l.starts_with("source"))
                .unwrap_or("?")
        );
    }
}

/// The toolchain is a release, not a channel that moves (`stable` took new clippy lints
/// into CI unasked), and it is the one `Cargo.toml` names as the crate's `rust-version`.
#[test]
fn the_toolchain_is_pinned() {
    let file = fs::read_to_string("rust-toolchain.toml").expect("rust-toolchain.toml");
    let channel = file
        .lines()
        .find_map(|l| l.strip_prefix("channel = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("channel = \"…\" in rust-toolchain.toml");
    let parts: Vec<&str> = channel.split('.').collect();
    assert!(
        parts.len() == 3 && parts.iter().all(|p| p.parse::<u32>().is_ok()),
        "rust-toolchain.toml's channel {channel:?} is not a release such as 1.95.0"
    );
    let manifest = fs::read_to_string("Cargo.toml").expect("Cargo.toml");
    assert!(
        manifest.contains(&format!(
            "rust-version = \"{}\"",
            &channel[..channel.rfind('.').unwrap()]
        )),
        "Cargo.toml's rust-version is not {channel}'s"
    );
}

/// Every cargo call of the build's own files keeps to `Cargo.lock` (`--locked`): a
/// dependency cannot move under CI. `cargo fmt` resolves nothing; `cargo install` is
/// setup's, with the reasons it gives.
#[test]
fn every_cargo_call_is_locked() {
    for file in ["Makefile", "scripts/bench.mjs"] {
        let text = fs::read_to_string(file).expect(file);
        for line in text
            .lines()
            .filter(|l| !l.trim_start().starts_with(['#', '/']))
        {
            let call = [
                "cargo clippy",
                "cargo test",
                "cargo build",
                "cargo run",
                "trunk build",
                "trunk serve",
                "'cargo', ['run'",
            ]
            .iter()
            .any(|c| line.contains(c));
            assert!(
                !call || line.contains("--locked"),
                "{file}: a cargo call without --locked: {line}"
            );
        }
    }
}

/// `make test` runs the differential test of the stores (`make stores`): the
/// model's statements replayed on a real PostgreSQL and Redis.
#[test]
fn make_test_runs_the_stores_differential() {
    let makefile = fs::read_to_string("Makefile").expect("Makefile");
    let steps = makefile
        .lines()
        .skip_while(|l| !l.starts_with("test:"))
        .nth(1)
        .expect("a recipe under test:");
    assert!(steps.contains(" test-stores "), "{steps}");
    let recipe: Vec<&str> = makefile
        .lines()
        .skip_while(|l| !l.starts_with("test-stores:"))
        .skip(1)
        .take_while(|l| l.starts_with('\t'))
        .collect();
    assert!(
        recipe.iter().any(|l| l.contains("stores/replay.py")),
        "{recipe:?}"
    );
}

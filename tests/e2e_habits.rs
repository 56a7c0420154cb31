//! The browser tests' habits (issue 27): they wait for what the page says, never
//! for the network to go quiet or for a fixed time. A page open waits for the
//! lab's own signals (`app-ready`, then the lab drawn whole: e2e/lesson-page.mjs
//! `waitUntilReady`); an absence is asserted after a positive signal, not after
//! a pause.

use std::fs;
use std::path::Path;

/// What the e2e files must not call: Playwright's waits for the network to go
/// quiet and for a fixed time.
const BANNED: [&str; 2] = ["networkidle", "waitForTimeout"];

#[test]
fn e2e_tests_never_wait_for_network_idle_or_a_fixed_time() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e");
    let mut files = 0;
    let mut found = Vec::new();
    for entry in fs::read_dir(&dir).expect("e2e/") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.ends_with(".mjs") {
            continue;
        }
        files += 1;
        let text = fs::read_to_string(&path).expect("readable");
        for (i, line) in text.lines().enumerate() {
            for word in BANNED {
                if line.contains(word) {
                    found.push(format!("e2e/{name}:{}: {word}", i + 1));
                }
            }
        }
    }
    assert!(
        files > 10,
        "only {files} e2e files: the test reads the wrong place"
    );
    assert!(
        found.is_empty(),
        "wait for a signal the page gives instead:\n{}",
        found.join("\n")
    );
}

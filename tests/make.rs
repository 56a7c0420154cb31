//! `make test` (what CI runs) runs every end-to-end test file: a file under
//! `e2e/` that `E2E_TESTS` in the Makefile does not name would never run.

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

//! The Rust side of the one conformance harness: finds every case folder (`tests/data/*-cases`,
//! or the folder `SPARSEKIT_TESTDATA` names) and every case in it, decodes tensors and numbers,
//! compares results with one infinity-aware `close`, and prints one line per folder plus the
//! closing `conformance: N passed, M failed`. The JS twin is `tests/support/cases.mjs`; both apply
//! the same file filter and the same comparison rule, so a new folder runs everywhere.
//!
//! Decoding is in `case_decode.rs`, the comparison rule in `case_compare.rs`; this file finds
//! the cases and drives them.
#![allow(dead_code)]

#[path = "case_compare.rs"]
mod compare;
#[path = "case_decode.rs"]
mod decode;

pub use compare::*;
pub use decode::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where the case folders live: `tests/data` of the repository, unless `SPARSEKIT_TESTDATA`
/// names another folder of the same layout (how the cases kept outside run against the core).
pub fn testdata() -> PathBuf {
    match std::env::var_os("SPARSEKIT_TESTDATA") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
    }
}

// ---------------------------------------------------------------------------------------------
// Discovery and the driver

pub enum Outcome {
    Pass,
    Fail(String),
}

/// Every case folder: each directory `*-cases` under the case root, sorted.
pub fn case_folders() -> Vec<PathBuf> {
    let root = testdata();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_dir() && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with("-cases")))
        .collect();
    dirs.sort();
    dirs
}

/// The file filter (the same as `isCaseFile` in cases.mjs): every `.json` file except `index.json`.
pub fn is_case_file(name: &str) -> bool {
    name.ends_with(".json") && name != "index.json"
}

/// The case files of a folder, sorted; they must be exactly the ids its `index.json` lists (a
/// stray or missing file is a fault of the folder, reported rather than skipped).
pub fn case_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_case_file))
        .collect();
    files.sort();
    files
}

fn index_ids(dir: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(dir.join("index.json")).ok()?;
    let idx: Value = serde_json::from_str(&text).ok()?;
    let mut ids: Vec<String> = idx.as_array()?.iter().filter_map(|e| e["id"].as_str().map(String::from)).collect();
    ids.sort();
    Some(ids)
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// Runs every case of every folder through `dispatch`, which returns `None` for an op it does not
/// know (counted as a failure, never skipped). Prints the per-folder lines, the failures and the
/// closing line; returns `(passed, failed)`.
pub fn run_all(dispatch: impl Fn(&Value) -> Option<Outcome>) -> (usize, usize) {
    let folders = case_folders();
    assert!(!folders.is_empty(), "no *-cases folder in {}", testdata().display());
    let (mut passed, mut failed) = (0, 0);
    let mut failures = Vec::new();
    for dir in &folders {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let files = case_files(dir);
        let (mut p, mut f) = (0, 0);
        let ids: Vec<String> = files.iter().map(|f| f.file_stem().unwrap().to_string_lossy().to_string()).collect();
        if index_ids(dir).as_ref() != Some(&ids) {
            f += 1;
            failures.push(format!("{name}/index.json does not list exactly the {} case files", ids.len()));
        }
        for file in &files {
            let text = std::fs::read_to_string(file).expect("readable case");
            let case: Value = match serde_json::from_str(&text) {
                Ok(c) => c,
                Err(e) => {
                    f += 1;
                    failures.push(format!("{name}/{}: not JSON: {e}", file.display()));
                    continue;
                }
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(&case)))
                .unwrap_or_else(|p| Some(Outcome::Fail(format!("panicked: {}", panic_text(&*p)))))
                .unwrap_or_else(|| Outcome::Fail(format!("no runner knows op {}", case["op"])));
            match outcome {
                Outcome::Pass => p += 1,
                Outcome::Fail(m) => {
                    f += 1;
                    failures.push(format!("{name}/{}: {m}", case["id"].as_str().unwrap_or("?")));
                }
            }
        }
        println!("{name}: {p} passed, {f} failed, of {} cases", files.len());
        passed += p;
        failed += f;
    }
    for m in &failures {
        println!("FAIL {m}");
    }
    println!("conformance: {passed} passed, {failed} failed");
    (passed, failed)
}

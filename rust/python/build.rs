//! Embed the catalogs and the validation tables (data/**/*.toml, the tables under data/validation/) in the extension,
//! so an installed scalefront carries exactly the figures it was built with and never ships a stray
//! top-level `data` package.
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("data/ is readable").flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            out.push((rel, path.canonicalize().unwrap()));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let data = manifest.join("../../data").canonicalize().expect("the repository's data/ folder");
    println!("cargo:rerun-if-changed={}", data.display());
    let mut files = Vec::new();
    collect(&data, &data, &mut files);
    let mut code = String::from("/// (path under data/, contents) of every embedded catalog file.\npub static DATA_FILES: &[(&str, &str)] = &[\n");
    for (rel, abs) in &files {
        println!("cargo:rerun-if-changed={}", abs.display());
        writeln!(code, "    ({rel:?}, include_str!({:?})),", abs.display().to_string()).unwrap();
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("data_files.rs");
    std::fs::write(out, code).unwrap();
}

//! The house's shape: no import circles between the files of `src/` (issue 9) nor between
//! those of each benchmark under `bench/`; the shared machinery in `src/backend/` names no
//! capability; and only the crate root reaches the C ABI (`src/ffi/`), which no other file
//! of the library may use.
//!
//! Each crate's files are found from its root (`src/lib.rs`, each `[[bench]]` path of
//! Cargo.toml) by following its `mod` declarations (`#[path]` included). Every `crate::…`,
//! `super::…` and `self::…` path in a file (in `use` items and in code) is resolved to the
//! deepest source file it reaches; the edges between files must form no cycle. `mod`
//! declarations are not edges: a parent declaring a child is not an import.
//! `cargo test --test house import_graph -- --nocapture` prints the measures (files, edges,
//! largest files).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CAPABILITIES: &[&str] = &["dwt", "usfft", "fxdecon", "xcorr", "wavepacket", "emlog"];

/// A source file and the module path it defines (`["usfft", "cpu"]` for src/usfft/cpu.rs).
struct SourceFile {
    path: PathBuf,
    module: Vec<String>,
    text: String,
}

/// The files of the crate whose root is `root`, found by following its `mod name;`
/// declarations as rustc does: `name.rs` or `name/mod.rs` beside a root or `mod.rs` file,
/// in the folder named after any other file, or the file a `#[path]` attribute names.
fn crate_files(root: &Path) -> Vec<SourceFile> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), Vec::new(), true)];
    while let Some((path, module, mod_rs)) = stack.pop() {
        let raw =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let here = path.parent().unwrap().to_path_buf();
        let dir = match mod_rs {
            true => here.clone(),
            false => here.join(path.file_stem().unwrap()),
        };
        for (name, at) in module_declarations(&raw) {
            let mut child = module.clone();
            child.push(name.clone());
            let (file, is_mod_rs) = match at {
                Some(p) => (here.join(&p), p.ends_with("mod.rs")),
                None if dir.join(format!("{name}.rs")).exists() => {
                    (dir.join(format!("{name}.rs")), false)
                }
                None => (dir.join(&name).join("mod.rs"), true),
            };
            stack.push((file, child, is_mod_rs));
        }
        let mut text = strip_comments(&raw);
        // Unit-test modules sit at the end of a file; their `super` is the file itself.
        if let Some(at) = text.find("#[cfg(test)]\nmod ") {
            text.truncate(at);
        }
        out.push(SourceFile { path, module, text });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The `mod name;` declarations of a file (not inline `mod name { … }` blocks), each with
/// the file its `#[path = "…"]` attribute names, if any.
fn module_declarations(raw: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut path_attr = None;
    for line in raw.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            path_attr = rest.split('"').next().map(str::to_string);
            continue;
        }
        let decl = ["mod ", "pub mod ", "pub(crate) mod ", "pub(super) mod "]
            .iter()
            .find_map(|head| line.strip_prefix(head));
        match decl.and_then(|d| d.strip_suffix(';')) {
            Some(name) => out.push((name.trim().to_string(), path_attr.take())),
            None if line.starts_with("#[") => {}
            None => path_attr = None,
        }
    }
    out
}

/// Removes `//` comments and string literals, so that prose and messages are not read as paths.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if in_str {
                if c == '"' && prev != '\\' {
                    in_str = false;
                }
                prev = if prev == '\\' && c == '\\' { ' ' } else { c };
                continue;
            }
            if c == '/' && chars.peek() == Some(&'/') {
                break;
            }
            if c == '"' {
                in_str = true;
                prev = ' ';
                continue;
            }
            out.push(c);
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// Every path of the form `crate::a::b`, `super::a`, `self::a`, with `use` groups expanded
/// (`use crate::a::{b, c::d}` gives `crate::a::b` and `crate::a::c::d`).
fn paths(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        if starts_word {
            for head in ["crate::", "super::", "self::"] {
                let h: Vec<char> = head.chars().collect();
                if bytes[i..].starts_with(&h) {
                    let (found, end) = expand(&bytes, i);
                    out.extend(found);
                    i = end;
                    break;
                }
            }
        }
        i += 1;
    }
    out
}

/// Paths that start with a name brought in by `use` (`use crate::backend::cpu;` then
/// `cpu::dwt::run(…)`), rewritten to start from the `use` path.
fn aliased_paths(text: &str, direct: &[Vec<String>]) -> Vec<Vec<String>> {
    let aliases: BTreeMap<&str, &Vec<String>> = direct
        .iter()
        .filter(|p| p.len() > 1)
        .filter_map(|p| p.last().map(|l| (l.as_str(), p)))
        .collect();
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for i in 0..chars.len() {
        let starts_word = i == 0
            || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':');
        if !starts_word || !(chars[i].is_alphabetic() || chars[i] == '_') {
            continue;
        }
        let (found, _) = expand(&chars, i);
        for p in found {
            if p.len() < 2 {
                continue;
            }
            if let Some(base) = aliases.get(p[0].as_str()) {
                let mut full = (*base).clone();
                full.extend(p[1..].iter().cloned());
                out.push(full);
            }
        }
    }
    out
}

/// Reads a path starting at `i`, expanding one level of braces at its end (recursively).
fn expand(s: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    let mut word = String::new();
    loop {
        let c = s.get(i).copied().unwrap_or(';');
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            i += 1;
        } else if c == ':' && s.get(i + 1) == Some(&':') {
            prefix.push(std::mem::take(&mut word));
            i += 2;
            while s.get(i).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
        } else if c == '{' {
            let mut out = Vec::new();
            i += 1;
            loop {
                while s.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                match s.get(i) {
                    None => return (out, i),
                    Some('}') => return (out, i + 1),
                    _ => {}
                }
                let (inner, end) = expand(s, i);
                for p in inner {
                    let mut full = prefix.clone();
                    full.extend(p);
                    out.push(full);
                }
                if end == i {
                    i += 1;
                } else {
                    i = end;
                }
            }
        } else {
            if !word.is_empty() {
                prefix.push(word);
            }
            return (vec![prefix], i);
        }
    }
}

/// The file a path lands in: the deepest module of the path that is a file of ours.
fn resolve(
    from: &[String],
    path: &[String],
    files: &BTreeMap<Vec<String>, usize>,
) -> Option<usize> {
    let mut module: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("self") => from.to_vec(),
        Some("super") => from[..from.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut rest = &path[1..];
    while rest.first().map(String::as_str) == Some("super") {
        module.pop();
        rest = &rest[1..];
    }
    let mut best = files.get(&module).copied();
    for seg in rest.iter().filter(|s| *s != "self") {
        module.push(seg.clone());
        match files.get(&module) {
            Some(&f) => best = Some(f),
            None => break,
        }
    }
    best
}

/// The file graph of `src/`: for each file, the files it reaches.
fn graph(files: &[SourceFile]) -> Vec<BTreeSet<usize>> {
    let index: BTreeMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.clone(), i))
        .collect();
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let direct = paths(&f.text);
            let via_alias = aliased_paths(&f.text, &direct);
            direct
                .iter()
                .chain(&via_alias)
                .filter_map(|p| resolve(&f.module, p, &index))
                .filter(|&j| j != i)
                .collect()
        })
        .collect()
}

/// Strongly connected components of more than one file (Tarjan).
fn circles(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in s.edges[v].clone().iter() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn src() -> Vec<SourceFile> {
    crate_files(&manifest_dir().join("src/lib.rs"))
}

/// The root file of each benchmark: the `path` of every `[[bench]]` in Cargo.toml.
fn bench_roots() -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(manifest_dir().join("Cargo.toml")).unwrap();
    let mut roots = Vec::new();
    let mut in_bench = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bench = line == "[[bench]]";
        } else if let Some(v) = line.strip_prefix("path = \"").filter(|_| in_bench) {
            roots.push(manifest_dir().join(v.trim_end_matches('"')));
        }
    }
    roots
}

/// The circles of a crate's file graph, each as its files joined by ⇄.
fn circle_report(files: &[SourceFile], edges: &[BTreeSet<usize>]) -> Vec<String> {
    circles(edges)
        .iter()
        .map(|c| {
            c.iter()
                .map(|&i| files[i].path.display().to_string())
                .collect::<Vec<_>>()
                .join(" ⇄ ")
        })
        .collect()
}

#[test]
fn no_import_circles_between_files() {
    let files = src();
    let edges = graph(&files);
    let n_edges: usize = edges.iter().map(BTreeSet::len).sum();
    let mut sizes: Vec<(usize, &Path)> = files
        .iter()
        .map(|f| {
            (
                std::fs::read_to_string(&f.path).unwrap().lines().count(),
                f.path.as_path(),
            )
        })
        .collect();
    sizes.sort_by(|a, b| b.cmp(a));
    println!("{} files, {} file-to-file imports", files.len(), n_edges);
    for (lines, path) in sizes.iter().take(8) {
        println!("  {lines:5} {}", path.display());
    }
    let report = circle_report(&files, &edges);
    println!("{} import circles", report.len());
    assert!(report.is_empty(), "import circles:\n{}", report.join("\n"));
}

/// Each benchmark is its own crate (its shared `harness` folder included in each); none
/// may have a circle between its files.
#[test]
fn no_import_circles_between_bench_files() {
    let roots = bench_roots();
    assert!(!roots.is_empty(), "no [[bench]] found in Cargo.toml");
    let mut report = Vec::new();
    for root in &roots {
        let files = crate_files(root);
        let edges = graph(&files);
        let n_edges: usize = edges.iter().map(BTreeSet::len).sum();
        println!(
            "{}: {} files, {} file-to-file imports",
            root.display(),
            files.len(),
            n_edges
        );
        report.extend(circle_report(&files, &edges));
    }
    assert!(
        report.is_empty(),
        "import circles in bench/:\n{}",
        report.join("\n")
    );
}

/// The C ABI sits on top: the crate root declares `ffi`, and no other file outside
/// `src/ffi/` (unit tests included) reaches into it; the core owns what the ABI shares
/// with it (the status codes, the error type).
#[test]
fn only_the_crate_root_reaches_ffi() {
    let files = src();
    let index: BTreeMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.clone(), i))
        .collect();
    let in_ffi = |m: &[String]| m.first().map(String::as_str) == Some("ffi");
    let mut offences = Vec::new();
    for f in files
        .iter()
        .filter(|f| !f.module.is_empty() && !in_ffi(&f.module))
    {
        // The whole file, its unit tests included.
        let text = strip_comments(&std::fs::read_to_string(&f.path).unwrap());
        let direct = paths(&text);
        let via_alias = aliased_paths(&text, &direct);
        for p in direct.iter().chain(&via_alias) {
            if resolve(&f.module, p, &index).is_some_and(|j| in_ffi(&files[j].module)) {
                offences.push(format!("{}: {}", f.path.display(), p.join("::")));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "files outside src/ffi/ reach into the C ABI:\n{}",
        offences.join("\n")
    );
}

#[test]
fn shared_machinery_names_no_capability() {
    let files = src();
    let mut offences = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.module.first().map(String::as_str) == Some("backend"))
    {
        for p in paths(&f.text) {
            if p.first().map(String::as_str) == Some("crate")
                && p.get(1).is_some_and(|m| CAPABILITIES.contains(&m.as_str()))
            {
                offences.push(format!("{}: {}", f.path.display(), p.join("::")));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "src/backend/ reaches into capabilities:\n{}",
        offences.join("\n")
    );
}

/// The checker itself finds a circle and expands groups (so the tests above can fail).
#[test]
fn the_checker_sees_circles_and_groups() {
    let p = paths("use crate::a::{b, c::{d, e}};\nlet x = super::f::g(1);");
    let want: Vec<Vec<String>> = [
        &["crate", "a", "b"][..],
        &["crate", "a", "c", "d"],
        &["crate", "a", "c", "e"],
        &["super", "f", "g"],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(p, want);
    let edges = vec![
        BTreeSet::from([1]),
        BTreeSet::from([2]),
        BTreeSet::from([0]),
        BTreeSet::from([0]),
    ];
    assert_eq!(circles(&edges).len(), 1);
    assert_eq!(circles(&edges)[0].len(), 3);
    let decls = module_declarations(
        "#[path = \"../harness/mod.rs\"]\nmod harness;\nmod inline {\n}\n#[cfg(test)]\npub mod b;",
    );
    let want = vec![
        ("harness".to_string(), Some("../harness/mod.rs".to_string())),
        ("b".to_string(), None),
    ];
    assert_eq!(decls, want);
}

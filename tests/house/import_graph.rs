//! The house's shape: no import circles between the files of `src/` (issue 9), and the
//! shared machinery in `src/backend/` names no capability.
//!
//! Every `crate::…`, `super::…` and `self::…` path in a file (in `use` items and in code)
//! is resolved to the deepest source file it reaches; the edges between files must form no
//! cycle. `mod` declarations are not edges: a parent declaring a child is not an import.
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

fn source_files(root: &Path) -> Vec<SourceFile> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).unwrap();
                let mut module: Vec<String> = rel
                    .iter()
                    .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
                    .collect();
                if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                    module.pop();
                }
                let mut text = strip_comments(&std::fs::read_to_string(&path).unwrap());
                // Unit-test modules sit at the end of a file; their `super` is the file itself.
                if let Some(at) = text.find("#[cfg(test)]\nmod ") {
                    text.truncate(at);
                }
                out.push(SourceFile { path, module, text });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
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

fn src() -> Vec<SourceFile> {
    source_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
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
    let found = circles(&edges);
    let report: Vec<String> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|&i| files[i].path.display().to_string())
                .collect::<Vec<_>>()
                .join(" ⇄ ")
        })
        .collect();
    println!("{} import circles", found.len());
    assert!(found.is_empty(), "import circles:\n{}", report.join("\n"));
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
}

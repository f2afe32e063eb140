//! The layout of `src/` (docs/architecture.md): no two files import each other in a loop, the
//! numerics import nothing of the GUI, and every analysis task lives beside its lab, not in the
//! app. Read from the source text: each `crate::…` and `super::…` path outside comments and
//! test modules is an import of the file that defines its longest module prefix. A parent
//! module naming its own children (`mod x;`, `pub use x::…`) is how Rust declares them, not an
//! import, so it is not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every `.rs` file under `src/`, by its module path (`["sensing", "zoo"]` for
/// `sensing/zoo/mod.rs`), with its text up to its test module, comments removed.
fn modules() -> BTreeMap<Vec<String>, (String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<Vec<String>, (String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let Some(stem) = rel.strip_suffix(".rs") else {
                continue;
            };
            let mut parts: Vec<String> = stem.split('/').map(String::from).collect();
            if parts.last().is_some_and(|p| p == "mod") || parts == ["lib"] {
                parts.pop();
            }
            if parts == ["main"] {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let text = match text.find("#[cfg(test)]\nmod tests") {
                Some(i) => &text[..i],
                None => &text[..],
            };
            let code: String = text
                .lines()
                .map(|l| l.find("//").map_or(l, |i| &l[..i]))
                .collect::<Vec<_>>()
                .join("\n");
            out.insert(parts, (rel, code));
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    walk(&root, &root, &mut out);
    out
}

/// The paths in `code` that start at `crate` or `super`, each as its segments (a `use` group
/// `a::{b, c::d}` gives `a::b` and `a::c::d`).
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts = ["crate::", "super::"]
            .iter()
            .any(|p| code_at(&bytes, i, p) && (i == 0 || !is_ident(bytes[i - 1])));
        if !starts || (i >= 2 && bytes[i - 1] == ':' && bytes[i - 2] == ':') {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut depth = 0;
        while j < bytes.len() {
            let c = bytes[j];
            if c == '{' {
                depth += 1;
            } else if c == '}' {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            } else if depth == 0 && !(is_ident(c) || c == ':') {
                break;
            }
            j += 1;
        }
        let text: String = bytes[i..j].iter().filter(|c| !c.is_whitespace()).collect();
        expand(&text, &mut found);
        i = j.max(i + 1);
    }
    found
}

fn code_at(chars: &[char], i: usize, pattern: &str) -> bool {
    pattern
        .chars()
        .enumerate()
        .all(|(k, p)| chars.get(i + k) == Some(&p))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` (a path, maybe with one `{…}` group of paths) as separate paths.
fn expand(text: &str, out: &mut Vec<Vec<String>>) {
    let segments = |s: &str| -> Vec<String> {
        s.split("::")
            .filter(|x| !x.is_empty() && *x != "self" && *x != "*")
            .map(String::from)
            .collect()
    };
    let Some(open) = text.find('{') else {
        out.push(segments(text));
        return;
    };
    let base = segments(&text[..open]);
    let inner = text[open + 1..].trim_end_matches('}');
    let mut depth = 0;
    let mut item = String::new();
    let mut items = Vec::new();
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    items.push(item);
    for it in items {
        let head = it.split('{').next().unwrap();
        let mut p = base.clone();
        p.extend(segments(head));
        out.push(p);
    }
}

/// For each file, the files it imports.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules();
    let mut graph = BTreeMap::new();
    for (me, (file, code)) in &mods {
        let mut to = BTreeSet::new();
        for path in paths(code) {
            let (mut base, rest): (Vec<String>, &[String]) = match path.first().map(String::as_str)
            {
                Some("crate") => (Vec::new(), &path[1..]),
                Some("super") => {
                    // `super` of `a/b.rs` and of `a/b/mod.rs` alike is module `a`.
                    let mut b = me.clone();
                    b.pop();
                    let mut k = 1;
                    while path.get(k).is_some_and(|s| s == "super") {
                        b.pop();
                        k += 1;
                    }
                    (b, &path[k..])
                }
                _ => continue,
            };
            base.extend(rest.iter().cloned());
            let target = (0..=base.len())
                .rev()
                .find_map(|k| mods.get(&base[..k]).map(|(f, _)| f.clone()));
            if let Some(t) = target.filter(|t| t != file) {
                to.insert(t);
            }
        }
        graph.insert(file.clone(), to);
    }
    graph
}

/// No import loop between files: the graph has no strongly connected part of more than one
/// file (found by following imports from each file and checking whether it comes back).
#[test]
fn no_two_files_import_each_other_in_a_loop() {
    let graph = imports();
    assert!(graph.len() > 100, "{} files read", graph.len());
    assert!(graph["tasks.rs"].contains("experiment/check.rs"));
    assert!(graph["sensing/zoo/task.rs"].contains("live.rs"));
    let mut loops = Vec::new();
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = graph[start].iter().collect();
        while let Some(f) = stack.pop() {
            if f == start {
                loops.push(start.clone());
                break;
            }
            if seen.insert(f.clone()) {
                stack.extend(graph.get(f).into_iter().flatten());
            }
        }
    }
    assert!(loops.is_empty(), "files in an import loop: {loops:?}");
}

/// The numerics (and the task registry and shards, which a page worker and the command line
/// reach them through) import nothing of the GUI; the app holds no analysis task.
#[test]
fn the_numerics_import_no_gui_and_the_app_holds_no_task() {
    let numerics = [
        "model/",
        "optim/",
        "metrics/",
        "experiment/",
        "sensing/",
        "attention/",
        "tasks.rs",
        "shard.rs",
        "live.rs",
    ];
    let mut checked = 0;
    for (_, (file, code)) in modules() {
        if numerics.iter().any(|n| file.starts_with(n)) {
            checked += 1;
            assert!(
                !code.contains("egui") && !code.contains("crate::app"),
                "{file} imports the GUI"
            );
        }
        if file.starts_with("app/") {
            assert!(
                !code.contains("Task for "),
                "{file} implements an analysis task"
            );
        }
    }
    assert!(checked > 60, "{checked} numerics files checked");
}

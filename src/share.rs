//! Share strings: a preset on one URL-safe line that holds only what differs from a base
//! preset, e.g. `bl1:default(d_k:8,arms:%5B(),(lr:0.003)%5D)`, for a chat message or the part
//! of a link after `#`.
//!
//! Layout: a prefix naming the kind and version (`bl1:` a key-lab
//! [`Preset`](crate::preset::Preset), `ba1:` an
//! [`AttentionPreset`](crate::attention::AttentionPreset), `bz1:` a
//! [`ZooPreset`](crate::sensing::zoo::ZooPreset)), then the base (a bundled preset's name, or nothing for the type's
//! defaults), then the changed fields in RON syntax: a struct lists only its changed fields, a
//! list of structs lists every element (an unchanged element is `()`, merged with the base's
//! element at the same position), anything else is written whole. The encoder picks the base
//! that gives the shortest string and keeps a field out only when decoding still gives the same
//! serialised bytes, so the round trip is bit-identical for every f64 (RON writes the shortest
//! text that parses back to the same bits; `-0.0` stays `-0.0`).
//!
//! The RON text is made URL-safe by writing `"` as `'` and a space as `+`, and percent-encoding
//! every other byte outside `A-Z a-z 0-9 - . _ ~ ! ( ) * , : ; = @ /` (so `[` is `%5B`). Decoding
//! undoes this, merges the fields into the base's and reads the result as a pasted preset:
//! validation errors name the field.

use serde::Serialize;

use crate::reading::{MAX_PRESET_BYTES, PresetError};

/// What errors call a share string in place of a file name.
const SOURCE: &str = "share string";

/// Deepest nesting of brackets a share string may use (a preset needs four).
const MAX_DEPTH: usize = 16;

/// A preset type that has a share string; each kind implements it beside its type
/// ([`crate::preset::Preset`], [`crate::attention::AttentionPreset`]).
pub trait Shareable: Serialize + Default + Sized {
    /// The kind and version that start its share strings, without the colon (`bl1`).
    const PREFIX: &'static str;
    /// The presets a share string may name as its base: (name, RON text).
    const BUNDLED: &'static [(&'static str, &'static str)];
    /// Parses and validates RON text as a pasted preset would be; `file` names the source.
    fn parse_ron(text: &str, file: &str) -> Result<Self, PresetError>;
}

/// The share-string kinds this build knows, for naming a string pasted in the wrong place.
const KINDS: &[(&str, &str)] = &[
    ("bl", "a key-lab preset"),
    ("ba", "an attention preset"),
    ("bz", "a zoo preset"),
];

/// Whether `text` looks like a share string (of any kind or version) rather than RON: one line
/// that starts with letters, digits and a colon (`bl1:`), or a link whose fragment does.
pub fn is_share_string(text: &str) -> bool {
    let text = text.trim();
    !text.contains('\n') && prefix_of(fragment(text)).is_some()
}

/// The share string inside `text`: the text itself, or the part after `#` of a link.
fn fragment(text: &str) -> &str {
    match text.rfind('#') {
        Some(i) if prefix_of(&text[i + 1..]).is_some() => &text[i + 1..],
        _ => text,
    }
}

/// The `kind` and `version` of a share string (`("bl", "1")` for `bl1:…`).
fn prefix_of(text: &str) -> Option<(&str, &str)> {
    let head = &text[..text.find(':')?];
    let digits = head.find(|c: char| c.is_ascii_digit())?;
    let (kind, version) = head.split_at(digits);
    let ok = !kind.is_empty()
        && kind.chars().all(|c| c.is_ascii_lowercase())
        && version.chars().all(|c| c.is_ascii_digit());
    ok.then_some((kind, version))
}

/// The share string of `value`: its changed fields against whichever of the type's defaults
/// and its bundled presets gives the shortest string. Decoding it with [`decode`] gives a value
/// whose RON serialisation is byte-identical to `value`'s. A value that does not validate is
/// written with every field (its decoding then reports the invalid field).
pub fn encode<T: Shareable>(value: &T) -> String {
    let target = compact(value);
    let full = parse_tree(&target).expect("a serialised preset parses");
    let mut bases: Vec<(&str, Node)> = vec![("", base_tree(&T::default()))];
    for (name, text) in T::BUNDLED {
        if let Ok(p) = T::parse_ron(text, name) {
            bases.push((name, base_tree(&p)));
        }
    }
    bases
        .iter()
        .map(|(name, base)| {
            let mut diff = full.clone();
            let same = |d: &Node| decode_tree::<T>(base, d).is_ok_and(|v| compact(&v) == target);
            if same(&diff) {
                prune(&mut diff, &mut Vec::new(), &same);
            }
            let fields = match &diff {
                Node::Struct(f) if f.is_empty() => String::new(),
                d => d.to_string(),
            };
            format!("{}:{name}{}", T::PREFIX, escape(&fields))
        })
        .min_by_key(String::len)
        .expect("at least the defaults are a base")
}

/// Reads a share string (or a link whose part after `#` is one; surrounding spaces are
/// ignored) and validates the preset as a pasted one.
///
/// Errors (never a panic): another kind or version, a broken percent escape, text that is not
/// UTF-8, an unknown base name, unbalanced brackets, and every error of the preset's RON reader
/// (unknown fields, wrong types, out-of-range values) naming the field.
pub fn decode<T: Shareable>(text: &str) -> Result<T, PresetError> {
    let err = |m: String| PresetError::whole(SOURCE, m);
    let text = fragment(text.trim());
    if text.len() as u64 > MAX_PRESET_BYTES {
        return Err(err(format!(
            "{} bytes; at most {MAX_PRESET_BYTES} are accepted",
            text.len()
        )));
    }
    let expected = T::PREFIX;
    let (kind, version) = prefix_of(text).ok_or_else(|| {
        err(format!(
            "a share string starts with `{expected}:`; this one starts otherwise"
        ))
    })?;
    if format!("{kind}{version}") != expected {
        let what = KINDS.iter().find(|(k, _)| *k == kind).map(|(_, w)| *w);
        return Err(err(match what {
            Some(w) if !expected.starts_with(kind) => {
                format!("this is the share string of {w} (`{kind}{version}:`), not of this kind")
            }
            _ => format!(
                "share strings of kind and version `{kind}{version}` are not known; this build \
                 reads `{expected}:`"
            ),
        }));
    }
    let head = kind.len() + version.len() + 1;
    let body = unescape(&text[head..], head)?;
    let name_end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(body.len());
    let (name, fields) = body.split_at(name_end);
    let base = if name.is_empty() {
        T::default()
    } else {
        let (_, ron) = T::BUNDLED.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let names: Vec<&str> = T::BUNDLED.iter().map(|(n, _)| *n).collect();
            err(format!(
                "no bundled preset `{name}` to start from (bundled: {})",
                names.join(", ")
            ))
        })?;
        T::parse_ron(ron, name)?
    };
    let diff = if fields.trim().is_empty() {
        Node::Struct(Vec::new())
    } else if fields.starts_with('(') {
        parse_tree(fields).map_err(err)?
    } else {
        Node::Atom(String::new())
    };
    if !matches!(diff, Node::Struct(_)) {
        return Err(err(format!(
            "after the base's name, the changed fields are written as `(field:value,…)`; \
             found `{}`",
            fields.chars().take(20).collect::<String>()
        )));
    }
    decode_tree(&base_tree(&base), &diff)
}

/// Reads pasted text as a share string when it looks like one ([`is_share_string`]), else as a
/// preset's RON text (`file` names it in errors).
pub fn parse_pasted<T: Shareable>(text: &str, file: &str) -> Result<T, PresetError> {
    if is_share_string(text) {
        decode(text)
    } else {
        T::parse_ron(text, file)
    }
}

/// Compact RON of `value` (no spaces, no struct names).
fn compact<T: Serialize>(value: &T) -> String {
    ron::to_string(value).expect("a preset always serialises")
}

fn base_tree<T: Serialize>(value: &T) -> Node {
    parse_tree(&compact(value)).expect("a serialised preset parses")
}

/// The preset that `diff` merged into `base` gives; errors are the RON reader's, with the
/// position dropped (it points into the merged text, not into what the user wrote).
fn decode_tree<T: Shareable>(base: &Node, diff: &Node) -> Result<T, PresetError> {
    let merged = merge(Some(base), diff).map_err(|m| PresetError::whole(SOURCE, m))?;
    T::parse_ron(&merged.to_string(), SOURCE).map_err(|e| PresetError {
        line: None,
        column: None,
        ..e
    })
}

/// A value of compact RON, split as far as merging needs: structs by field, lists by element,
/// everything else (numbers, strings, enums, tuples, maps, `Some(…)`) kept as its text.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Struct(Vec<(String, Node)>),
    List(Vec<Node>),
    Atom(String),
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |f: &mut std::fmt::Formatter<'_>, items: Vec<String>, open, close| {
            write!(f, "{open}{}{close}", items.join(","))
        };
        match self {
            Node::Struct(fields) => join(
                f,
                fields.iter().map(|(k, v)| format!("{k}:{v}")).collect(),
                "(",
                ")",
            ),
            Node::List(items) => join(f, items.iter().map(Node::to_string).collect(), "[", "]"),
            Node::Atom(text) => f.write_str(text),
        }
    }
}

/// `diff` over `base`: a struct's fields replace the base's of the same name (recursively) and
/// the rest of the base stays; a list takes the diff's length, each element merged with the
/// base's element at its position; anything else is replaced. Error: a field given twice.
fn merge(base: Option<&Node>, diff: &Node) -> Result<Node, String> {
    Ok(match (base, diff) {
        (Some(Node::Struct(b)), Node::Struct(d)) => {
            for (i, (k, _)) in d.iter().enumerate() {
                if d[..i].iter().any(|(k2, _)| k2 == k) {
                    return Err(format!("field `{k}` is given twice"));
                }
            }
            let mut out = Vec::with_capacity(b.len());
            for (k, bv) in b {
                let v = match d.iter().find(|(dk, _)| dk == k) {
                    Some((_, dv)) => merge(Some(bv), dv)?,
                    None => bv.clone(),
                };
                out.push((k.clone(), v));
            }
            for (k, dv) in d {
                if !b.iter().any(|(bk, _)| bk == k) {
                    out.push((k.clone(), dv.clone()));
                }
            }
            Node::Struct(out)
        }
        (Some(Node::List(b)), Node::List(d)) => Node::List(
            d.iter()
                .enumerate()
                .map(|(i, dv)| merge(b.get(i), dv))
                .collect::<Result<_, _>>()?,
        ),
        (_, d) => d.clone(),
    })
}

/// Removes from `root` every part whose removal keeps `same(root)` true, whole fields first,
/// then parts of the fields that must stay. `path` locates the node being pruned (indices of
/// struct fields and list elements from the root).
fn prune(root: &mut Node, path: &mut Vec<usize>, same: &dyn Fn(&Node) -> bool) {
    let mut i = 0;
    loop {
        let node = node_at(root, path);
        let (n, removable) = match node {
            Node::Struct(f) => (f.len(), true),
            Node::List(items) => (items.len(), false),
            Node::Atom(_) => return,
        };
        if i >= n {
            return;
        }
        if removable {
            let mut trial = root.clone();
            if let Node::Struct(f) = node_at(&mut trial, path) {
                f.remove(i);
            }
            if same(&trial) {
                *root = trial;
                continue;
            }
        }
        path.push(i);
        prune(root, path, same);
        path.pop();
        i += 1;
    }
}

/// The node at `path` below `root` (see [`prune`]).
fn node_at<'a>(root: &'a mut Node, path: &[usize]) -> &'a mut Node {
    path.iter().fold(root, |node, &i| match node {
        Node::Struct(f) => &mut f[i].1,
        Node::List(items) => &mut items[i],
        Node::Atom(_) => unreachable!("paths only lead through structs and lists"),
    })
}

/// Splits compact (or hand-written) RON into a [`Node`]. Errors: unbalanced brackets, an
/// unterminated string, nesting deeper than [`MAX_DEPTH`], text after the value.
fn parse_tree(text: &str) -> Result<Node, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        at: 0,
    };
    let node = p.value(0)?;
    p.skip_space();
    if p.at < p.s.len() {
        return Err(format!(
            "unexpected `{}` after the changed fields",
            p.rest_excerpt()
        ));
    }
    Ok(node)
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn rest_excerpt(&self) -> String {
        String::from_utf8_lossy(&self.s[self.at..])
            .chars()
            .take(20)
            .collect()
    }

    /// An identifier followed by `:` at the cursor (a struct field's name), without moving.
    fn field_name_ahead(&self) -> Option<(String, usize)> {
        let start = self.at;
        let mut end = start;
        while self
            .s
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            end += 1;
        }
        let mut colon = end;
        while self.s.get(colon).is_some_and(u8::is_ascii_whitespace) {
            colon += 1;
        }
        let ident = end > start && !self.s[start].is_ascii_digit();
        (ident && self.s.get(colon) == Some(&b':')).then(|| {
            let name = String::from_utf8_lossy(&self.s[start..end]).into_owned();
            (name, colon + 1)
        })
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(format!("brackets nested deeper than {MAX_DEPTH}"));
        }
        self.skip_space();
        match self.s.get(self.at) {
            Some(b'(') => {
                let save = self.at;
                self.at += 1;
                self.skip_space();
                if self.s.get(self.at) == Some(&b')') || self.field_name_ahead().is_some() {
                    self.fields(depth)
                } else {
                    self.at = save;
                    self.atom(depth)
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_space();
                    if self.s.get(self.at) == Some(&b']') {
                        self.at += 1;
                        return Ok(Node::List(items));
                    }
                    items.push(self.value(depth + 1)?);
                    self.separator(b']')?;
                }
            }
            _ => self.atom(depth),
        }
    }

    /// The fields of a struct, the cursor just after its `(`.
    fn fields(&mut self, depth: usize) -> Result<Node, String> {
        let mut fields = Vec::new();
        loop {
            self.skip_space();
            if self.s.get(self.at) == Some(&b')') {
                self.at += 1;
                return Ok(Node::Struct(fields));
            }
            let (name, after) = self.field_name_ahead().ok_or_else(|| {
                format!("expected `field:value` or `)` at `{}`", self.rest_excerpt())
            })?;
            self.at = after;
            let value = self.value(depth + 1)?;
            fields.push((name, value));
            self.separator(b')')?;
        }
    }

    /// After an element: a `,`, or the `close` bracket (left for the caller).
    fn separator(&mut self, close: u8) -> Result<(), String> {
        self.skip_space();
        match self.s.get(self.at) {
            Some(b',') => {
                self.at += 1;
                Ok(())
            }
            Some(c) if *c == close => Ok(()),
            None => Err(format!("missing `{}` at the end", close as char)),
            Some(_) => Err(format!(
                "expected `,` or `{}` at `{}`",
                close as char,
                self.rest_excerpt()
            )),
        }
    }

    /// Text up to the next `,`, `)` or `]` outside brackets and strings.
    fn atom(&mut self, depth: usize) -> Result<Node, String> {
        let start = self.at;
        let mut open: Vec<u8> = Vec::new();
        while let Some(&c) = self.s.get(self.at) {
            match c {
                b'"' => self.string()?,
                b'(' | b'[' | b'{' => {
                    if depth + open.len() >= MAX_DEPTH {
                        return Err(format!("brackets nested deeper than {MAX_DEPTH}"));
                    }
                    open.push(c);
                }
                b')' | b']' | b'}' => {
                    let Some(o) = open.last() else { break };
                    let pair = matches!((o, c), (b'(', b')') | (b'[', b']') | (b'{', b'}'));
                    if !pair {
                        return Err(format!(
                            "`{}` closes `{}` at `{}`",
                            c as char,
                            *o as char,
                            self.rest_excerpt()
                        ));
                    }
                    open.pop();
                }
                b',' if open.is_empty() => break,
                _ => {}
            }
            self.at += 1;
        }
        if let Some(o) = open.last() {
            return Err(format!("`{}` is never closed", *o as char));
        }
        let text = String::from_utf8_lossy(&self.s[start..self.at])
            .trim()
            .to_string();
        if text.is_empty() {
            return Err(format!("a value is missing at `{}`", self.rest_excerpt()));
        }
        Ok(Node::Atom(text))
    }

    /// Moves the cursor from a string's opening `"` to its closing one.
    fn string(&mut self) -> Result<(), String> {
        self.at += 1;
        while let Some(&c) = self.s.get(self.at) {
            match c {
                b'\\' => self.at += 1,
                b'"' => return Ok(()),
                _ => {}
            }
            self.at += 1;
        }
        Err("a string (`'…'`) is never closed".into())
    }
}

/// Bytes written as they are in a share string (besides `'` for `"` and `+` for a space).
fn is_kept(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!()*,:;=@/".contains(&b)
}

/// RON text made URL-safe (see the module's doc).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        match b {
            b'"' => out.push('\''),
            b' ' => out.push('+'),
            b if is_kept(b) => out.push(b as char),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The RON text of a URL-safe share string's part after its first `skipped` characters (for
/// error positions). Other characters than `'`, `+` and `%XX` are taken as they are, so a
/// hand-typed `[` or `"` works too. Errors: a `%` without two hex digits, bytes that are not
/// UTF-8.
fn unescape(text: &str, skipped: usize) -> Result<String, PresetError> {
    let err = |m: String| PresetError::whole(SOURCE, m);
    let s = text.as_bytes();
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\'' => out.push(b'"'),
            b'+' => out.push(b' '),
            b'%' => {
                // from_str_radix alone would take a sign (`%+A`).
                let hex = s
                    .get(i + 1..i + 3)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|h| {
                        std::str::from_utf8(h)
                            .ok()
                            .and_then(|h| u8::from_str_radix(h, 16).ok())
                    });
                let byte = hex.ok_or_else(|| {
                    err(format!(
                        "`%` at character {} is not followed by two hex digits",
                        skipped + text[..i].chars().count() + 1
                    ))
                })?;
                out.push(byte);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| err("its percent escapes do not spell UTF-8 text".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_and_unescape_are_inverse_on_awkward_text() {
        let text = "(name:\"a b+c%d'e[f]#g ≥ ü\\\"\",x:[1,2])";
        let e = escape(text);
        assert!(
            e.bytes()
                .all(|b| is_kept(b) || b == b'%' || b == b'\'' || b == b'+')
        );
        assert_eq!(unescape(&e, 0).unwrap(), text);
    }

    #[test]
    fn tree_splits_structs_lists_and_keeps_the_rest_whole() {
        let t = parse_tree("(a:1.0,b:[(c:Some(2)),()],d:(1.0,0.3),e:\"x,)\")").unwrap();
        let Node::Struct(f) = &t else { panic!("{t:?}") };
        assert_eq!(f.len(), 4);
        assert_eq!(f[0], ("a".into(), Node::Atom("1.0".into())));
        assert_eq!(
            f[1].1,
            Node::List(vec![
                Node::Struct(vec![("c".into(), Node::Atom("Some(2)".into()))]),
                Node::Struct(vec![])
            ])
        );
        assert_eq!(f[2].1, Node::Atom("(1.0,0.3)".into()));
        assert_eq!(f[3].1, Node::Atom("\"x,)\"".into()));
        assert_eq!(
            t.to_string(),
            "(a:1.0,b:[(c:Some(2)),()],d:(1.0,0.3),e:\"x,)\")"
        );
    }

    #[test]
    fn merge_keeps_base_fields_and_aligns_list_elements() {
        let base = parse_tree("(a:1,l:[(x:1,y:2),(x:3,y:4)],s:(p:1,q:2))").unwrap();
        let diff = parse_tree("(l:[(),(y:9),(x:5)],s:(q:7))").unwrap();
        let m = merge(Some(&base), &diff).unwrap();
        assert_eq!(
            m.to_string(),
            "(a:1,l:[(x:1,y:2),(x:3,y:9),(x:5)],s:(p:1,q:7))"
        );
        let twice = parse_tree("(a:1,a:2)").unwrap();
        assert!(merge(Some(&base), &twice).unwrap_err().contains("`a`"));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("(a:{}1{})", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse_tree(&deep).unwrap_err().contains("nested"));
        let deep = format!("(a:{}1{})", "(".repeat(10_000), ")".repeat(10_000));
        assert!(parse_tree(&deep).unwrap_err().contains("nested"));
    }

    #[test]
    fn prefixes_are_recognised() {
        assert_eq!(prefix_of("bl1:default"), Some(("bl", "1")));
        assert_eq!(prefix_of("ba12:(x:1)"), Some(("ba", "12")));
        assert_eq!(prefix_of("Preset(d_k:8)"), None);
        assert_eq!(prefix_of("(d_k:8)"), None);
        assert!(is_share_string("  https://x.org/lab/#bl1:default(d_k:8)\n"));
        assert!(!is_share_string("Preset(\n d_k: 8,\n)"));
    }
}

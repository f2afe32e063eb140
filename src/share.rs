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
//!
//! As mail and chat deliver them: whitespace is never part of a share string (the encoder writes
//! none), so a string wrapped over lines reads as sent; the look-alikes chat apps type
//! (curly quotes, the minus sign) read as the ASCII they stand for outside quotes
//! ([`crate::reading::plain_ascii`]); any other character outside quotes that is not ASCII is
//! named with its line:column.

use serde::Serialize;

use crate::reading::{MAX_PRESET_BYTES, PresetError, foreign_char, plain_ascii};

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

/// Whether `text` is to be read as a share string rather than as RON or a file name: it starts
/// with letters, digits and a colon (`bl1:`, any kind or version, so that its error says what is
/// wrong with it), or it is a link: an address with a scheme (`https://…`), or one without whose
/// part after `#` (or `%23`) holds such a start and whose part before is one word without `(`
/// or `"` (not RON that mentions a link in a comment or a string). Whitespace is ignored
/// otherwise, as [`decode`] ignores it.
pub fn is_share_string(text: &str) -> bool {
    let s: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if prefix_of(&s).is_some() || has_scheme(&s) {
        return true;
    }
    let t = text.trim_start();
    let Some(cut) = t.find('#').or_else(|| t.find("%23")) else {
        return false;
    };
    let after: String = t[cut..].chars().filter(|c| !c.is_whitespace()).collect();
    !t[..cut].contains(|c: char| c.is_whitespace() || c == '(' || c == '"')
        && kind_in(&after).is_some()
}

/// Whether `text` holds a share string of `T`'s kind, of any version (alone, or in a link, even
/// a broken one), so that [`decode`] for `T` is the reader to report on it.
pub fn is_kind<T: Shareable>(text: &str) -> bool {
    let s: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    kind_in(&s).is_some_and(|kind| T::PREFIX.trim_end_matches(|c: char| c.is_ascii_digit()) == kind)
}

/// The kind of the first share string in `s` (no whitespace): at its start, or after a `#` or a
/// `%23`.
fn kind_in(s: &str) -> Option<&str> {
    let starts = std::iter::once(0)
        .chain(s.match_indices('#').map(|(i, _)| i + 1))
        .chain(s.match_indices("%23").map(|(i, _)| i + 3));
    starts
        .filter_map(|i| prefix_of(&s[i..]))
        .map(|(kind, _)| kind)
        .next()
}

/// Whether `s` starts with a URL scheme and `://` (`https://`).
fn has_scheme(s: &str) -> bool {
    s.find("://").is_some_and(|i| {
        let scheme = &s[..i];
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    })
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

/// Text with, for each of its bytes, the 1-based line and column (in characters) where the
/// user wrote it, so that errors point into what they gave, not into what it became.
#[derive(Clone)]
struct Placed {
    text: String,
    at: Vec<(usize, usize)>,
}

impl Placed {
    /// `text` without its whitespace (see the module's doc): the encoder writes a space in a
    /// value as `+` and any other whitespace as a percent escape, so no whitespace of a share
    /// string is its own, not even between quotes (type a space there as `+`).
    fn without_whitespace(text: &str) -> Self {
        let mut kept = Self {
            text: String::with_capacity(text.len()),
            at: Vec::with_capacity(text.len()),
        };
        let (mut line, mut column) = (1, 1);
        for c in text.chars() {
            if !c.is_whitespace() {
                kept.text.push(c);
                kept.at
                    .extend(std::iter::repeat_n((line, column), c.len_utf8()));
            }
            (line, column) = if c == '\n' {
                (line + 1, 1)
            } else {
                (line, column + 1)
            };
        }
        kept
    }

    /// The part from byte `from` on.
    fn from(&self, from: usize) -> Self {
        Self {
            text: self.text[from..].to_string(),
            at: self.at[from..].to_vec(),
        }
    }

    /// An error at byte `i` ([`error_at`]).
    fn error(&self, i: usize, message: impl Into<String>) -> PresetError {
        error_at(&self.at, i, message)
    }
}

/// An error at the place of byte `i` of a [`Placed`] text (just after its end when `i` is its
/// length).
fn error_at(at: &[(usize, usize)], i: usize, message: impl Into<String>) -> PresetError {
    let (line, column) = match (at.get(i), at.last()) {
        (Some(&p), _) => p,
        (None, Some(&(line, column))) => (line, column + 1),
        (None, None) => (1, 1),
    };
    PresetError {
        line: Some(line),
        column: Some(column),
        ..PresetError::whole(SOURCE, message)
    }
}

/// The share string in `given`: all of it when it starts as one, else the part of a link after
/// its first `#`. Errors name what the link lacks: a `#` (one written `%23`), or anything after
/// it.
fn share_part(given: &Placed) -> Result<Placed, PresetError> {
    let s = &given.text;
    if prefix_of(s).is_some() {
        return Ok(given.clone());
    }
    if let Some(i) = s.find('#') {
        if i + 1 == s.len() {
            return Err(given.error(
                i,
                "the link ends at its `#`: the share string that follows it is missing (was \
                 the link cut short?)",
            ));
        }
        return Ok(given.from(i + 1));
    }
    if let Some(i) = s.find("%23").filter(|&i| prefix_of(&s[i + 3..]).is_some()) {
        return Err(given.error(
            i,
            "the link's `#` is written `%23`: write `#` before the share string",
        ));
    }
    if has_scheme(s) {
        return Err(given.error(
            s.len(),
            "the link has no `#`, so no share string (it follows the `#`)",
        ));
    }
    Ok(given.clone())
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

/// Reads a share string (or a link whose part after `#` is one; whitespace anywhere is ignored,
/// see the module's doc) and validates the preset as a pasted one.
///
/// Errors (never a panic), at the line:column of what the user gave where one character is to
/// blame: a link without a share string (no `#`, one written `%23`, nothing after it), a second
/// `#`, another kind or version, a broken percent escape, text that is not UTF-8, a character
/// outside quotes that is not ASCII (named with its code point), an unknown base name,
/// unbalanced brackets, and every error of the preset's RON reader (unknown fields, wrong types,
/// out-of-range values) naming the field.
pub fn decode<T: Shareable>(text: &str) -> Result<T, PresetError> {
    let err = |m: String| PresetError::whole(SOURCE, m);
    if text.len() as u64 > MAX_PRESET_BYTES {
        return Err(err(format!(
            "{} bytes; at most {MAX_PRESET_BYTES} are accepted",
            text.len()
        )));
    }
    let share = share_part(&Placed::without_whitespace(text))?;
    if let Some(i) = share.text.find('#') {
        return Err(share.error(
            i,
            "a second `#`: a share string holds none (a `#` in a value is written `%23`); was \
             a link or a string pasted twice?",
        ));
    }
    let expected = T::PREFIX;
    let (kind, version) = prefix_of(&share.text).ok_or_else(|| {
        let start: String = share.text.chars().take(12).collect();
        let found = if start.is_empty() {
            "this one is empty".to_string()
        } else {
            format!("this one starts `{start}`")
        };
        share.error(
            0,
            format!("a share string starts with `{expected}:`; {found}"),
        )
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
    let body = unescape(&share.from(kind.len() + version.len() + 1))?;
    let (body_text, foreign) = plain_ascii(&body.text);
    if let Some((i, c)) = foreign {
        let nth = body_text[..i].chars().count();
        let at = body.text.char_indices().nth(nth).map_or(0, |(j, _)| j);
        return Err(body.error(at, foreign_char(c, "a share string")));
    }
    let body = body_text;
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

/// The RON text of (part of) a URL-safe share string, each byte placed where the user wrote
/// the character it comes from. Other characters than `'`, `+` and `%XX` are taken as they
/// are, so a hand-typed `[` or `"` works too. Errors: a `%` without two hex digits, bytes that
/// are not UTF-8.
fn unescape(given: &Placed) -> Result<Placed, PresetError> {
    let s = given.text.as_bytes();
    let mut out = Vec::with_capacity(s.len());
    let mut at = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        at.push(given.at[i]);
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
                let byte =
                    hex.ok_or_else(|| given.error(i, "`%` is not followed by two hex digits"))?;
                out.push(byte);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    match String::from_utf8(out) {
        Ok(text) => Ok(Placed { text, at }),
        Err(e) => Err(error_at(
            &at,
            e.utf8_error().valid_up_to(),
            "its percent escapes do not spell UTF-8 text",
        )),
    }
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
        assert_eq!(
            unescape(&Placed::without_whitespace(&e)).unwrap().text,
            text
        );
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
        // Wrapped, or a link whatever is wrong with it: read (and reported) as a share string.
        assert!(is_share_string("bl1:classroom(steps:3,\n  seed:2)"));
        for link in [
            "https://x.org/lab/",
            "https://x.org/#",
            "x.org/%23bl1:c",
            "x.org/#a#bz1:",
        ] {
            assert!(is_share_string(link), "{link}");
        }
        // Not RON that mentions a link, nor a file name with a `#`.
        assert!(!is_share_string("Preset(name: \"see x.org/#bl1:default\")"));
        for ron in [
            "// from x.org/#bl1:c\nPreset()",
            "// https://x.org/#bl1:c\n(d_k: 8)",
        ] {
            assert!(!is_share_string(ron), "{ron}");
        }
        assert!(!is_share_string("notes#1.ron"));
        use crate::preset::Preset;
        assert!(is_kind::<Preset>("x.org/%23bl1:c") && is_kind::<Preset>("bl2:"));
        assert!(!is_kind::<Preset>("https://x.org/#ba1:x") && !is_kind::<Preset>("bl"));
    }
}

//! Reading the text a user edits or pastes (presets of every kind, saved state): one way for
//! all of them. A leading byte-order mark is dropped, the size is bounded, and every error is a
//! [`PresetError`] naming the file, the line:column and the field path.

use std::ffi::OsStr;
use std::path::Path;

use thiserror::Error;

use crate::validate::FieldError;

/// Largest preset file (and share string) accepted, in bytes.
pub const MAX_PRESET_BYTES: u64 = 1 << 20;

/// Why a preset was rejected: where (file, line:column when known), which field, and what is
/// allowed. Never a panic.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}{}: {}{}", file, location(*line, *column), field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default(), message)]
pub struct PresetError {
    /// The file name, or `<text>` for pasted text.
    pub file: String,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// 1-based column, if known.
    pub column: Option<usize>,
    /// The offending field (`arms[1].lr` style), if one.
    pub field: Option<String>,
    /// What is wrong and what is allowed.
    pub message: String,
}

fn location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl PresetError {
    /// An error about the source as a whole (unreadable, too long, not text).
    pub fn whole(file: &str, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line: None,
            column: None,
            field: None,
            message: message.into(),
        }
    }

    /// A RON syntax or type error at its line:column; names the field when the error is about
    /// a value, not about the structure.
    pub fn parse(e: &ron::error::SpannedError, text: &str, file: &str) -> Self {
        let message = e
            .code
            .to_string()
            .replace("`OptimizerSpec`", "an arm")
            .replace("`DemoSettings`", "`demos`")
            .replace("struct `Preset`", "the preset");
        let structural = [
            "field named",
            "comma",
            "colon",
            "closing",
            "opening",
            "end of",
        ]
        .iter()
        .any(|w| message.contains(w));
        let offset = byte_offset(text, e.span.start.line, e.span.start.col);
        Self {
            file: file.into(),
            line: Some(e.span.start.line),
            column: Some(e.span.start.col),
            field: (!structural).then(|| field_before(text, offset)).flatten(),
            message,
        }
    }

    /// A validation error of `text`, at the line:column where it writes the field (if it does).
    pub fn invalid(e: FieldError, text: &str, file: &str) -> Self {
        let (line, column) = locate_field(text, &e.field)
            .or_else(|| locate_path(text, &e.field))
            .unzip();
        Self {
            file: file.into(),
            line,
            column,
            field: Some(e.field),
            message: e.message,
        }
    }
}

/// The text of the file at `path` (shown as `shown` in errors) for a preset reader: at most
/// `max` bytes of UTF-8. The file is only read. Errors: unreadable, too long, not UTF-8.
pub fn read_text(path: &Path, shown: &str, max: u64) -> Result<String, PresetError> {
    let io_err = |e: std::io::Error| PresetError::whole(shown, format!("cannot read: {e}"));
    let len = std::fs::metadata(path).map_err(io_err)?.len();
    if len > max {
        return Err(PresetError::whole(
            shown,
            format!("file is {len} bytes; at most {max} are accepted"),
        ));
    }
    let bytes = std::fs::read(path).map_err(io_err)?;
    String::from_utf8(bytes).map_err(|e| PresetError::whole(shown, format!("not UTF-8 text: {e}")))
}

/// Reads the RON text of any preset kind the one way all three kinds read it: a leading
/// byte-order mark dropped, at most `max` bytes, parsed with `options`, then checked by
/// `validate`. `file` names the source in errors.
///
/// Errors: syntax, type and unknown-field errors at their line:column (with the field a wrong
/// value belongs to); a value `validate` refuses, naming its field path and range, at the
/// line:column where the text writes it (or the nearest enclosing field it writes); text longer
/// than `max` bytes.
pub fn parse_ron<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
    max: u64,
    options: ron::Options,
    validate: impl FnOnce(&T) -> Result<(), FieldError>,
) -> Result<T, PresetError> {
    let text = without_bom(text);
    if text.len() as u64 > max {
        return Err(PresetError::whole(
            file,
            format!("preset is {} bytes; at most {max} are accepted", text.len()),
        ));
    }
    let (text, foreign) = plain_ascii(text);
    let value: T = options.from_str(&text).map_err(|e| {
        let err = PresetError::parse(&e, &text, file);
        // A character RON does not read, at or before where it stopped, is the likely cause.
        let Some((i, c)) = foreign else { return err };
        let (line, column) = line_col(&text, i);
        if (line, column) > (e.span.end.line, e.span.end.col) {
            return err;
        }
        PresetError {
            line: Some(line),
            column: Some(column),
            // A value's error: the value the character stands in.
            field: err.field.and_then(|_| field_before(&text, i)),
            message: format!(
                "{} (the reader: {})",
                foreign_char(c, "a preset"),
                err.message
            ),
            ..err
        }
    })?;
    validate(&value).map_err(|e| PresetError::invalid(e, &text, file))?;
    Ok(value)
}

/// Characters that chat apps, word processors and PDFs put in place of RON's ASCII, with the
/// ASCII they stand for outside strings and comments: curly quotes for `"` (a preset has no
/// character fields, so `‘tiny’` can only mean the string "tiny"), the minus sign for `-` and a
/// no-break space for a space.
const LOOK_ALIKES: &[(char, char)] = &[
    ('\u{2018}', '"'),
    ('\u{2019}', '"'),
    ('\u{201C}', '"'),
    ('\u{201D}', '"'),
    ('\u{2212}', '-'),
    ('\u{00A0}', ' '),
];

/// Where [`plain_ascii`] is in RON text.
enum Scan {
    /// Outside strings and comments.
    Code,
    /// In a string that `open` opened: `"`, or a look-alike quote ([`closes`]).
    Str { open: char, escaped: bool },
    /// In a raw string `r#"…"#` with this many `#`.
    Raw(usize),
    /// In a character literal `'…'`.
    Char { escaped: bool },
    /// In a `//` comment.
    LineComment,
    /// In this many nested block comments.
    Block(usize),
}

/// RON `text` with its [`LOOK_ALIKES`] outside strings and comments replaced character for
/// character, so that every line:column (RON counts characters) stays; no string's contents
/// change, and a string a look-alike quote opens ends as [`closes`] says. Also
/// the byte offset (in the returned text) and the character of the first character outside
/// strings and comments that RON does not read there (not ASCII nor RON's whitespace), if any.
pub fn plain_ascii(text: &str) -> (String, Option<(usize, char)>) {
    let mut out = String::with_capacity(text.len());
    let mut foreign = None;
    let mut state = Scan::Code;
    let mut prev = ' ';
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let rest = &text[i..];
        let mut put = c;
        let mut len = c.len_utf8();
        state = match state {
            Scan::Code if rest.starts_with("//") => Scan::LineComment,
            Scan::Code if rest.starts_with("/*") => {
                len = 2;
                Scan::Block(1)
            }
            Scan::Code => {
                let after_r = rest
                    .strip_prefix('r')
                    .filter(|_| !(prev.is_alphanumeric() || prev == '_'));
                let hashes = after_r.map_or(0, |a| a.len() - a.trim_start_matches('#').len());
                let raw = after_r.is_some_and(|a| a[hashes..].starts_with('"'));
                let alike = LOOK_ALIKES.iter().find(|(l, _)| *l == c).map(|&(_, a)| a);
                put = alike.unwrap_or(c);
                if raw {
                    len = 2 + hashes;
                    Scan::Raw(hashes)
                } else if put == '"' {
                    Scan::Str {
                        open: c,
                        escaped: false,
                    }
                } else if put == '\'' {
                    Scan::Char { escaped: false }
                } else {
                    // RON's whitespace beyond ASCII.
                    let space = matches!(
                        put,
                        '\u{85}' | '\u{200E}' | '\u{200F}' | '\u{2028}' | '\u{2029}'
                    );
                    if !put.is_ascii() && !space {
                        foreign = foreign.or(Some((out.len(), c)));
                    }
                    Scan::Code
                }
            }
            Scan::Str {
                escaped: true,
                open,
            } => Scan::Str {
                open,
                escaped: false,
            },
            Scan::Str { open, .. } if closes(open, c) => {
                put = '"';
                Scan::Code
            }
            Scan::Str { open, .. } => Scan::Str {
                open,
                escaped: c == '\\',
            },
            Scan::Raw(n) if c == '"' && rest[1..].starts_with(&"#".repeat(n)) => {
                len = 1 + n;
                Scan::Code
            }
            Scan::Char { escaped: false } if c == '\'' => Scan::Code,
            Scan::Char { escaped } => Scan::Char {
                escaped: !escaped && c == '\\',
            },
            Scan::LineComment if c == '\n' => Scan::Code,
            Scan::Block(n) if rest.starts_with("*/") => {
                len = 2;
                if n == 1 {
                    Scan::Code
                } else {
                    Scan::Block(n - 1)
                }
            }
            Scan::Block(n) if rest.starts_with("/*") => {
                len = 2;
                Scan::Block(n + 1)
            }
            other => other,
        };
        if len == c.len_utf8() {
            out.push(put);
        } else {
            out.push_str(&rest[..len]);
        }
        prev = c;
        i += len;
    }
    (out, foreign)
}

/// Whether `c` closes a string that `open` opened: `"`, or the right-hand quote (`’`, `”`) of
/// a look-alike quote's kind, so a left quote or an apostrophe may stand inside (`“it’s”`).
fn closes(open: char, c: char) -> bool {
    match open {
        '\u{2018}' | '\u{2019}' => matches!(c, '"' | '\u{2019}'),
        '\u{201C}' | '\u{201D}' => matches!(c, '"' | '\u{201D}'),
        _ => c == '"',
    }
}

/// What an error says of `c`, a character outside a string that `what` (a preset, a share
/// string) does not read: the character, its code point and, for a dash or a fullwidth form,
/// the ASCII to type instead.
pub fn foreign_char(c: char, what: &str) -> String {
    let ascii = match c {
        '\u{2010}'..='\u{2015}' => Some('-'),
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0),
        _ => None,
    };
    let hint = ascii.map(|a| format!(" (type `{a}`)")).unwrap_or_default();
    format!(
        "`{c}` (U+{:04X}) outside a string: {what} is written in ASCII there{hint}",
        c as u32
    )
}

/// `text` without a leading UTF-8 byte-order mark (U+FEFF), which some editors write at the
/// start of every file they save; every reader of a text file the user may edit calls this.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// 1-based (line, column) of where `field` is written in `text`: for `arms[i].name`, the i-th
/// arm's `name:` when every arm writes it, else the first; for a plain field, its first `name:`.
fn locate_field(text: &str, field: &str) -> Option<(usize, usize)> {
    if let Some(key) = field.strip_prefix("demos.") {
        let key = key.split('[').next().unwrap_or(key);
        let start = *key_positions(text, "demos").first()?;
        let pick = start + *key_positions(&text[start..], key).first()?;
        return Some(line_col(text, pick));
    }
    let (index, key) = match field.strip_prefix("arms[") {
        Some(rest) => {
            let (i, key) = rest.split_once("].")?;
            (i.parse::<usize>().ok(), key)
        }
        None => (None, field),
    };
    let mut hits = key_positions(text, key);
    if hits.is_empty() && index.is_some() {
        // A field left at its default (say an arm without `label`): point at the arm itself.
        hits = key_positions(text, "optimizer");
    } else if index.is_some() && count_arms(text) != hits.len() {
        hits.truncate(1);
    }
    let pick = match index {
        Some(i) if hits.len() > i => hits[i],
        _ => *hits.first()?,
    };
    Some(line_col(text, pick))
}

/// The line:column where `text` writes the field at `path` (`model.d_model`, `runs[1].twins`,
/// `problem.n`): each key is looked for after the previous one and an index counts the list's
/// elements. A field the text leaves at its default gives the nearest enclosing one it writes;
/// None when it writes not even the first.
fn locate_path(text: &str, path: &str) -> Option<(usize, usize)> {
    let mut at = None;
    for segment in path.split('.') {
        let (key, index) = match segment.split_once('[') {
            Some((key, rest)) => (key, rest.strip_suffix(']').and_then(|i| i.parse().ok())),
            None => (segment, None),
        };
        let from = at.unwrap_or(0);
        let Some(&hit) = key_positions(&text[from..], key).first() else {
            break;
        };
        at = Some(from + hit);
        if let Some(i) = index {
            match nth_element(text, from + hit, i) {
                Some(p) => at = Some(p),
                None => break,
            }
        }
    }
    at.map(|p| line_col(text, p))
}

/// The byte offset where the `n`th element (0-based) of the first list after `from` starts,
/// skipping nested brackets and strings; None if the list has fewer elements.
fn nth_element(text: &str, from: usize, n: usize) -> Option<usize> {
    let open = from + text[from..].find('[')?;
    let (mut depth, mut count, mut expecting) = (0usize, 0usize, true);
    let (mut in_string, mut escaped) = (false, false);
    for (p, b) in text.bytes().enumerate().skip(open + 1) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if expecting && !b.is_ascii_whitespace() {
            if depth == 0 && b == b']' {
                return None;
            }
            if count == n {
                return Some(p);
            }
            expecting = false;
        }
        match b {
            b'"' => in_string = true,
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => return None,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                count += 1;
                expecting = true;
            }
            _ => {}
        }
    }
    None
}

/// Byte offset of 1-based (line, column), clamped to the text.
fn byte_offset(text: &str, line: usize, col: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let rest = &text[start.min(text.len())..];
    start
        + rest
            .char_indices()
            .nth(col.saturating_sub(1))
            .map_or(rest.len(), |(i, _)| i)
}

/// The name of the field whose value starts nearest before byte `pos` (`name:` on the same
/// line or earlier), for parse errors that only give a position.
fn field_before(text: &str, pos: usize) -> Option<String> {
    let head = &text[..pos.min(text.len())];
    let colon = head.rfind(':')?;
    let name: String = head[..colon]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// 1-based (line, column) of byte offset `pos`, the column in characters as RON counts them.
fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let head = &text[..pos];
    let start = head.rfind('\n').map_or(0, |p| p + 1);
    (
        head.matches('\n').count() + 1,
        head[start..].chars().count() + 1,
    )
}

/// Byte offsets of `key` written as a field name (`key` then optional spaces then `:`).
fn key_positions(text: &str, key: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    text.match_indices(key)
        .map(|(p, _)| p)
        .filter(|&p| {
            let before_ok =
                p == 0 || !(bytes[p - 1].is_ascii_alphanumeric() || bytes[p - 1] == b'_');
            let after = text[p + key.len()..].trim_start();
            before_ok && after.starts_with(':')
        })
        .collect()
}

fn count_arms(text: &str) -> usize {
    key_positions(text, "optimizer").len()
}

/// Where a preset argument's text comes from (see [`source`]).
#[derive(Debug)]
pub enum Source {
    /// The RON text of a file or of a bundled preset, with the name errors should give it
    /// (the path as given, shown lossily when it is not UTF-8, or `presets/NAME.ron`).
    Ron {
        /// The preset's RON text.
        text: String,
        /// The file name errors quote.
        file: String,
    },
    /// A share string (or a link holding one), to be decoded by [`crate::share::decode`].
    Share(String),
}

/// Resolves a preset argument the way every preset kind reads it: an existing file at `arg`
/// (any file name the OS allows, UTF-8 or not) is read; otherwise a bundled preset called `arg`
/// (from `bundled`), or a share string, as `is_share` tells one (the callers pass
/// [`crate::share::is_share_string`]: `share` reads through this module, not the other way).
/// `kind` names the presets in the "not found" message ("preset", "attention preset", "zoo
/// preset").
///
/// Errors: unreadable files, files over `max` bytes or not UTF-8, and an argument that is
/// neither a file nor a bundled name nor a share string; each names the argument as given
/// (lossily for a non-UTF-8 name).
pub fn source(
    arg: &OsStr,
    bundled: &[(&str, &str)],
    kind: &str,
    max: u64,
    is_share: fn(&str) -> bool,
) -> Result<Source, PresetError> {
    let path = Path::new(arg);
    let shown = path.display().to_string();
    // A folder that happens to share a bundled preset's name does not hide the preset.
    if path.is_file() {
        let text = read_text(path, &shown, max)?;
        return Ok(Source::Ron { text, file: shown });
    }
    if let Some(name) = arg.to_str() {
        if is_share(name) {
            return Ok(Source::Share(name.to_string()));
        }
        if let Some((_, text)) = bundled.iter().find(|(n, _)| *n == name) {
            return Ok(Source::Ron {
                text: (*text).to_string(),
                file: format!("presets/{name}.ron"),
            });
        }
    }
    let names: Vec<&str> = bundled.iter().map(|(n, _)| *n).collect();
    Err(PresetError::whole(
        &shown,
        format!(
            "no such file, and no bundled {kind} of that name (bundled: {})",
            names.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::{locate_path, nth_element, plain_ascii};

    #[test]
    fn look_alikes_are_replaced_outside_strings_and_comments_only() {
        let text = "(a: ‘x’, b: −1,\u{a0}c: “it’s − ‘q’”, d: \"‘−’\", // ‘−’\n\
                    e: r#\"“\"−\"#, /* “ /* − */ ” */ f: '’', g: ：)";
        let (plain, foreign) = plain_ascii(text);
        assert_eq!(
            plain,
            "(a: \"x\", b: -1, c: \"it’s − ‘q’\", d: \"‘−’\", // ‘−’\n\
             e: r#\"“\"−\"#, /* “ /* − */ ” */ f: '’', g: ：)"
        );
        assert_eq!(plain.chars().count(), text.chars().count(), "char for char");
        let (i, c) = foreign.unwrap();
        assert_eq!((c, &plain[i..]), ('：', "：)"));
        assert_eq!(plain_ascii("(a: 1 –)").1, Some((6, '–')));
        assert_eq!(plain_ascii("(a: ”x”)").0, "(a: \"x\")");
        assert_eq!(
            plain_ascii("(a: \"x\u{2028}\")\u{2028}").1,
            None,
            "RON's whitespace"
        );
    }

    #[test]
    fn list_elements_are_counted_past_nested_brackets_and_strings() {
        let text = r#"x: ["a, [b\" ]", (c: [1, 2]), 3]"#;
        assert_eq!(nth_element(text, 0, 0), text.find("\"a"));
        assert_eq!(nth_element(text, 0, 1), text.find("(c"));
        assert_eq!(nth_element(text, 0, 2), text.find('3'));
        assert_eq!(nth_element(text, 0, 3), None);
        assert_eq!(nth_element("x: []", 0, 0), None);
    }

    #[test]
    fn a_field_path_is_found_key_after_key() {
        let text = "(\n  n: 1,\n  problem: (\n    n: 40,\n  ),\n)";
        assert_eq!(locate_path(text, "problem.n"), Some((4, 5)));
        assert_eq!(locate_path(text, "problem.rank"), Some((3, 3)));
        assert_eq!(locate_path(text, "budget"), None);
    }
}

//! Text for people: values cut to a readable length, and serde's messages (which name Rust types
//! such as `u64` or `struct RawHooks`) said in a plan's terms.

/// Values longer than this many characters are cut in messages.
pub const CLIP_CHARS: usize = 60;

/// A value as a message shows it: control characters escaped (a message stays on one line) and cut
/// to about [`CLIP_CHARS`] characters with "…".
pub fn clip(s: &str) -> String {
    clip_to(s, CLIP_CHARS)
}

/// [`clip`] at `max` characters.
pub fn clip_to(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A number as a message shows it: as written when short, else in scientific notation (`1e300`).
pub fn number(f: f64) -> String {
    let plain = f.to_string();
    if plain.len() <= 20 {
        plain
    } else {
        format!("{f:e}")
    }
}

/// A TOML value as a message names it: `"text"` (cut), a number as written, `true`, or `a list` /
/// `a table` / `a date` (never the whole of a long list).
pub fn describe(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("\"{}\"", clip(s)),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => number(*f),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(_) => "a date".into(),
        toml::Value::Array(_) => "a list".into(),
        toml::Value::Table(_) => "a table".into(),
    }
}

/// serde's and toml's messages in a plan's terms, with long values cut: `invalid type: string "x",
/// expected u64` → `expected a whole number ≥ 0, found "x"`; `data did not match any variant of
/// untagged enum CommandLine` → `expected a command: a string or a list of strings`.
pub fn humanize(msg_in: &str) -> String {
    // One line: line breaks become spaces, other control characters (a value's CR, NUL) escapes.
    let mut msg = String::with_capacity(msg_in.len());
    for c in msg_in.trim().chars() {
        match c {
            '\n' => msg.push(' '),
            c if c.is_control() => msg.extend(c.escape_default()),
            c => msg.push(c),
        }
    }
    let out = if msg.contains("value was too large") {
        "the integer is out of range (TOML integers are 64-bit)".to_string()
    } else if let Some((int, _)) = msg.split_once(" as i128") {
        let int = int.trim_start_matches("invalid type: integer ").trim_matches('`');
        format!("the integer {int} is out of range (TOML integers are 64-bit)")
    } else if let Some(name) = msg.strip_prefix("data did not match any variant of untagged enum ") {
        format!("expected {}", untagged(name.trim()))
    } else if let Some(rest) = msg.strip_prefix("invalid type: ").or_else(|| msg.strip_prefix("invalid value: ")) {
        match rest.rsplit_once(", expected ") {
            Some((found, expected)) => format!("expected {}, found {}", expected_words(expected), found_words(found)),
            None => format!("unexpected {}", found_words(rest)),
        }
    } else if let Some(rest) = msg.strip_prefix("missing field ") {
        format!("missing key {rest}")
    } else if let Some(rest) = msg.strip_prefix("unknown variant ") {
        format!(
            "unknown value {}",
            rest.replace(", expected one of ", " (use one of ").replace(", expected ", " (use ") + ")"
        )
    } else {
        msg.clone()
    };
    clip_long_parts(&scrub_type_names(&out))
}

fn untagged(name: &str) -> &'static str {
    match name {
        "CommandLine" => "a command: a string or a list of strings",
        "Commands" => "a shell command or a list of them",
        "DurationSpec" => "a duration such as \"10s\" or a number of seconds",
        _ => "a value of another type",
    }
}

/// serde's `expected ...` in plan terms.
fn expected_words(e: &str) -> String {
    let e = e.trim();
    let words = match e {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number ≥ 0",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a boolean" | "bool" => "true or false",
        "a map" => "a table",
        "a sequence" => "a list",
        "a string" | "a borrowed string" | "char" | "a character" => "a string",
        "option" => "a value",
        _ if e.starts_with("struct ") || e.starts_with("a map") => "a table",
        _ if e.starts_with("enum ") => "one of the documented values",
        _ if e.starts_with("tuple") || e.starts_with("a tuple") => "a list",
        _ => return e.to_string(),
    };
    words.to_string()
}

/// serde's description of what it found (`string "x"`, `integer `5``, `sequence`) in plan terms.
fn found_words(f: &str) -> String {
    let f = f.trim();
    if let Some(s) = f.strip_prefix("string ") {
        let inner = s.trim().trim_matches('"');
        return format!("\"{}\"", clip(inner));
    }
    for prefix in ["integer ", "floating point ", "boolean ", "character "] {
        if let Some(v) = f.strip_prefix(prefix) {
            return clip(v.trim().trim_matches('`'));
        }
    }
    match f {
        "sequence" => "a list".into(),
        "map" => "a table".into(),
        "unit value" | "unit" => "nothing".into(),
        other => clip(other),
    }
}

/// Last resort for type names that slipped through (`u64`, `Option`, `struct X`, `a::b`).
fn scrub_type_names(s: &str) -> String {
    s.split(' ')
        .filter_map(|w| {
            let bare = w.trim_matches(|c: char| !c.is_alphanumeric());
            let words = match bare {
                "u8" | "u16" | "u32" | "u64" | "usize" => "whole number ≥ 0",
                "i8" | "i16" | "i32" | "i64" | "isize" => "whole number",
                "f32" | "f64" => "number",
                "struct" | "enum" | "untagged" => return None,
                _ if bare.starts_with("Option") => "optional value",
                _ if rust_path(bare) => return Some(w.replace(bare, bare.rsplit("::").next().unwrap_or(bare))),
                _ => return Some(w.to_string()),
            };
            Some(w.replace(bare, words))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `a::b::C`: identifiers joined by `::` (not an IPv6 address or a value that holds `::`).
fn rust_path(w: &str) -> bool {
    w.contains("::")
        && w.split("::").all(|seg| {
            seg.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// Quoted parts (`"..."`, `` `...` ``) and words longer than [`CLIP_CHARS`] cut with "…", so a
/// 100 KB value is never echoed whole.
fn clip_long_parts(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len().min(4096));
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '`' {
            if let Some(len) = chars[i + 1..].iter().position(|x| *x == c) {
                let inner: String = chars[i + 1..i + 1 + len].iter().collect();
                out.push(c);
                out.push_str(&if inner.chars().count() > CLIP_CHARS { clip(&inner) } else { inner });
                out.push(c);
                i += len + 2;
                continue;
            }
        }
        // A long unquoted word.
        let end = chars[i..]
            .iter()
            .position(|x| x.is_whitespace() || *x == '"' || *x == '`')
            .map_or(chars.len(), |p| i + p.max(1));
        let word: String = chars[i..end].iter().collect();
        out.push_str(&if word.chars().count() > CLIP_CHARS + 20 {
            clip(&word)
        } else {
            word
        });
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_cut_and_escaped() {
        assert_eq!(clip("abc"), "abc");
        assert_eq!(clip("a\nb\0"), "a\\nb\\u{0}");
        let long = "x".repeat(100_000);
        let c = clip(&long);
        assert_eq!(c.chars().count(), CLIP_CHARS + 1);
        assert!(c.ends_with('…'));
    }

    #[test]
    fn serde_messages_speak_the_plan_language() {
        assert_eq!(
            humanize("invalid type: string \"many\", expected u64"),
            "expected a whole number ≥ 0, found \"many\""
        );
        assert_eq!(
            humanize("invalid value: integer `-1`, expected u64"),
            "expected a whole number ≥ 0, found -1"
        );
        assert_eq!(
            humanize("invalid type: floating point `1.5`, expected i64"),
            "expected a whole number, found 1.5"
        );
        assert_eq!(
            humanize("invalid type: string \"x\", expected struct RawHooks"),
            "expected a table, found \"x\""
        );
        assert_eq!(humanize("invalid type: sequence, expected a map"), "expected a table, found a list");
        assert_eq!(
            humanize("data did not match any variant of untagged enum CommandLine"),
            "expected a command: a string or a list of strings"
        );
        assert_eq!(humanize("missing field `url`"), "missing key `url`");
        assert_eq!(
            humanize("invalid type: integer `170141183460469231731687303715884105727` as i128, expected i64"),
            "the integer 170141183460469231731687303715884105727 is out of range (TOML integers are 64-bit)"
        );
        let long = format!("invalid type: string \"{}\", expected a boolean", "y".repeat(100_000));
        let h = humanize(&long);
        assert!(h.len() < 200 && h.contains('…'), "{h}");
        for bad in ["u64", "i64", "f64", "struct", "enum", "untagged", "Option"] {
            assert!(!humanize(&format!("expected {bad} here")).contains(bad), "{bad}");
        }
        assert_eq!(humanize("expected perflab::plan::Commands"), "expected Commands");
        assert_eq!(humanize("found \"http://[::1]:80\""), "found \"http://[::1]:80\"");
    }
}

//! Credentials in command lines: `-H`/`--header` arguments carrying a sensitive header in any
//! command, ab's `-C` (cookie), `-A` (basic auth) and `-P` (proxy auth), curl's `-u`/`--user`,
//! `-U`/`--proxy-user` and `-b`/`--cookie`. A command is an argv list or a shell string (split into
//! words as `sh` would, quotes and `|`, `;`, `&` included); `sh -c SCRIPT` is looked into.

use super::{is_sensitive, keep_or_redact};
use std::ops::Range;

/// Options whose value is a credential, by program (the basename of a word of the command).
const PROGRAM_OPTIONS: &[(&str, &[&str])] = &[
    ("ab", &["-A", "-C", "-P"]),
    ("curl", &["-u", "--user", "-U", "--proxy-user", "-b", "--cookie"]),
];

/// Options whose value is a header line (`Name: value`), in any program.
const HEADER_OPTIONS: &[&str] = &["-H", "--header"];

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh"];

/// A word (or a whole shell string) with its credentials redacted, and the credentials as they read.
pub type Redacted = (String, Vec<String>);

enum Opt<'a> {
    /// `-C VALUE`: the value is the next word.
    Separate,
    /// `-CVALUE`, `--cookie=VALUE`: (the option part, the value).
    Attached(&'a str, &'a str),
}

fn option<'a>(word: &'a str, options: &[&str]) -> Option<Opt<'a>> {
    for opt in options {
        if word == *opt {
            return Some(Opt::Separate);
        }
        let prefix_len = if opt.starts_with("--") {
            if !word.starts_with(&format!("{opt}=")) {
                continue;
            }
            opt.len() + 1
        } else {
            if !(word.len() > opt.len() && word.starts_with(opt)) {
                continue;
            }
            opt.len()
        };
        return Some(Opt::Attached(&word[..prefix_len], &word[prefix_len..]));
    }
    None
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `Cookie: a=1` → (`Cookie: [redacted]`, `a=1`) when the header is sensitive.
fn header(line: &str, marked: &[String]) -> Option<Redacted> {
    let (name, value) = line.split_once(':')?;
    let value = value.trim();
    if !is_sensitive(name.trim(), marked) || value.is_empty() {
        return None;
    }
    Some((format!("{}: {}", name.trim(), keep_or_redact(value)), vec![value.to_string()]))
}

/// For each word of one command, its redacted form when it carries a credential.
pub fn argv(words: &[String], marked: &[String]) -> Vec<Option<Redacted>> {
    let mut out: Vec<Option<Redacted>> = vec![None; words.len()];
    let in_shell = words.first().is_some_and(|w| SHELLS.contains(&basename(w)));
    let mut program: Option<&[&str]> = None;
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        if let Some((_, opts)) = PROGRAM_OPTIONS.iter().find(|(p, _)| *p == basename(w)) {
            program = Some(opts);
            i += 1;
            continue;
        }
        let prev = if i > 0 { words[i - 1].as_str() } else { "" };
        if in_shell && prev.starts_with('-') && !prev.starts_with("--") && prev.ends_with('c') {
            out[i] = shell(w, marked);
            i += 1;
            continue;
        }
        let next = words.get(i + 1).map(String::as_str);
        match option(w, HEADER_OPTIONS) {
            Some(Opt::Attached(opt, value)) => {
                out[i] = header(value, marked).map(|(red, parts)| (format!("{opt}{red}"), parts));
            }
            Some(Opt::Separate) => {
                if let Some(n) = next {
                    out[i + 1] = header(n, marked);
                }
                i += 1;
            }
            None => match program.and_then(|opts| option(w, opts)) {
                Some(Opt::Attached(opt, value)) => {
                    out[i] = Some((format!("{opt}{}", keep_or_redact(value)), vec![value.to_string()]));
                }
                Some(Opt::Separate) => {
                    if let Some(n) = next {
                        out[i + 1] = Some((keep_or_redact(n), vec![n.to_string()]));
                    }
                    i += 1;
                }
                None => {}
            },
        }
        i += 1;
    }
    out
}

/// A shell command string with its credentials redacted (the other words as written), if it has any.
pub fn shell(script: &str, marked: &[String]) -> Option<Redacted> {
    let tokens = tokenize(script);
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut parts = Vec::new();
    for command in tokens.split(|t| t.separator) {
        let words: Vec<String> = command.iter().map(|t| t.text.clone()).collect();
        for (tok, found) in command.iter().zip(argv(&words, marked)) {
            let Some((red, mut p)) = found else { continue };
            parts.append(&mut p);
            if red != tok.text {
                edits.push((tok.raw.clone(), quote(&red)));
            }
        }
    }
    if parts.is_empty() {
        return None;
    }
    let mut out = script.to_string();
    for (range, text) in edits.into_iter().rev() {
        out.replace_range(range, &text);
    }
    Some((out, parts))
}

/// A shell word or a command separator (`|`, `&`, `;`, `(`, `)`), with its place in the string.
struct Token {
    raw: Range<usize>,
    text: String,
    separator: bool,
}

/// Split a shell string into words as `sh` reads them (quotes removed, escapes applied; no
/// expansion), with command separators as tokens of their own.
fn tokenize(s: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word: Option<(usize, String)> = None;
    let mut chars = s.char_indices().peekable();
    let flush = |word: &mut Option<(usize, String)>, end: usize, out: &mut Vec<Token>| {
        if let Some((start, text)) = word.take() {
            out.push(Token {
                raw: start..end,
                text,
                separator: false,
            });
        }
    };
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => flush(&mut word, i, &mut out),
            '|' | '&' | ';' | '(' | ')' => {
                flush(&mut word, i, &mut out);
                out.push(Token {
                    raw: i..i + 1,
                    text: c.to_string(),
                    separator: true,
                });
            }
            '#' if word.is_none() => while chars.next_if(|(_, c)| *c != '\n').is_some() {},
            '\'' => {
                let text = &mut word.get_or_insert_with(|| (i, String::new())).1;
                for (_, c) in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    text.push(c);
                }
            }
            '"' => {
                let text = &mut word.get_or_insert_with(|| (i, String::new())).1;
                while let Some((_, c)) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next_if(|(_, n)| matches!(n, '$' | '`' | '"' | '\\' | '\n')) {
                            Some((_, '\n')) => {}
                            Some((_, n)) => text.push(n),
                            None => text.push('\\'),
                        },
                        _ => text.push(c),
                    }
                }
            }
            '\\' => match chars.next() {
                Some((_, '\n')) => {}
                Some((_, n)) => word.get_or_insert_with(|| (i, String::new())).1.push(n),
                None => word.get_or_insert_with(|| (i, String::new())).1.push('\\'),
            },
            _ => word.get_or_insert_with(|| (i, String::new())).1.push(c),
        }
    }
    flush(&mut word, s.len(), &mut out);
    out
}

/// A word as a shell reads it back: bare when it is plain (`[redacted]` included: the copy of a plan
/// is for reading, not for running), otherwise in single quotes.
fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=,@%+${}[]".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    fn redacted_words(s: &[&str]) -> Vec<String> {
        let w = words(s);
        argv(&w, &[])
            .into_iter()
            .zip(&w)
            .map(|(r, w)| r.map_or(w.clone(), |r| r.0))
            .collect()
    }

    #[test]
    fn argv_options_that_carry_credentials() {
        assert_eq!(
            redacted_words(&["ab", "-C", "sid=x1", "-Auser:pw", "-n", "10", "-H", "Cookie: a=1", "http://h/"]),
            [
                "ab",
                "-C",
                "[redacted]",
                "-A[redacted]",
                "-n",
                "10",
                "-H",
                "Cookie: [redacted]",
                "http://h/"
            ]
        );
        // -C means something else to other programs; -H with a harmless header is kept.
        assert_eq!(redacted_words(&["tar", "-C", "dir"]), ["tar", "-C", "dir"]);
        assert_eq!(
            redacted_words(&["wrk", "-H", "Accept: */*", "--header=authorization: Bearer t0k"]),
            ["wrk", "-H", "Accept: */*", "--header=authorization: [redacted]"]
        );
        assert_eq!(
            redacted_words(&["/usr/bin/timeout", "5", "/usr/bin/curl", "--user=u:p", "-b", "k=v"]),
            ["/usr/bin/timeout", "5", "/usr/bin/curl", "--user=[redacted]", "-b", "[redacted]"]
        );
        // A whole-word reference is kept (its matrix values are redacted instead).
        assert_eq!(redacted_words(&["ab", "-C", "${cookie}"]), ["ab", "-C", "${cookie}"]);
        let found = argv(&words(&["ab", "-C", "sid=${c}"]), &[]);
        assert_eq!(found[2], Some(("[redacted]".to_string(), vec!["sid=${c}".to_string()])));
    }

    #[test]
    fn shell_strings_keep_their_other_words_as_written() {
        let (out, parts) = shell(r#"ab -n 5 -C "sid=a b" 'http://h/' | tee "x y""#, &[]).expect("found");
        assert_eq!(out, r#"ab -n 5 -C [redacted] 'http://h/' | tee "x y""#);
        assert_eq!(parts, ["sid=a b"]);
        let (out, _) = shell("cd /tmp && curl -H 'Authorization: Bearer t' http://h/", &[]).expect("found");
        assert_eq!(out, "cd /tmp && curl -H 'Authorization: [redacted]' http://h/");
        assert!(shell("ab -n 5 http://h/ # -C x", &[]).is_none());
        let (out, _) = shell("sh -c 'ab -C sid=1 http://h/'", &[]).expect("nested");
        assert_eq!(out, "sh -c 'ab -C [redacted] http://h/'");
        let (out, _) = shell("curl -H X-Key:k1 h", &["x-key".to_string()]).expect("marked header");
        assert_eq!(out, "curl -H 'X-Key: [redacted]' h");
    }
}

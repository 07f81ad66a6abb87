//! A command as a plan writes it: an argv list (run directly) or one string (run with `sh -c`). The
//! same type serves the target's `command`, the exec workload's `command` and `warmup_command`.

use serde::Deserialize;

/// A command as an argv list (`["fio", "--name=x"]`, run directly) or a shell string (`"fio ... | tee"`,
/// run with `sh -c`).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq, Hash)]
#[serde(untagged)]
pub enum CommandLine {
    /// Numbers and booleans in the list are taken as their text, so that a plan's typed `"${n}"`
    /// (an integer after substitution) can be an argument: `["stress-ng", "--cpu", "${workers}"]`.
    #[serde(deserialize_with = "argv_words")]
    Argv(Vec<String>),
    Shell(String),
}

fn argv_words<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Word {
        Text(String),
        Int(i64),
        Float(f64),
        Bool(bool),
    }
    Ok(Vec::<Word>::deserialize(d)?
        .into_iter()
        .map(|w| match w {
            Word::Text(s) => s,
            Word::Int(i) => i.to_string(),
            Word::Float(f) => f.to_string(),
            Word::Bool(b) => b.to_string(),
        })
        .collect())
}

impl CommandLine {
    /// The program the command runs: `argv[0]`, or the first word of a shell string.
    pub fn program(&self) -> Option<String> {
        match self {
            CommandLine::Argv(v) => v.first().cloned(),
            CommandLine::Shell(s) => s.split_whitespace().next().map(str::to_string),
        }
    }

    /// The words of the command: the argv, or the shell string split on whitespace (good enough to
    /// find a tool's options such as `--output=FILE`; the shell still runs the string itself).
    pub fn words(&self) -> Vec<String> {
        match self {
            CommandLine::Argv(v) => v.clone(),
            CommandLine::Shell(s) => s.split_whitespace().map(|w| w.trim_matches(['"', '\'']).to_string()).collect(),
        }
    }

    /// The argv to spawn: the list itself, or `sh -c STRING`.
    pub fn argv(&self) -> Vec<String> {
        match self {
            CommandLine::Argv(v) => v.clone(),
            CommandLine::Shell(s) => vec!["sh".into(), "-c".into(), s.clone()],
        }
    }

    /// What every command must satisfy to be started at all: a program name and no NUL character
    /// (no program can receive one).
    pub fn check(&self) -> Result<(), String> {
        match self {
            CommandLine::Argv(argv) if argv.is_empty() => return Err("command is empty".into()),
            CommandLine::Argv(argv) => {
                if argv.first().is_none_or(|p| p.trim().is_empty()) {
                    return Err("the program (the list's first element) is empty".into());
                }
                if let Some((i, a)) = argv.iter().enumerate().find(|(_, a)| a.contains('\0')) {
                    return Err(format!(
                        "argument {} (\"{}\") holds a NUL character",
                        i + 1,
                        crate::util::text::clip(a)
                    ));
                }
            }
            CommandLine::Shell(s) if s.trim().is_empty() => return Err("command is empty".into()),
            CommandLine::Shell(s) if s.contains('\0') => return Err("the command holds a NUL character".into()),
            CommandLine::Shell(_) => {}
        }
        Ok(())
    }

    /// Human form for messages and the store.
    pub fn display(&self) -> String {
        match self {
            CommandLine::Argv(v) => v.join(" "),
            CommandLine::Shell(s) => s.clone(),
        }
    }
}

/// Environment variables a process can receive: names not empty, without `=` or NUL; values
/// without NUL.
pub fn check_env<'a>(vars: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<(), String> {
    for (k, v) in vars {
        let shown = crate::util::text::clip(k);
        if k.is_empty() {
            return Err("an environment variable has an empty name".into());
        }
        if k.contains('=') || k.contains('\0') {
            return Err(format!("environment variable name \"{shown}\" holds `=` or a NUL character"));
        }
        if v.contains('\0') {
            return Err(format!("the value of environment variable {shown} holds a NUL character"));
        }
    }
    Ok(())
}

/// The index of the program a command line really runs: past leading `VAR=value` words and the
/// wrappers that run it for as long as it runs (`env`, `nice`, `taskset`, `numactl`, `chrt`,
/// `ionice`, `stdbuf`, `sudo`, `time`, `exec`, `command`, and `timeout` when `through_timeout`),
/// with their options and the values those take. `words.len()` when nothing is left.
pub fn skip_wrappers(words: &[String], through_timeout: bool) -> usize {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let name = w.rsplit('/').next().unwrap_or(w);
        // Options of a wrapper that take a value as the next word, and its positional arguments.
        let (with_value, mut positional): (&[&str], u8) = match name {
            "env" => (&["-u", "-C", "-S"], 0),
            "sudo" => (&["-u", "-g", "-C", "-D", "-h", "-p"], 0),
            "stdbuf" => (&["-u", "-C", "-o", "-e", "-i"], 0),
            "nice" => (&["-n"], 0),
            "exec" | "command" | "time" => (&["-o", "-e", "-i", "-f"], 0),
            "chrt" => (&[], 1),
            "taskset" => (&["-C", "-N", "-m", "-p", "-i"], 1),
            "numactl" => (
                &[
                    "-C",
                    "-N",
                    "-m",
                    "-p",
                    "-i",
                    "--physcpubind",
                    "--cpunodebind",
                    "--membind",
                    "--preferred",
                    "--interleave",
                ],
                0,
            ),
            "ionice" => (&["-c", "-n", "-p"], 0),
            "timeout" if through_timeout => (&["-s", "-k"], 1),
            _ if w.contains('=') && !w.starts_with('-') && !w.contains('/') => {
                i += 1;
                continue;
            }
            _ => return i,
        };
        i += 1;
        while let Some(a) = words.get(i) {
            if a.starts_with('-') {
                i += if with_value.contains(&a.as_str()) { 2 } else { 1 };
            } else if name == "env" && a.contains('=') {
                i += 1;
            } else if positional > 0 {
                positional -= 1;
                i += 1;
            } else {
                break;
            }
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::CommandLine;

    #[test]
    fn argv_words_take_numbers_as_text_and_a_string_is_a_shell_command() {
        let v: CommandLine = toml::Value::Array(vec!["stress-ng".into(), "--cpu".into(), 2.into()])
            .try_into()
            .expect("argv");
        assert_eq!(v, CommandLine::Argv(vec!["stress-ng".into(), "--cpu".into(), "2".into()]));
        let s: CommandLine = toml::Value::String("fio x | tee y".into()).try_into().expect("shell");
        assert_eq!(s.argv(), ["sh", "-c", "fio x | tee y"]);
        assert_eq!(s.program().as_deref(), Some("fio"));
    }
}

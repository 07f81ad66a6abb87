//! Typed readings of plan values (durations, sizes, signals, CPU sets, command lines) and `${name}`
//! substitution. Errors are plain messages; the caller adds the file:line:column.

use crate::util::command::CommandLine;
use crate::util::cpus::{parse_cpu_list, CpuSpec};
use std::time::Duration;
use toml::Value;

/// Matrix parameter values of one trial, in the plan's declaration order.
pub type Params = Vec<(String, Value)>;

/// The `${name}` references in a string.
pub fn references(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        let after = &rest[i + 2..];
        match after.find('}') {
            Some(j) => {
                out.push(after[..j].trim().to_string());
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    out
}

/// Replace `${name}` in every string of `v`. A string that is exactly `"${name}"` takes the
/// parameter's typed value (an integer stays an integer).
pub fn substitute(v: &Value, params: &Params) -> Value {
    match v {
        Value::String(s) => {
            let refs = references(s);
            if refs.len() == 1 && s.trim() == format!("${{{}}}", refs[0]) {
                if let Some((_, val)) = params.iter().find(|(k, _)| *k == refs[0]) {
                    return val.clone();
                }
            }
            let mut out = s.clone();
            for (k, val) in params {
                out = out.replace(&format!("${{{k}}}"), &display(val));
            }
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|e| substitute(e, params)).collect()),
        Value::Table(t) => Value::Table(t.iter().map(|(k, e)| (k.clone(), substitute(e, params))).collect()),
        other => other.clone(),
    }
}

/// A value as it reads inside a string and in labels: strings bare, numbers as written.
pub fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Boolean(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// A duration: a string (`"500ms"`, `"10s"`) or a number of seconds.
pub fn duration(v: &Value) -> Result<Duration, String> {
    match v {
        Value::String(s) => crate::util::duration::parse(s),
        Value::Integer(i) if *i >= 0 => crate::util::duration::at_most_max(Duration::from_secs(*i as u64), &v.to_string()),
        Value::Float(f) if *f >= 0.0 && f.is_finite() => crate::util::duration::from_secs_f64(*f, &format!("{f:e}")),
        Value::Integer(_) | Value::Float(_) => Err(format!("negative duration {v}")),
        other => Err(format!("expected a duration such as \"10s\", found {}", other.type_str())),
    }
}

/// A memory size in bytes: an integer, or `"512M"`, `"1.5G"`, `"64MiB"` (K/M/G/T are powers of 1024).
pub fn memory(v: &Value) -> Result<u64, String> {
    match v {
        Value::Integer(i) if *i > 0 => Ok(*i as u64),
        Value::String(s) => parse_size(s),
        other => Err(format!("expected a size such as \"512M\", found {other}")),
    }
}

fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("invalid size \"{s}\" (try \"512M\" or \"2G\")"))?;
    let mult: f64 = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 1.0,
        "K" => 1024.0,
        "M" => 1024.0 * 1024.0,
        "G" => 1024.0 * 1024.0 * 1024.0,
        "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown size unit in \"{s}\" (use K, M, G or T)")),
    };
    let bytes = (n * mult).round();
    if bytes < 1.0 {
        return Err(format!("size \"{s}\" is zero"));
    }
    Ok(bytes as u64)
}

/// A signal by name (`"SIGTERM"`, `"TERM"`, `"int"`) or number.
pub fn signal(v: &Value) -> Result<i32, String> {
    let known = [
        ("HUP", libc::SIGHUP),
        ("INT", libc::SIGINT),
        ("QUIT", libc::SIGQUIT),
        ("KILL", libc::SIGKILL),
        ("USR1", libc::SIGUSR1),
        ("USR2", libc::SIGUSR2),
        ("TERM", libc::SIGTERM),
    ];
    match v {
        Value::Integer(i) if known.iter().any(|(_, n)| i64::from(*n) == *i) => Ok(*i as i32),
        Value::String(s) => {
            let up = s.trim().to_ascii_uppercase();
            let name = up.strip_prefix("SIG").unwrap_or(&up);
            known
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, n)| *n)
                .ok_or_else(|| format!("unknown signal \"{s}\" (use SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2 or SIGKILL)"))
        }
        other => Err(format!("unknown signal {other}")),
    }
}

/// CPUs: a count (`2`, `"2"`) or a list (`[0, 1]`, `"0-1,3"`).
pub fn cpus(v: &Value) -> Result<CpuSpec, String> {
    match v {
        Value::Integer(i) if *i >= 0 => Ok(CpuSpec::Count(*i as usize)),
        Value::String(s) => match s.trim().parse::<usize>() {
            Ok(n) => Ok(CpuSpec::Count(n)),
            Err(_) => parse_cpu_list(s.trim()).map(CpuSpec::List),
        },
        Value::Array(a) => a
            .iter()
            .map(|e| e.as_integer().filter(|i| *i >= 0).map(|i| i as usize))
            .collect::<Option<Vec<_>>>()
            .map(CpuSpec::List)
            .ok_or_else(|| "a CPU list holds CPU numbers such as [0, 1]".to_string()),
        other => Err(format!("expected a CPU count or list, found {other}")),
    }
}

/// A command line: a list of arguments, or a string run with `sh -c`.
pub fn command(v: &Value) -> Result<CommandLine, String> {
    match v {
        Value::String(s) if s.trim().is_empty() => Err("the command is empty".into()),
        Value::String(s) => Ok(CommandLine::Shell(s.clone())),
        Value::Array(a) if a.is_empty() => Err("the command is empty".into()),
        Value::Array(a) => a
            .iter()
            .map(|e| match e {
                Value::String(s) => Some(s.clone()),
                Value::Integer(_) | Value::Float(_) | Value::Boolean(_) => Some(display(e)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(CommandLine::Argv)
            .ok_or_else(|| "a command list holds strings".to_string()),
        other => Err(format!("expected a command (a list or a string), found {}", other.type_str())),
    }
}

/// A number (integer or float).
pub fn number(v: &Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        vec![
            ("concurrency".into(), Value::Integer(10)),
            ("model".into(), Value::String("pool".into())),
        ]
    }

    #[test]
    fn exact_references_keep_their_type_and_embedded_ones_become_text() {
        assert_eq!(substitute(&Value::String("${concurrency}".into()), &params()), Value::Integer(10));
        assert_eq!(
            substitute(&Value::String("--model=${model} -c ${concurrency}".into()), &params()),
            Value::String("--model=pool -c 10".into())
        );
        assert_eq!(references("a ${x} b ${ y }"), ["x", "y"]);
    }

    #[test]
    fn sizes_signals_cpus_and_durations() {
        assert_eq!(memory(&Value::String("512M".into())), Ok(512 << 20));
        assert_eq!(memory(&Value::String("1.5GiB".into())), Ok(3 << 29));
        assert!(memory(&Value::String("12Q".into())).is_err());
        assert_eq!(signal(&Value::String("sigint".into())), Ok(libc::SIGINT));
        assert!(signal(&Value::String("SIGFOO".into())).is_err());
        assert_eq!(cpus(&Value::String("0-1".into())), Ok(CpuSpec::List(vec![0, 1])));
        assert_eq!(cpus(&Value::Integer(2)), Ok(CpuSpec::Count(2)));
        assert_eq!(duration(&Value::String("250ms".into())), Ok(Duration::from_millis(250)));
        assert!(duration(&Value::Integer(-3)).is_err());
        assert!(duration(&Value::String("-3s".into())).is_err());
    }
}

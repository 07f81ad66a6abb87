//! `[[probes]]`: latency probes that run beside the monitor through every phase of every trial (the
//! engine is `crate::probe`). Checked here, each problem at its `file:line:col`; `${name}` in a
//! probe's values is substituted per matrix point, so a probe can follow the point's target.

use super::raw::RawProbe;
use super::source::Source;
use super::values::{self, substitute, Params};
use crate::probe::{IcmpSocket, Kind, ProbeSpec, Target};
use toml::{Spanned, Value};

/// The most probes a plan may have.
pub const MAX_PROBES: usize = 32;

/// The probes' names, in plan order: `name` as given, else the kind (`tcp`), numbered when a kind
/// appears more than once (`tcp1`, `tcp2`). A name names the probe's metrics (`probe_<name>_p99_ms`),
/// so it is letters, digits and `_`, fixed (no `${...}`), and unique.
pub(super) fn names(raw: &[Spanned<RawProbe>], src: &Source) -> anyhow::Result<Vec<String>> {
    if raw.len() > MAX_PROBES {
        return Err(src.error(
            &src.key_span(&["probes"]),
            format!("{} probes: a plan may have at most {MAX_PROBES}", raw.len()),
        ));
    }
    let kinds: Vec<Option<String>> = raw.iter().map(|p| p.get_ref().kind.as_ref().map(|k| k.get_ref().clone())).collect();
    let mut out: Vec<String> = Vec::new();
    for (i, p) in raw.iter().enumerate() {
        let name = match &p.get_ref().name {
            Some(n) => {
                let text = n.get_ref();
                if text.is_empty() || !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(src.error(
                        &n.span(),
                        format!(
                            "[[probes]] name \"{}\": use letters, digits and _ only (it names the probe's metrics, probe_<name>_p99_ms)",
                            crate::util::text::clip(text)
                        ),
                    ));
                }
                text.clone()
            }
            None => {
                let Some(kind) = &kinds[i] else {
                    return Err(missing_kind(p, src));
                };
                let same = kinds.iter().filter(|k| k.as_ref() == Some(kind)).count();
                if same > 1 {
                    let nth = kinds[..=i].iter().filter(|k| k.as_ref() == Some(kind)).count();
                    format!("{kind}{nth}")
                } else {
                    kind.clone()
                }
            }
        };
        if out.contains(&name) {
            let span = p.get_ref().name.as_ref().map_or_else(|| p.span(), |n| n.span());
            return Err(src.error(
                &span,
                format!("[[probes]] two probes are named `{name}`: give each a distinct `name`"),
            ));
        }
        out.push(name);
    }
    Ok(out)
}

fn missing_kind(p: &Spanned<RawProbe>, src: &Source) -> anyhow::Error {
    src.error(&p.span(), "[[probes]] needs a `kind` (icmp, tcp, http, udp or command)")
}

/// The probes of one matrix point (`params` substituted), in plan order.
pub(super) fn resolve(raw: &[Spanned<RawProbe>], names: &[String], params: &Params, src: &Source) -> anyhow::Result<Vec<ProbeSpec>> {
    raw.iter().zip(names).map(|(p, name)| one(p, name, params, src)).collect()
}

fn one(p: &Spanned<RawProbe>, name: &str, params: &Params, src: &Source) -> anyhow::Result<ProbeSpec> {
    let r = p.get_ref();
    let at = |v: &Spanned<Value>, msg: String| src.error(&v.span(), format!("[[probes]] {name}: {msg}"));
    let sub = |v: &Spanned<Value>| substitute(v.get_ref(), params);
    let Some(kind_text) = &r.kind else {
        return Err(missing_kind(p, src));
    };
    let kind = Kind::parse(kind_text.get_ref()).map_err(|e| src.error(&kind_text.span(), format!("[[probes]] {e}")))?;
    let Some(t) = &r.target else {
        let example = match kind {
            Kind::Icmp => "\"127.0.0.1\"",
            Kind::Tcp | Kind::Udp => "\"127.0.0.1:8080\"",
            Kind::Http => "\"http://127.0.0.1:8080/\"",
            Kind::Command => "\"ssh server true\"",
        };
        return Err(src.error(&p.span(), format!("[[probes]] {name}: needs a `target` (e.g. target = {example})")));
    };
    let target = match (kind, sub(t)) {
        (Kind::Command, v) => Target::Command(values::command(&v).map_err(|m| at(t, format!("target: {m}")))?),
        (_, Value::String(s)) => Target::Address(s),
        (_, other) => return Err(at(t, format!("target: expected a string, found {}", values::describe(&other)))),
    };
    let mut spec = match target {
        Target::Address(a) => ProbeSpec::new(kind, a),
        Target::Command(c) => {
            let mut s = ProbeSpec::shell("true");
            s.target = Target::Command(c);
            s
        }
    };
    spec.name = Some(name.to_string());
    if let Some(v) = &r.interval {
        spec.interval = values::duration(&sub(v)).map_err(|m| at(v, format!("interval: {m}")))?;
    }
    if let Some(v) = &r.timeout {
        spec.timeout = values::duration(&sub(v)).map_err(|m| at(v, format!("timeout: {m}")))?;
    }
    if let Some(v) = &r.size {
        match sub(v).as_integer() {
            Some(n) if n >= 1 => spec.size = Some(n as usize),
            _ => {
                return Err(at(
                    v,
                    format!("size: expected a number of bytes, found {}", values::describe(&sub(v))),
                ))
            }
        }
    }
    if let Some(v) = &r.socket {
        let text = sub(v);
        let s = text
            .as_str()
            .ok_or_else(|| at(v, "socket: expected \"auto\", \"raw\" or \"datagram\"".into()))?;
        spec.icmp_socket = IcmpSocket::parse(s).map_err(|e| at(v, e.to_string()))?;
    }
    if let Some(v) = &r.insecure {
        spec.insecure = sub(v)
            .as_bool()
            .ok_or_else(|| at(v, format!("insecure: expected true or false, found {}", values::describe(&sub(v)))))?;
    }
    if let Some(v) = &r.cacert {
        match sub(v) {
            Value::String(s) if !s.is_empty() => spec.cacert = Some(s),
            other => return Err(at(v, format!("cacert: expected a file's path, found {}", values::describe(&other)))),
        }
    }
    if let Target::Address(a) = &spec.target {
        if let Some(why) = address_problem(kind, a) {
            return Err(at(t, format!("target: {why}")));
        }
    }
    spec.check().map_err(|e| src.error(&p.span(), format!("[[probes]] {name}: {e}")))?;
    Ok(spec)
}

/// What is wrong with an address of `kind` as written (no name is resolved here: the target may
/// only exist once the run starts it).
fn address_problem(kind: Kind, a: &str) -> Option<String> {
    match kind {
        Kind::Tcp | Kind::Udp => crate::util::url::host_port(a)
            .err()
            .map(|why| format!("`{}`: {why}", crate::util::text::clip(a))),
        Kind::Http => match crate::util::url::Url::parse(a) {
            Err(_) if !a.contains("://") => Some(format!("`{}` is not an http:// or https:// URL", crate::util::url::shown(a))),
            Err(why) => Some(format!("`{}`: {why}", crate::util::url::shown(a))),
            Ok(u) if u.scheme != "http" && u.scheme != "https" => {
                Some(format!("`{}` is not an http:// or https:// URL", crate::util::url::shown(a)))
            }
            Ok(u) if u.host.is_empty() => Some(format!("`{}` has no host", crate::util::url::shown(a))),
            Ok(_) => None,
        },
        Kind::Icmp => a.contains('/').then(|| format!("`{a}` is not a host name or address")),
        Kind::Command => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::probe::{Kind, Target};
    use crate::util::command::CommandLine;

    const BASE: &str = "name = \"p\"\n[workload]\ntype = \"exec\"\ncommand = \"true\"\n[matrix]\nport = [9000, 9001]\n";

    #[test]
    fn names_default_to_the_kind_numbered_when_it_repeats_and_values_follow_the_point() {
        let text = format!(
            "{BASE}[[probes]]\nkind = \"tcp\"\ntarget = \"127.0.0.1:${{port}}\"\n[[probes]]\nkind = \"tcp\"\ntarget = \"127.0.0.1:22\"\ninterval = \"50ms\"\n[[probes]]\nkind = \"command\"\ntarget = [\"ssh\", \"h\", \"true\"]\n"
        );
        let plan = crate::plan::parse_str(&text, "p.toml").expect("valid");
        assert_eq!(plan.points.len(), 2);
        let names: Vec<_> = plan.points[0].probes.iter().map(|p| p.name.clone().unwrap()).collect();
        assert_eq!(names, ["tcp1", "tcp2", "command"]);
        let targets: Vec<String> = plan.points.iter().map(|p| p.probes[0].target.to_string()).collect();
        assert_eq!(targets, ["127.0.0.1:9000", "127.0.0.1:9001"]);
        let p = &plan.points[0].probes;
        assert_eq!(
            (p[0].interval, p[1].interval),
            (crate::probe::spec::DEFAULT_INTERVAL, std::time::Duration::from_millis(50))
        );
        assert_eq!(p[2].kind, Kind::Command);
        assert_eq!(
            p[2].target,
            Target::Command(CommandLine::Argv(vec!["ssh".into(), "h".into(), "true".into()]))
        );
        assert_eq!(crate::plan::expand(&plan)[1].probes[0].target.to_string(), "127.0.0.1:9001");
    }

    #[test]
    fn a_name_with_a_reference_or_a_probe_without_a_target_is_refused_at_its_line() {
        let text = format!("{BASE}[[probes]]\nkind = \"udp\"\nname = \"u_${{port}}\"\ntarget = \"127.0.0.1:1\"\n");
        let e = crate::plan::parse_str(&text, "p.toml").unwrap_err().to_string();
        assert!(e.starts_with("p.toml:9:8:") && e.contains("letters, digits and _"), "{e}");
        let text = format!("{BASE}[[probes]]\nkind = \"http\"\n");
        let e = crate::plan::parse_str(&text, "p.toml").unwrap_err().to_string();
        assert!(e.starts_with("p.toml:7:") && e.contains("needs a `target`"), "{e}");
        let text = format!("{BASE}[[probes]]\nkind = \"http\"\ntarget = \"127.0.0.1:80\"\n");
        let e = crate::plan::parse_str(&text, "p.toml").unwrap_err().to_string();
        assert!(e.starts_with("p.toml:9:") && e.contains("not an http:// or https:// URL"), "{e}");
    }
}

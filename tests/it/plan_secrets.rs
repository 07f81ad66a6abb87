//! Secrets found on the parsed plan: the copy a run keeps (valid TOML, no secret), labels and
//! parameters, error messages, the `secrets` key. (End-to-end runs: `run_plan.rs`.)

use perflab::plan::{self, Plan};

const SECRET: &str = "s3cretT0kenXyz";

fn parse(src: &str) -> Plan {
    plan::parse_str(src, "plan.toml").unwrap_or_else(|e| panic!("{e:#}"))
}

fn err(src: &str) -> String {
    let e = plan::parse_str(src, "plan.toml").expect_err("an error");
    assert_eq!(perflab::error::exit_code(&e), 2, "{e:#}");
    perflab::error::one_line(&e)
}

/// The copy parses as TOML, holds no secret, and says so.
fn copy_of(p: &Plan) -> toml::Table {
    let copy = p.secrets.redacted_source();
    assert!(!copy.contains(SECRET), "{copy}");
    assert!(p.secrets.had_secrets());
    toml::from_str(copy).unwrap_or_else(|e| panic!("the copy is not TOML: {e}\n{copy}"))
}

fn at<'a>(t: &'a toml::Table, path: &[&str]) -> &'a toml::Value {
    let mut v = t.get(path[0]).unwrap_or_else(|| panic!("{path:?}"));
    for k in &path[1..] {
        v = v.get(k).unwrap_or_else(|| panic!("{path:?}"));
    }
    v
}

const HEAD: &str = "name = \"s\"\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:1/\"\n";

#[test]
fn a_header_value_from_the_matrix_is_redacted_in_the_copy_labels_and_parameters() {
    let src =
        format!("{HEAD}headers = {{ Authorization = \"${{auth}}\" }}\n[matrix]\nauth = [\"Bearer {SECRET}\"]\nconnections = [1, 2]\n");
    let p = parse(&src);
    let copy = copy_of(&p);
    assert_eq!(at(&copy, &["workload", "headers", "Authorization"]).as_str(), Some("${auth}"));
    assert_eq!(
        at(&copy, &["matrix", "auth"]).as_array().map(|a| a[0].as_str()),
        Some(Some("[redacted]"))
    );
    assert_eq!(p.points[0].label, "auth=[redacted] connections=1");
    assert_eq!(p.points[1].params_json(), r#"{"auth":"[redacted]","connections":2}"#);
    // The request itself still carries the real value.
    let sent = p.points[0].workload["headers"]["Authorization"].as_str().map(str::to_string);
    assert_eq!(sent, Some(format!("Bearer {SECRET}")));
    assert_eq!(
        p.secrets.redactor().apply(&format!("401 for Bearer {SECRET}")),
        "401 for [redacted]"
    );
    // Several values stay apart; an exclude entry naming one is redacted alike.
    let src = format!(
        "{HEAD}headers = {{ Cookie = \"sid=${{c}}\" }}\n[matrix]\nc = [\"{SECRET}1\", \"{SECRET}2\", \"{SECRET}3\"]\n\
         exclude = [{{ c = \"{SECRET}3\" }}]\n"
    );
    let p = parse(&src);
    let copy = copy_of(&p);
    let labels: Vec<&str> = p.points.iter().map(|x| x.label.as_str()).collect();
    assert_eq!(labels, ["c=[redacted-1]", "c=[redacted-2]"]);
    assert_eq!(at(&copy, &["workload", "headers", "Cookie"]).as_str(), Some("[redacted]"));
    let excl = at(&copy, &["matrix", "exclude"]).as_array().expect("list");
    assert_eq!(excl[0].get("c").and_then(|v| v.as_str()), Some("[redacted-3]"));
}

#[test]
fn multi_line_strings_escaped_keys_and_comments_leave_no_trace() {
    let src = format!(
        "{HEAD}# the old one: Authorization: Bearer {SECRET}\n\
         headers = {{ Authorization = \"\"\"\nBearer {SECRET}\"\"\", \"Cook\\u0069e\" = 'sid={SECRET}', Accept = \"*/*\" }}\n\
         body = \"token {SECRET} inside\"\n"
    );
    let p = parse(&src);
    let copy = copy_of(&p);
    let h = at(&copy, &["workload", "headers"]);
    assert_eq!(h.get("Authorization").and_then(|v| v.as_str()), Some("[redacted]"));
    assert_eq!(h.get("Cookie").and_then(|v| v.as_str()), Some("[redacted]"));
    assert_eq!(h.get("Accept").and_then(|v| v.as_str()), Some("*/*"));
    assert_eq!(at(&copy, &["workload", "body"]).as_str(), Some("token [redacted] inside"));
    let text = p.secrets.redacted_source();
    assert!(text.contains("# the old one: Authorization: [redacted]"), "{text}");
    assert!(text.starts_with("name = \"s\"\n"), "the rest as written: {text}");
}

#[test]
fn credentials_in_exec_commands_are_redacted_word_by_word() {
    let src = format!(
        "name = \"s\"\n[workload]\ntype = \"exec\"\n\
         command = [\"ab\", \"-n\", \"10\", \"-C\", \"sid={SECRET}\", \"-A\", \"u:{SECRET}\", \"http://127.0.0.1:1/\"]\n\
         warmup_command = \"curl -s -H 'Cookie: k={SECRET}' http://127.0.0.1:1/\"\n"
    );
    let p = parse(&src);
    let copy = copy_of(&p);
    let argv: Vec<&str> = at(&copy, &["workload", "command"])
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(
        argv,
        ["ab", "-n", "10", "-C", "[redacted]", "-A", "[redacted]", "http://127.0.0.1:1/"]
    );
    assert_eq!(
        at(&copy, &["workload", "warmup_command"]).as_str(),
        Some("curl -s -H 'Cookie: [redacted]' http://127.0.0.1:1/")
    );
    // A command built from the matrix: the parameter is redacted, the substituted word found.
    let src = format!(
        "name = \"s\"\n[workload]\ntype = \"exec\"\ncommand = \"ab -n 1 -C ${{cookie}} http://127.0.0.1:1/\"\n\
         [matrix]\ncookie = [\"sid={SECRET}\"]\n"
    );
    let p = parse(&src);
    let copy = copy_of(&p);
    assert_eq!(
        at(&copy, &["workload", "command"]).as_str(),
        Some("ab -n 1 -C ${cookie} http://127.0.0.1:1/")
    );
    assert_eq!(p.points[0].label, "cookie=[redacted]");
}

#[test]
fn variables_marked_secret_are_redacted_and_a_wrong_name_is_an_error() {
    let src = format!(
        "name = \"s\"\n[target]\ncommand = [\"true\"]\nenv = {{ PGPASSWORD = \"{SECRET}\", PGUSER = \"bench\" }}\n\
         secrets = [\"PGPASSWORD\"]\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n\
         env = {{ TOKEN = \"${{tok}}\" }}\nsecrets = [\"TOKEN\"]\n[matrix]\ntok = [\"{SECRET}\"]\n"
    );
    let p = parse(&src);
    let copy = copy_of(&p);
    assert_eq!(at(&copy, &["target", "env", "PGPASSWORD"]).as_str(), Some("[redacted]"));
    assert_eq!(at(&copy, &["target", "env", "PGUSER"]).as_str(), Some("bench"));
    assert_eq!(p.points[0].label, "tok=[redacted]");
    // The workload never sees `secrets`; the target keeps its real values.
    assert!(p.points[0].workload.get("secrets").is_none());
    let env = &p.points[0].target.as_ref().expect("target").env;
    assert!(env.contains(&("PGPASSWORD".to_string(), SECRET.to_string())));

    let bad = src.replace("secrets = [\"PGPASSWORD\"]", "secrets = [\"PGPASWORD\"]");
    let e = err(&bad);
    assert!(e.starts_with("plan.toml:5:"), "{e}");
    assert!(
        e.contains("`PGPASWORD` is not in [target] env") && e.contains("did you mean `PGPASSWORD`?"),
        "{e}"
    );
    let e = err(&src.replace("secrets = [\"TOKEN\"]", "secrets = \"TOKEN\""));
    assert!(e.contains("[workload] secrets: expected a list of names"), "{e}");
    // A header of an http workload can be marked too (names compare without case).
    let src = format!("{HEAD}headers = {{ X-Api-Key = \"{SECRET}\", Accept = \"*/*\" }}\nsecrets = [\"x-api-key\"]\n");
    let p = parse(&src);
    let copy = copy_of(&p);
    assert_eq!(at(&copy, &["workload", "headers", "X-Api-Key"]).as_str(), Some("[redacted]"));
    assert_eq!(at(&copy, &["workload", "secrets"]).as_array().map(Vec::len), Some(1));
}

#[test]
fn error_messages_never_show_a_secret() {
    // A value listed twice is named in the error: not a secret one.
    let src = format!("{HEAD}headers = {{ Authorization = \"${{auth}}\" }}\n[matrix]\nauth = [\"Bearer {SECRET}\", \"Bearer {SECRET}\"]\n");
    let e = err(&src);
    assert!(e.contains("lists") && e.contains("[redacted]") && !e.contains(SECRET), "{e}");
}

#[test]
fn a_short_secret_is_redacted_where_the_plan_puts_it() {
    // Too short to be searched for in free text, but never in the copy.
    let p = parse(&format!("{HEAD}headers = {{ Cookie = \"a=1\" }}\n"));
    let copy: toml::Table = toml::from_str(p.secrets.redacted_source()).expect("TOML");
    assert_eq!(at(&copy, &["workload", "headers", "Cookie"]).as_str(), Some("[redacted]"));
    assert!(!p.secrets.redacted_source().contains("a=1"));
}

#[test]
fn a_plan_without_secrets_is_kept_as_written() {
    let src = format!("{HEAD}headers = {{ Accept = \"*/*\" }} # a comment\n");
    let p = parse(&src);
    assert!(!p.secrets.had_secrets());
    assert_eq!(p.secrets.redacted_source(), src);
}

#[test]
fn a_secret_written_twice_in_one_string_is_redacted_each_time() {
    // The credential option is found once; its value appears again later in the same hook and in
    // another word of the same command.
    let src = format!(
        "name = \"s\"\n[workload]\ntype = \"exec\"\n\
         command = [\"sh\", \"-c\", \"curl -u admin:{SECRET} http://127.0.0.1:1/; echo sent {SECRET}\"]\n\
         [matrix]\nvariant = [\"a\"]\n\
         [variant.a]\nsetup = \"curl -u admin:{SECRET} http://127.0.0.1:1/; echo hook {SECRET}\"\n\
         teardown = [\"ab -C sid={SECRET} http://127.0.0.1:1/ && echo sid={SECRET}\"]\n"
    );
    let p = parse(&src);
    let copy = copy_of(&p);
    assert_eq!(
        at(&copy, &["variant", "a", "setup"]).as_str(),
        Some("curl -u [redacted] http://127.0.0.1:1/; echo hook [redacted]")
    );
    assert_eq!(
        at(&copy, &["variant", "a", "teardown"]).as_array().map(|a| a[0].as_str()),
        Some(Some("ab -C [redacted] http://127.0.0.1:1/ && echo [redacted]"))
    );
    assert_eq!(
        at(&copy, &["workload", "command"]).as_array().map(|a| a[2].as_str()),
        Some(Some("curl -u [redacted] http://127.0.0.1:1/; echo sent [redacted]"))
    );
}

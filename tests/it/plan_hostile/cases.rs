//! The table of hostile plans: each with what the refusal must say.

use super::{big_matrix, EXEC, HTTP, TARGET};

pub(super) fn bad_plans() -> Vec<(&'static str, String, &'static str)> {
    [overflows(), run_time_failures(), messages()].concat()
}

/// Durations, sizes and counts that overflowed or allocated without bound.
fn overflows() -> Vec<(&'static str, String, &'static str)> {
    vec![
        // Durations that overflowed a Duration or an Instant.
        (
            "load 1e20",
            format!("{EXEC}[phases]\nload = 1e20\n"),
            "longer than the longest duration",
        ),
        (
            "load u64::MAX s",
            format!("{EXEC}[phases]\nload = \"18446744073709551615s\"\n"),
            "longest duration",
        ),
        ("load 9e18", format!("{EXEC}[phases]\nload = 9e18\n"), "longest duration"),
        ("baseline 9e18", format!("{EXEC}[phases]\nbaseline = 9e18\n"), "longest duration"),
        ("warmup 366 days", format!("{EXEC}[phases]\nwarmup = \"366d\"\n"), "365 days"),
        ("load nan", format!("{EXEC}[phases]\nload = nan\n"), "not a number"),
        ("load inf", format!("{EXEC}[phases]\nload = inf\n"), "longest duration"),
        ("load -inf", format!("{EXEC}[phases]\nload = -inf\n"), "negative"),
        ("interval text nan", format!("{EXEC}[phases]\ninterval = \"nan\"\n"), "not a number"),
        ("exec timeout 1e300", format!("{EXEC}timeout = 1e300\n"), "longest duration"),
        ("http timeout 1e19s", format!("{HTTP}timeout = \"1e19s\"\n"), "invalid duration"),
        (
            "http duration 400d",
            format!("{HTTP}requests = 5\nduration = \"400d\"\n"),
            "longest duration",
        ),
        ("stop grace 1e19", format!("{TARGET}stop = {{ grace = 1e19 }}\n"), "grace"),
        ("ready delay 1.8e19", format!("{TARGET}ready = {{ delay = 1.8e19 }}\n"), "delay"),
        (
            "ready timeout -1",
            format!("{TARGET}ready = {{ tcp = \"127.0.0.1:1\", timeout = -1 }}\n"),
            "negative",
        ),
        // Sizes and CPU sets that allocated without bound.
        (
            "cpu range 0-99999999999",
            format!("{TARGET}cpus = \"0-99999999999\"\n"),
            "largest CPU number",
        ),
        ("cpu number 1e11", format!("{TARGET}cpus = [99999999999]\n"), "CPU numbers from 0"),
        (
            "cpu count 1e14",
            format!("{TARGET}cpus = 99999999999999\n"),
            "more CPUs than any machine",
        ),
        (
            "cpu list 20 digits",
            format!("{TARGET}cpus = \"99999999999999999999999\"\n"),
            "bad CPU list",
        ),
        ("cpu list twice", format!("{TARGET}cpus = [0, 0]\n"), "twice"),
        ("connections 1e12", format!("{HTTP}connections = 1000000000000\n"), "connections"),
        ("threads 1e12", format!("{HTTP}threads = 1000000000000\n"), "threads"),
        ("streams 1e9", format!("{HTTP}http2 = true\nstreams = 1000000000\n"), "streams"),
        ("rate 1e300", format!("{HTTP}rate = 1e300\n"), "rate"),
        ("rate 1e-300", format!("{HTTP}rate = 1e-300\n"), "rate"),
        (
            "memory 1e11 T",
            format!("{TARGET}memory = \"99999999999T\"\n"),
            "largest memory limit",
        ),
        ("memory 1 byte", format!("{TARGET}memory = 1\n"), "smallest memory limit"),
        ("memory nan", format!("{TARGET}memory = nan\n"), "size"),
        (
            "body_file /dev/zero",
            format!("{HTTP}body_file = \"/dev/zero\"\n"),
            "not a regular file",
        ),
        (
            "cacert /dev/zero",
            HTTP.replace("http://", "https://") + "cacert = \"/dev/zero\"\n",
            "not a regular file",
        ),
        ("exec timeout 0", format!("{EXEC}timeout = 0\n"), "longer than 0s"),
        ("http timeout 0", format!("{HTTP}timeout = \"0s\"\n"), "longer than 0s"),
        (
            "1001 thresholds",
            format!("thresholds = [{}]\n{EXEC}", vec!["\"wall_time_s < 1\""; 1001].join(", ")),
            "at most 1000",
        ),
        ("repetitions 1e6", format!("repetitions = 1000000\n{EXEC}"), "between 1 and 10000"),
    ]
}

/// Plans the dry run accepted and the run then failed.
fn run_time_failures() -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("cpu_quota 1e308", format!("{TARGET}cpu_quota = 1e308\n"), "cpu_quota"),
        ("cpu_quota 1e-300", format!("{TARGET}cpu_quota = 1e-300\n"), "cpu_quota"),
        ("cpu_quota nan", format!("{TARGET}cpu_quota = nan\n"), "cpu_quota"),
        ("target program empty", TARGET.replace("[\"sleep\", \"5\"]", "[\"\"]"), "program"),
        ("target program missing", TARGET.replace("sleep", "/no/such/program"), "not found"),
        (
            "target program not on PATH",
            TARGET.replace("sleep", "no-such-program-xyz"),
            "not found on PATH",
        ),
        ("target cwd missing", format!("{TARGET}cwd = \"/no/such/dir\"\n"), "not a directory"),
        ("target argv NUL", TARGET.replace("\"5\"", "\"5\\u0000\""), "NUL"),
        ("target env NUL", format!("{TARGET}env = {{ A = \"x\\u0000y\" }}\n"), "NUL"),
        ("target env name =", format!("{TARGET}env = {{ \"A=B\" = \"x\" }}\n"), "`=`"),
        (
            "target env table",
            format!("{TARGET}env = {{ A = {{ b = 1 }} }}\n"),
            "expected a string",
        ),
        ("exec argv NUL", EXEC.replace("[\"true\"]", "[\"echo\", \"a\\u0000b\"]"), "NUL"),
        ("exec program empty", EXEC.replace("[\"true\"]", "[\"\"]"), "empty"),
        ("exec env NUL", format!("{EXEC}env = {{ A = \"x\\u0000y\" }}\n"), "NUL"),
        ("exec env name empty", format!("{EXEC}env = {{ \"\" = \"x\" }}\n"), "empty name"),
        (
            "exec warmup NUL",
            format!("{EXEC}warmup_command = [\"true\", \"\\u0000\"]\n"),
            "NUL",
        ),
        (
            "ready ftp",
            format!("{TARGET}ready = {{ http = \"ftp://127.0.0.1:9/\" }}\n"),
            "http://",
        ),
        (
            "ready https",
            format!("{TARGET}ready = {{ http = \"https://127.0.0.1:9/\" }}\n"),
            "http://",
        ),
        (
            "ready URL with a space",
            format!("{TARGET}ready = {{ http = \"http://127.0.0.1:9/a b\" }}\n"),
            "spaces",
        ),
        (
            "ready tcp no port",
            format!("{TARGET}ready = {{ tcp = \"localhost\" }}\n"),
            "host:port",
        ),
        ("ready tcp port 0", format!("{TARGET}ready = {{ tcp = \"127.0.0.1:0\" }}\n"), "port"),
        (
            "ready tcp port 70000",
            format!("{TARGET}ready = {{ tcp = \"127.0.0.1:70000\" }}\n"),
            "port",
        ),
        ("ready log bad regex", format!("{TARGET}ready = {{ log = \"(\" }}\n"), "log pattern"),
        (
            "header name with a space",
            format!("{HTTP}headers = {{ \"X Bad\" = \"1\" }}\n"),
            "header name",
        ),
        (
            "header name with a colon",
            format!("{HTTP}headers = {{ \"X:Bad\" = \"1\" }}\n"),
            "header name",
        ),
        (
            "header value CR LF",
            format!("{HTTP}headers = {{ X = \"a\\r\\nb: c\" }}\n"),
            "line break",
        ),
        (
            "header value NUL",
            format!("{HTTP}headers = {{ X = \"a\\u0000\" }}\n"),
            "control character",
        ),
        ("URL with a space", HTTP.replace("9/", "9/a b"), "space"),
        ("threshold < nan", format!("thresholds = [\"wall_time_s < nan\"]\n{EXEC}"), "finite"),
        ("threshold < inf", format!("thresholds = [\"wall_time_s < inf\"]\n{EXEC}"), "finite"),
        (
            "threshold table nan",
            format!("thresholds = [{{ metric = \"wall_time_s\", op = \"<\", value = nan }}]\n{EXEC}"),
            "finite",
        ),
        (
            "threshold unknown key",
            format!("thresholds = [{{ metric = \"x\", op = \"<\", value = 1, unit = \"s\" }}]\n{EXEC}"),
            "unknown key",
        ),
        (
            "threshold not a metric of exec",
            format!("thresholds = [\"requests_per_s > 5\"]\n{EXEC}"),
            "never produces `requests_per_s`",
        ),
        (
            "threshold typo",
            format!("thresholds = [\"error_rate_pc < 1\"]\n{HTTP}"),
            "did you mean `error_rate_pct`",
        ),
        (
            "adaptive metric unknown",
            format!("repetitions = {{ min = 2, max = 3, metric = \"duration_s\" }}\n{EXEC}"),
            "never produces `duration_s`",
        ),
        (
            "adaptive metric a number",
            format!("repetitions = {{ min = 2, max = 3, metric = 5 }}\n{EXEC}"),
            "metric",
        ),
        (
            "adaptive ci nan",
            format!("repetitions = {{ min = 2, max = 3, ci_pct = nan }}\n{EXEC}"),
            "ci_pct",
        ),
        (
            "adaptive typo",
            format!("repetitions = {{ min = 2, mx = 3 }}\n{EXEC}"),
            "did you mean `max`",
        ),
    ]
}

/// Messages that named Rust types, echoed long values whole, or lacked a key.
fn messages() -> Vec<(&'static str, String, &'static str)> {
    let long = "x".repeat(100_000);
    vec![
        (
            "name is a number",
            "name = 5\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n".into(),
            "`name`: expected a string, found 5",
        ),
        ("no name", "[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n".into(), "no `name`"),
        ("seed is text", format!("seed = \"x\"\n{EXEC}"), "`seed`: expected a whole number"),
        ("seed is a float", format!("seed = 1.5\n{EXEC}"), "`seed`"),
        (
            "skip_unsupported is text",
            format!("skip_unsupported = \"yes\"\n{EXEC}"),
            "true or false",
        ),
        (
            "hooks a number",
            format!("{EXEC}[matrix]\nvariant = [\"a\"]\n[variant.a]\nsetup = 5\n"),
            "a shell command or a list of them",
        ),
        (
            "hooks a string",
            format!("{EXEC}[matrix]\nvariant = [\"a\"]\n[variant]\na = \"x\"\n"),
            "expected a table",
        ),
        (
            "hook NUL",
            format!("{EXEC}[matrix]\nvariant = [\"a\"]\n[variant.a]\nsetup = \"echo \\u0000\"\n"),
            "NUL",
        ),
        ("target is text", format!("target = \"x\"\n{EXEC}"), "`target`: expected a table"),
        ("thresholds is text", format!("thresholds = \"x < 1\"\n{EXEC}"), "expected a list"),
        (
            "connections text",
            format!("{HTTP}connections = \"many\"\n"),
            "`connections`: expected integer",
        ),
        ("connections -1", format!("{HTTP}connections = -1\n"), "found -1"),
        ("connections 1.5", format!("{HTTP}connections = 1.5\n"), "found 1.5"),
        ("keepalive text", format!("{HTTP}keepalive = \"no\"\n"), "`keepalive`"),
        (
            "url a number",
            "name = \"t\"\n[workload]\ntype = \"http\"\nurl = 5\n".into(),
            "`url`",
        ),
        ("no url", "name = \"t\"\n[workload]\ntype = \"http\"\n".into(), "needs `url`"),
        (
            "exec command a number",
            "name = \"t\"\n[workload]\ntype = \"exec\"\ncommand = 5\n".into(),
            "`command`",
        ),
        (
            "exec command nested list",
            "name = \"t\"\n[workload]\ntype = \"exec\"\ncommand = [[\"a\"]]\n".into(),
            "`command`",
        ),
        ("exec timeout bool", format!("{EXEC}timeout = true\n"), "`timeout`"),
        ("exec env list", format!("{EXEC}env = [\"A\"]\n"), "`env`"),
        ("exec env number", format!("{EXEC}env = {{ A = 1 }}\n"), "`env`"),
        ("headers number", format!("{HTTP}headers = {{ A = 1 }}\n"), "`headers`"),
        (
            "duplicate key",
            format!("{EXEC}[phases]\nload = \"1s\"\nload = \"2s\"\n"),
            "`load` is given twice",
        ),
        (
            "matrix value a table",
            format!("{EXEC}[matrix]\nx = [{{ a = 1 }}]\n"),
            "a string, number or boolean",
        ),
        ("order a number", format!("order = 5\n{EXEC}"), "`order`"),
        // Long values are cut.
        ("long adapter", format!("{EXEC}adapter = \"{long}\"\n"), "…"),
        ("long signal", format!("{TARGET}stop = {{ signal = \"{long}\" }}\n"), "…"),
        ("long order", format!("order = \"{long}\"\n{EXEC}"), "…"),
        ("long threshold", format!("thresholds = [\"{long} <\"]\n{EXEC}"), "…"),
        (
            "long URL",
            HTTP.replace("http://127.0.0.1:9/", &format!("http://127.0.0.1:9/{long} x")),
            "…",
        ),
        ("long duration", format!("{EXEC}[phases]\nload = \"{long}\"\n"), "…"),
        (
            "long matrix reference",
            format!("{EXEC}[target]\ncommand = [\"${{{long}}}\"]\n"),
            "…",
        ),
        // Too many trials.
        ("matrix of 1e21 points", big_matrix(7, 1000), "about 1e21 points"),
        (
            "points × repetitions",
            format!("repetitions = 10000\n{}", big_matrix(1, 11)),
            "110000 trials",
        ),
        (
            "adaptive max counts",
            format!("repetitions = {{ min = 2, max = 10000 }}\n{}", big_matrix(1, 11)),
            "110000 trials",
        ),
    ]
}

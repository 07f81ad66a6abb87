//! The agent protocol: JSON lines over the agent's stdin (requests) and stdout (replies and
//! events), documented in docs/agent.md. Both ends are this binary, so the types are shared.

use serde::{Deserialize, Serialize};

/// The protocol's version: the controller refuses an agent that speaks another one.
pub const PROTOCOL: u32 = 1;

/// The environment variable that shifts every time the agent reports by this many milliseconds (a
/// testing aid: it simulates a host whose clock is off, so that the offset measurement can be
/// checked against a known answer).
pub const CLOCK_SKEW_ENV: &str = "PERFLAB_AGENT_CLOCK_SKEW_MS";

/// The environment variable naming a file that holds the agent's skew in milliseconds, read again
/// at every reading of its clock (a testing aid: a test changes the host's clock while the agent
/// runs; a missing file, or one that is not a number, gives [`CLOCK_SKEW_ENV`]'s skew).
pub const CLOCK_SKEW_FILE_ENV: &str = "PERFLAB_AGENT_CLOCK_SKEW_FILE";

/// The environment variable that holds every `clock` answer back this many milliseconds after its
/// `t2` (a testing aid: a slow channel, whose round trip makes the offset uncertain).
pub const CLOCK_DELAY_ENV: &str = "PERFLAB_AGENT_CLOCK_DELAY_MS";

/// One request line: an id the reply repeats, and the operation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Envelope {
    pub id: u64,
    #[serde(flatten)]
    pub request: Request,
}

/// What the controller asks.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The first request: the agent answers with its versions and the host's facts.
    Hello { protocol: u32 },
    /// One clock exchange: the agent answers with the time it read the request (`t1`) and the time
    /// it sent the reply (`t2`).
    Clock,
    /// Start a target (in its own process group, inside its limits, on the agent's host).
    Start { name: String, target: TargetSpec },
    /// Wait until a started target logs a line matching `log` (a regular expression).
    Ready { name: String, log: String, timeout_s: f64 },
    /// Whether a started target still runs: answered with [`TargetStatus`].
    Status { name: String },
    /// Stop a target: its stop signal, the grace period, then SIGKILL to its group and cgroups.
    Stop { name: String },
    /// Sample the host (and the process trees of the named targets and pids) every `interval_s`,
    /// on an absolute schedule, until `sample_stop`; each interval comes as a `sample` event. With
    /// `first_tick_unix_s` (the host's clock), the ticks fall on `first + k · interval_s`.
    Sample {
        interval_s: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_tick_unix_s: Option<f64>,
        #[serde(default)]
        targets: Vec<String>,
        #[serde(default)]
        pids: Vec<i32>,
    },
    /// Stop sampling.
    SampleStop,
    /// Run a command to its end (or `timeout_s`) and return its status and output.
    Exec {
        command: CommandSpec,
        #[serde(default)]
        cwd: Option<String>,
        #[serde(default)]
        env: Vec<(String, String)>,
        timeout_s: f64,
    },
    /// Start perf on the host with its events disabled (answered once it is ready): a profile of
    /// kind `on_cpu` or `off_cpu` of the named target's process tree (`scope = "target"`), its
    /// cgroup (`"cgroup"`) or the whole host (`"system"`).
    ProfileStart {
        kind: String,
        #[serde(default)]
        target: Option<String>,
        scope: String,
        frequency_hz: u32,
        call_graph: String,
    },
    /// Open the window of every profile started: perf records from now on.
    ProfileEnable,
    /// Close every profile's window.
    ProfileDisable,
    /// Stop perf and answer with the profiles (`model::Profile`, times in seconds since the
    /// window opened on the host).
    ProfileStop,
    /// Run slice `index` of `count` of a workload (`[workload] from`): built from `table` (the
    /// trial's `[workload]` as TOML text) as a plan's, begun at `start_at_unix` on the agent's
    /// clock, refused when later than `tolerance_s`; answered with [`SegmentDone`] when it ends.
    Segment {
        kind: String,
        table: String,
        index: u32,
        count: u32,
        start_at_unix: f64,
        tolerance_s: f64,
        warmup_s: f64,
        load_s: f64,
        /// The controller does the segments' shared work (the oltp tables) once, with
        /// `workload_prepare` and `workload_cleanup`: the slice leaves it out (absent from an
        /// older controller: the slice does its own).
        #[serde(default)]
        shared: bool,
    },
    /// The work a split load's segments share (the oltp tables), done once on the whole load
    /// built from `table` before the segments' common start; answered with [`SharedDone`] when done.
    WorkloadPrepare { kind: String, table: String },
    /// The shared work's end (the oltp tables dropped), once every segment ended; answered with
    /// [`SharedDone`].
    WorkloadCleanup { kind: String, table: String },
    /// Stop everything the agent started and exit.
    Bye,
}

/// A command: an argv list (run directly) or a shell string (run with `sh -c`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CommandSpec {
    Argv(Vec<String>),
    Shell(String),
}

/// A target as the agent starts it: the plan's `[target]`, resolved on the controller.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TargetSpec {
    pub command: CommandSpec,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: Vec<(String, String)>,
    pub stop_signal: i32,
    pub grace_s: f64,
    /// A CPU list (`"0-1"`), or a count (`"2"`), checked on the agent's host.
    #[serde(default)]
    pub cpus: Option<String>,
    #[serde(default)]
    pub cpu_quota: Option<f64>,
    /// Bytes.
    #[serde(default)]
    pub memory: Option<u64>,
}

/// One reply line: `ok` with a `result`, or not `ok` with an `error` in the user's terms.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Reply {
    pub id: u64,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An event line, not an answer to one request.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// One sampling interval, stamped with the agent host's clock.
    Sample {
        unix_s: f64,
        elapsed_s: f64,
        values: Vec<(String, f64)>,
    },
    /// A target exited on its own.
    Exited { name: String, how: String },
}

/// A line from the agent: a reply (it has an `id`) or an event.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Line {
    Reply(Reply),
    Event(Event),
}

/// The agent's answer to `hello`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Hello {
    pub protocol: u32,
    pub perflab: String,
    pub facts: Facts,
    /// What the agent cleaned up when it started, one line each: what a killed agent (or run) had
    /// left on its host (processes, cgroups). Absent when nothing was left.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleaned: Vec<String>,
}

/// What the controller learns about a host.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Facts {
    pub hostname: String,
    /// `uname -m`: x86_64, aarch64, ...
    pub arch: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub mem_bytes: u64,
    /// The cgroup mechanism limits would use there: v2, hybrid or none.
    pub cgroups: String,
    /// Whether `[profile]` can be taken there: `on-CPU and off-CPU`, or what is missing and how
    /// to enable it (empty from an agent older than profiles).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub perf: String,
}

/// The agent's answer to `clock`: its clock when the request arrived and when the reply left.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct ClockReply {
    pub t1: f64,
    pub t2: f64,
}

/// The agent's answer to `start`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Started {
    pub pid: i32,
    pub mechanism: String,
    /// The limits read back from the host (as stored with a local trial).
    pub proof: String,
}

/// The agent's answer to `status`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TargetStatus {
    /// None while the target runs; how it exited once it has.
    pub died: Option<String>,
}

/// The agent's answer to `stop`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Stopped {
    pub died: Option<String>,
    pub stdout_tail: String,
    pub stderr_tail: String,
}

/// The agent's answer to `exec`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ExecResult {
    /// The exit status, None when killed by a signal (or at the time-out).
    pub status: Option<i32>,
    pub timed_out: bool,
    pub elapsed_s: f64,
    pub stdout: String,
    pub stderr: String,
    /// The command's CPU time in user and kernel mode, its children's included (an agent of an
    /// earlier version sends none: 0).
    #[serde(default)]
    pub user_s: f64,
    #[serde(default)]
    pub system_s: f64,
    /// The largest resident set of the command or one of its children, in KiB.
    #[serde(default)]
    pub max_rss_kb: u64,
}

/// The agent's answer to `segment`: what its slice of the load measured (times on its clock).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SegmentDone {
    /// How long after its start the slice began, seconds.
    pub late_s: f64,
    pub started_unix: f64,
    /// When the measured load began, seconds after `started_unix` (None: never).
    pub load_start_s: Option<f64>,
    pub ended_unix: f64,
    pub metrics: Vec<crate::model::Metric>,
    /// Each histogram by name, in HdrHistogram's V2 + DEFLATE format, base64.
    pub histograms: Vec<(String, String)>,
    pub series: Vec<crate::model::SeriesPoint>,
    pub errors: Vec<(String, u64)>,
    pub raw: Vec<String>,
    pub failure: Option<String>,
    /// The agent's own CPU each second of the load, for the segment's own R12 (none from an
    /// older agent, or when the load never began).
    #[serde(default)]
    pub loadgen: Option<LoadgenSeconds>,
}

/// The agent's answer to `workload_prepare` and `workload_cleanup`: what was done, in one line,
/// and how long it took on the host.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SharedDone {
    pub said: String,
    pub seconds: f64,
}

/// What a segment's load generator (the agent's process) used, each second of its load: what the
/// monitor samples as `proc_loadgen_cpu_pct` and `proc_loadgen_threads` on the controller's machine.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LoadgenSeconds {
    /// The CPUs the agent's process could use (its affinity and CPU limit).
    pub cpus: u32,
    /// (CPU % of one core, threads) for each whole second of the load.
    pub seconds: Vec<(f64, f64)>,
}

/// A histogram as [`SegmentDone`] carries it.
pub fn encode_histogram(h: &hdrhistogram::Histogram<u64>) -> anyhow::Result<String> {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .map_err(|e| anyhow::anyhow!("cannot encode a histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(buf))
}

/// A histogram [`SegmentDone`] carried.
pub fn decode_histogram(text: &str) -> anyhow::Result<hdrhistogram::Histogram<u64>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| anyhow::anyhow!("a histogram is not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| anyhow::anyhow!("cannot decode a histogram: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_one_flat_object_per_line() {
        let e = Envelope {
            id: 7,
            request: Request::Stop { name: "t".into() },
        };
        let s = serde_json::to_string(&e).unwrap();
        assert_eq!(s, r#"{"id":7,"op":"stop","name":"t"}"#);
        let back: Envelope = serde_json::from_str(r#"{"id":3,"op":"clock"}"#).unwrap();
        assert_eq!(back.id, 3);
        assert!(matches!(back.request, Request::Clock));
    }

    #[test]
    fn lines_are_told_apart_by_their_id() {
        let r: Line = serde_json::from_str(r#"{"id":1,"ok":true,"result":{"t1":1.0,"t2":2.0}}"#).unwrap();
        assert!(matches!(r, Line::Reply(Reply { id: 1, ok: true, .. })));
        let e: Line = serde_json::from_str(r#"{"event":"sample","unix_s":1.5,"elapsed_s":1.0,"values":[["cpu_busy_pct",3.0]]}"#).unwrap();
        assert!(matches!(e, Line::Event(Event::Sample { .. })));
    }

    #[test]
    fn a_segments_histogram_comes_back_bucket_for_bucket() {
        let mut h = crate::model::latency_histogram();
        for v in [1u64, 250, 999, 1_000_003, 3_000_000_000] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        assert!(decode_histogram("not base64!").is_err());
    }
}

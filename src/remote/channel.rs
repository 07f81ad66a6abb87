//! The controller's end of one agent: a child process (`ssh … perflab agent --stdio`, or the agent
//! itself for a test) whose stdin takes requests and whose stdout gives replies and events.

use super::clock::Offset;
use super::protocol::{self, ClockReply, Envelope, Event, Hello, Line, Reply, Request};
use crate::util::Tail;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the first answer may take (ssh connects, authenticates and starts the agent).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// The latest `sample` event an agent sent, beside the queue that keeps every one for the trial's
/// end: how many came so far, and the last one's time (the host's clock) and values. A live view
/// reads it while the trial runs.
pub type LatestSample = Arc<Mutex<(u64, Option<(f64, Vec<(String, f64)>)>)>>;

/// An open channel to one host's agent.
pub struct Channel {
    /// The plan's name for the host.
    pub host: String,
    child: Child,
    stdin: Option<ChildStdin>,
    replies: mpsc::Receiver<Reply>,
    events: mpsc::Receiver<Event>,
    latest: LatestSample,
    stderr: Arc<Mutex<Tail>>,
    next: u64,
    /// The agent has answered `hello`: a loss from now on may be the agent's end, not ssh's.
    established: bool,
    pub hello: Hello,
}

/// Why a channel failed, in the user's terms: ssh's own reasons, or, once the agent had answered,
/// the agent that ended (killed, crashed) with its last line on stderr.
fn lost(host: &str, stderr: &Arc<Mutex<Tail>>, status: Option<std::process::ExitStatus>, established: bool) -> anyhow::Error {
    let text = stderr.lock().map(|t| t.text()).unwrap_or_default();
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    let code = status.and_then(|s| s.code());
    if established {
        if let Some(why) = super::ssh::agent_ended(&last, code) {
            return anyhow::anyhow!("host `{host}`: {why}");
        }
    }
    anyhow::anyhow!("host `{host}`: {}", super::ssh::explain(&last, code))
}

impl Channel {
    /// Start `cmd` and say hello: the agent must speak this protocol version.
    pub fn open(host: &str, mut cmd: Command) -> anyhow::Result<Channel> {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // Its own process group: a Ctrl-C on the controller's terminal reaches perflab, which then
        // closes the channel itself (the agent cleans up on end of input).
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|e| anyhow::anyhow!("host `{host}`: cannot start ssh: {e}"))?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?;
        let stderr_pipe = child.stderr.take().ok_or_else(|| anyhow::anyhow!("no stderr"))?;
        let stderr = Arc::new(Mutex::new(Tail::new(8 * 1024)));
        let (rtx, replies) = mpsc::channel();
        let (etx, events) = mpsc::channel();
        let latest = LatestSample::default();
        let tap = latest.clone();
        std::thread::spawn(move || read_lines(stdout, rtx, etx, tap));
        let st = stderr.clone();
        std::thread::spawn(move || {
            let mut r = stderr_pipe;
            let mut buf = [0u8; 4096];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = st.lock() {
                    t.push(&buf[..n]);
                }
            }
        });
        let mut ch = Channel {
            host: host.to_string(),
            stdin: child.stdin.take(),
            child,
            replies,
            events,
            latest,
            stderr,
            next: 1,
            established: false,
            hello: Hello {
                protocol: 0,
                perflab: String::new(),
                facts: Default::default(),
                cleaned: Vec::new(),
            },
        };
        let hello: Hello = ch.call(
            Request::Hello {
                protocol: protocol::PROTOCOL,
            },
            CONNECT_TIMEOUT,
        )?;
        if hello.protocol != protocol::PROTOCOL {
            anyhow::bail!(
                "host `{host}`: its perflab {} speaks agent protocol {}, this one speaks {} (run `perflab hosts install PLAN`)",
                hello.perflab,
                hello.protocol,
                protocol::PROTOCOL
            );
        }
        for line in &hello.cleaned {
            eprintln!("perflab: host `{host}`: {line}");
        }
        ch.hello = hello;
        ch.established = true;
        Ok(ch)
    }

    /// Send a request and wait up to `timeout` for its reply, decoded as `T`.
    pub fn call<T: serde::de::DeserializeOwned>(&mut self, req: Request, timeout: Duration) -> anyhow::Result<T> {
        let v = self.call_value(req, timeout)?;
        serde_json::from_value(v).map_err(|e| anyhow::anyhow!("host `{}`: the agent's answer is not understood: {e}", self.host))
    }

    fn call_value(&mut self, req: Request, timeout: Duration) -> anyhow::Result<serde_json::Value> {
        self.call_until(req, timeout, &|| false)
    }

    /// As [`call`](Self::call), given up (with an error) as soon as `stop()` says so; then close
    /// the channel, so that the agent stops what the request started.
    pub fn call_until_value(&mut self, req: Request, timeout: Duration, stop: &dyn Fn() -> bool) -> anyhow::Result<serde_json::Value> {
        self.call_until(req, timeout, stop)
    }

    fn call_until(&mut self, req: Request, timeout: Duration, stop: &dyn Fn() -> bool) -> anyhow::Result<serde_json::Value> {
        let id = self.next;
        self.next += 1;
        let mut line = serde_json::to_string(&Envelope { id, request: req })?;
        line.push('\n');
        let sent = self.stdin.as_mut().map(|s| s.write_all(line.as_bytes()).and_then(|_| s.flush()));
        if !matches!(sent, Some(Ok(()))) {
            return Err(self.failure());
        }
        let deadline = Instant::now() + timeout;
        loop {
            if stop() {
                anyhow::bail!("host `{}`: interrupted", self.host);
            }
            let left = deadline.saturating_duration_since(Instant::now()).min(Duration::from_millis(100));
            if left.is_zero() {
                anyhow::bail!(
                    "host `{}`: no answer from the agent within {}",
                    self.host,
                    crate::util::duration::format(timeout)
                );
            }
            match self.replies.recv_timeout(left) {
                Ok(r) if r.id != id => continue, // the late answer of a request given up on
                Ok(r) if r.ok => return Ok(r.result.unwrap_or(serde_json::Value::Null)),
                Ok(r) => anyhow::bail!("host `{}`: {}", self.host, r.error.unwrap_or_else(|| "the agent failed".into())),
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(self.failure()),
            }
        }
    }

    /// The channel is gone: why, from ssh's last words and exit status.
    fn failure(&mut self) -> anyhow::Error {
        // ssh's stderr may still be on its way.
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut status = None;
        while Instant::now() < deadline {
            if let Ok(Some(s)) = self.child.try_wait() {
                status = Some(s);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(20));
        lost(&self.host, &self.stderr, status, self.established)
    }

    /// The host's clock offset: `n` exchanges, the one with the smallest round trip wins.
    pub fn clock(&mut self, n: usize) -> anyhow::Result<Offset> {
        let mut all = Vec::new();
        for _ in 0..n.max(1) {
            let t0 = crate::util::time::unix_now();
            let r: ClockReply = self.call(Request::Clock, Duration::from_secs(10))?;
            let t3 = crate::util::time::unix_now();
            all.push(Offset::from_exchange(t0, r.t1, r.t2, t3));
        }
        Offset::best(all).ok_or_else(|| anyhow::anyhow!("no clock exchange"))
    }

    /// The events (samples, exits) the agent has sent so far, and those to come.
    pub fn events(&self) -> &mpsc::Receiver<Event> {
        &self.events
    }

    /// The latest `sample` event, shared: read while the events stay queued.
    pub fn latest_sample(&self) -> LatestSample {
        self.latest.clone()
    }

    /// Why the channel is gone, if it is (the channel process has exited); never waits.
    pub fn lost(&mut self) -> Option<anyhow::Error> {
        match self.child.try_wait() {
            Ok(Some(_)) => Some(self.failure()),
            _ => None,
        }
    }

    /// The pid of the local channel process (ssh): tests kill it to cut the channel.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Say goodbye (the agent stops what it started), then close the channel.
    pub fn close(mut self) -> anyhow::Result<()> {
        let r = self.call_value(Request::Bye, Duration::from_secs(30)).map(|_| ());
        self.shut();
        r
    }

    fn shut(&mut self) {
        // End of input: an agent that did not hear `bye` cleans up the same way.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            self.shut();
        }
    }
}

fn read_lines(out: impl Read, replies: mpsc::Sender<Reply>, events: mpsc::Sender<Event>, latest: LatestSample) {
    let r = BufReader::new(out);
    for line in r.lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str::<Line>(&line) {
            Ok(Line::Reply(rep)) => {
                if replies.send(rep).is_err() {
                    break;
                }
            }
            Ok(Line::Event(e)) => {
                if let Event::Sample { unix_s, values, .. } = &e {
                    if let Ok(mut l) = latest.lock() {
                        *l = (l.0 + 1, Some((*unix_s, values.clone())));
                    }
                }
                let _ = events.send(e);
            }
            Err(_) => eprintln!(
                "perflab: note: the agent said something that is not protocol: {}",
                line.chars().take(200).collect::<String>()
            ),
        }
    }
}

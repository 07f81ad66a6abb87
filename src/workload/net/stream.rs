//! `mode = "stream"`: TCP bulk transfer on `streams` connections, upload, download or both (a
//! connection each way per stream), each worker thread owning one connection. Per stream: the bytes
//! of the measured phase, each second's bytes, and from `TCP_INFO` its retransmits and RTT.

use super::config::{Direction, Prepared};
use super::seconds::Seconds;
use super::sock::{self, ErrorClass, NetError, TcpInfo};
use crate::util::netwire::{Header, Mode};
use crate::workload::driver::interval::Message;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Instant;

/// One whole second of one stream.
#[derive(Clone, Copy, Debug, Default)]
pub struct Second {
    pub bytes: u64,
    pub retransmits: u32,
    pub rtt_us: u32,
}

/// What one stream's connection moved.
#[derive(Clone, Debug)]
pub struct StreamStats {
    pub upload: bool,
    /// Bytes in the measured phase, and in the warm-up.
    pub bytes: u64,
    pub warmup_bytes: u64,
    /// Upload: the bytes the server says it received on this connection (warm-up included).
    pub server_bytes: Option<u64>,
    pub seconds: Vec<Second>,
    /// Sender's retransmits over the measured phase (upload; the server sends a download).
    pub retransmits: u32,
    /// Mean of the smoothed RTT read each second, µs.
    pub rtt_mean_us: f64,
    pub rtt_max_us: u32,
    pub error: Option<NetError>,
    /// When this stream stopped moving bytes.
    pub ended: Option<Instant>,
}

/// What every stream worker shares.
pub struct Shared {
    pub p: Prepared,
    pub measure_from: Instant,
    pub deadline: Instant,
    pub stop: Arc<AtomicBool>,
    /// `bytes`: what is left to send or fetch over all streams.
    pub budget: Option<AtomicU64>,
}

impl Shared {
    fn claim(&self, want: u64) -> u64 {
        let Some(b) = &self.budget else {
            return want;
        };
        match b.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| Some(left.saturating_sub(want))) {
            Ok(left) => left.min(want),
            Err(_) => 0,
        }
    }

    fn over(&self, now: Instant) -> bool {
        self.stop.load(Ordering::Relaxed) || now >= self.deadline
    }
}

/// Worker `id`'s direction: both = even upload, odd download.
pub fn is_upload(p: &Prepared, id: usize) -> bool {
    match p.direction {
        Direction::Upload => true,
        Direction::Download => false,
        Direction::Both => id.is_multiple_of(2),
    }
}

/// The worker threads a stream run needs.
pub fn workers(p: &Prepared) -> usize {
    p.streams * if p.direction == Direction::Both { 2 } else { 1 }
}

/// Run one stream's connection until the end of the measured phase, the byte budget or a stop.
pub fn run_stream(sh: &Shared, id: usize, tx: &Sender<Message>) -> StreamStats {
    let upload = is_upload(&sh.p, id);
    let mut st = StreamStats {
        upload,
        bytes: 0,
        warmup_bytes: 0,
        server_bytes: None,
        seconds: Vec::new(),
        retransmits: 0,
        rtt_mean_us: f64::NAN,
        rtt_max_us: 0,
        error: None,
        ended: None,
    };
    let header = Header {
        mode: if upload { Mode::Upload } else { Mode::Download },
        size: sh.p.size as u32,
        buffer: sh.p.buffer.unwrap_or(0),
        limit: 0,
    };
    let r = sock::connect(sh.p.target, &header).and_then(|c| {
        let r = if upload {
            send(sh, &c, &mut st, tx)
        } else {
            receive(sh, &c, &mut st, tx)
        };
        r.and_then(|()| if upload { finish_upload(&c, &mut st) } else { Ok(()) })
    });
    if let Err(e) = r {
        let what = format!(
            "stream {id} ({}) after {} bytes",
            if upload { "upload" } else { "download" },
            st.bytes + st.warmup_bytes
        );
        st.error = Some(NetError {
            class: e.class,
            message: format!("{what}: {}", e.message),
        });
        sh.stop.store(true, Ordering::Relaxed);
    }
    let rtts: Vec<f64> = st.seconds.iter().filter(|s| s.rtt_us > 0).map(|s| f64::from(s.rtt_us)).collect();
    if !rtts.is_empty() {
        st.rtt_mean_us = rtts.iter().sum::<f64>() / rtts.len() as f64;
    }
    st
}

/// Per-second bookkeeping shared by both directions.
struct Meter {
    secs: Seconds,
    base: TcpInfo,
    last: TcpInfo,
    started: bool,
}

impl Meter {
    fn new(sh: &Shared) -> Meter {
        Meter {
            secs: Seconds::new(sh.measure_from),
            base: TcpInfo::default(),
            last: TcpInfo::default(),
            started: false,
        }
    }

    /// Count `n` bytes moved at `now`; at each second's end read TCP_INFO.
    fn add(&mut self, sh: &Shared, c: &TcpStream, st: &mut StreamStats, now: Instant, n: u64, tx: &Sender<Message>) {
        if now < sh.measure_from {
            st.warmup_bytes += n;
            return;
        }
        if !self.started {
            self.started = true;
            self.base = sock::tcp_info(c).unwrap_or_default();
            self.last = self.base;
        }
        let bytes_before = self.secs.count;
        if self.secs.tick(now, tx) {
            self.second(c, st, bytes_before);
        }
        self.secs.count += n;
        st.bytes += n;
    }

    fn second(&mut self, c: &TcpStream, st: &mut StreamStats, bytes: u64) {
        let ti = sock::tcp_info(c).unwrap_or(self.last);
        st.seconds.push(Second {
            bytes,
            retransmits: ti.total_retrans.saturating_sub(self.last.total_retrans),
            rtt_us: ti.rtt_us,
        });
        st.rtt_max_us = st.rtt_max_us.max(ti.rtt_us);
        self.last = ti;
    }

    fn finish(&mut self, c: &TcpStream, st: &mut StreamStats, tx: &Sender<Message>) {
        st.ended = Some(Instant::now());
        if self.started {
            let ti = sock::tcp_info(c).unwrap_or(self.last);
            st.retransmits = ti.total_retrans.saturating_sub(self.base.total_retrans);
            st.rtt_max_us = st.rtt_max_us.max(ti.rtt_us);
            if st.seconds.is_empty() {
                st.seconds.push(Second {
                    bytes: self.secs.count,
                    retransmits: st.retransmits,
                    rtt_us: ti.rtt_us,
                });
            }
        }
        self.secs.finish(tx);
    }
}

fn send(sh: &Shared, c: &TcpStream, st: &mut StreamStats, tx: &Sender<Message>) -> Result<(), NetError> {
    if sh.p.zerocopy {
        sock::enable_zerocopy(c).map_err(|e| NetError {
            class: ErrorClass::Other,
            message: format!("zerocopy: the kernel refused SO_ZEROCOPY: {e}"),
        })?;
    }
    let buf = vec![0xa5u8; sh.p.size];
    let mut m = Meter::new(sh);
    let mut w = c;
    loop {
        let now = Instant::now();
        if sh.over(now) {
            break;
        }
        let n = sh.claim(buf.len() as u64) as usize;
        if n == 0 {
            break;
        }
        let r = if sh.p.zerocopy {
            sock::send_zerocopy(c, &buf[..n])
        } else {
            w.write_all(&buf[..n])
        };
        if let Err(e) = r {
            m.finish(c, st, tx);
            return Err(NetError::io(&e, false, "sending"));
        }
        m.add(sh, c, st, Instant::now(), n as u64, tx);
    }
    m.finish(c, st, tx);
    Ok(())
}

/// Close the sending side and read the server's count of what it received.
fn finish_upload(c: &TcpStream, st: &mut StreamStats) -> Result<(), NetError> {
    c.shutdown(Shutdown::Write)
        .map_err(|e| NetError::io(&e, false, "closing the upload"))?;
    let _ = c.set_read_timeout(Some(sock::TIMEOUT));
    let mut b = [0u8; 8];
    let mut r = c;
    r.read_exact(&mut b)
        .map_err(|e| NetError::io(&e, false, "reading the server's count"))?;
    st.server_bytes = Some(u64::from_be_bytes(b));
    Ok(())
}

fn receive(sh: &Shared, c: &TcpStream, st: &mut StreamStats, tx: &Sender<Message>) -> Result<(), NetError> {
    let _ = c.set_read_timeout(Some(sock::TIMEOUT));
    let mut buf = vec![0u8; sh.p.size.max(64 << 10)];
    let mut m = Meter::new(sh);
    let mut r = c;
    loop {
        let now = Instant::now();
        if sh.over(now) {
            break;
        }
        let want = sh.claim(buf.len() as u64) as usize;
        if want == 0 {
            break;
        }
        let res = r.read(&mut buf[..want]);
        let got = match res {
            Ok(0) => Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)),
            Ok(k) => Ok(k),
            Err(e) => Err(e),
        };
        // Return what was claimed and not read.
        if let Some(b) = &sh.budget {
            b.fetch_add((want - *got.as_ref().unwrap_or(&0)) as u64, Ordering::Relaxed);
        }
        match got {
            Ok(k) => m.add(sh, c, st, Instant::now(), k as u64, tx),
            Err(e) => {
                m.finish(c, st, tx);
                return Err(NetError::io(&e, false, "receiving"));
            }
        }
    }
    m.finish(c, st, tx);
    Ok(())
}

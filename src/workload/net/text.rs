//! A `perflab.load.net/1` document ([`NetJson`]) read back as the human summary: the summary,
//! the trial's metrics (`metrics.rs`) and `--json` come from the one document.

use super::json::{ModeJson, NetJson};
use std::fmt::Write;

/// A figure the document leaves out when it is not a number (`null`), as the text shows it.
pub(super) fn or_nan(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

impl NetJson {
    /// The summary: what ran, the mode's figures, the client's CPU and the failure, if any.
    pub fn summary(&self) -> String {
        let mut o = String::new();
        let secs = self.measured_s;
        let _ = writeln!(
            o,
            "net {} to {}: {} stream(s), size {} B, {:.1} s measured{}",
            self.mode,
            self.target,
            self.streams,
            self.size,
            secs,
            if self.interrupted { " (interrupted)" } else { "" }
        );
        match &self.result {
            ModeJson::Stream(st) => {
                let _ = writeln!(
                    o,
                    "  throughput:  {:.2} Gbit/s ({} bytes; {})",
                    st.gbit_per_s, st.bytes, st.direction
                );
                if st.upload.bytes > 0 && st.download.bytes > 0 {
                    let _ = writeln!(
                        o,
                        "    upload {:.2} Gbit/s, download {:.2} Gbit/s",
                        st.upload.gbit_per_s, st.download.gbit_per_s
                    );
                }
                if let Some(sb) = st.server_bytes {
                    let _ = writeln!(o, "  server received: {sb} bytes (warm-up included)");
                }
                for (i, s) in st.streams.iter().enumerate() {
                    let _ = writeln!(
                        o,
                        "    stream {i} {:<8} {:.2} Gbit/s, {} retransmits, RTT mean {:.0} µs, max {} µs",
                        s.direction,
                        s.gbit_per_s,
                        s.retransmits,
                        or_nan(s.rtt_mean_us),
                        s.rtt_max_us
                    );
                }
            }
            ModeJson::Udp(u) => {
                let _ = writeln!(
                    o,
                    "  sent:        {:.3} Gbit/s, {} datagrams (asked {:.3} Gbit/s)",
                    u.sent_gbit_per_s,
                    u.datagrams_sent,
                    u.rate_asked_bit_per_s / 1e9
                );
                let _ = writeln!(
                    o,
                    "  received:    {:.3} Gbit/s, {} datagrams",
                    u.received_gbit_per_s, u.datagrams_received
                );
                let _ = writeln!(
                    o,
                    "  loss:        {} ({:.2} %), out of order {}, jitter {:.3} ms",
                    u.lost,
                    or_nan(u.loss_pct),
                    u.out_of_order,
                    or_nan(u.jitter_ms)
                );
            }
            ModeJson::Rr(r) | ModeJson::Crr(r) => {
                let _ = writeln!(
                    o,
                    "  transactions: {:.0}/s ({} in all, {} connections)",
                    r.transactions_per_s, r.transactions, r.connections
                );
                if r.timed > 0 {
                    let t = &r.rtt_us;
                    let _ = writeln!(
                        o,
                        "  round trip:  p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs, max {} µs",
                        t.p50, t.p90, t.p99, t.max
                    );
                }
            }
        }
        let cpu = or_nan(self.cpu.client_pct);
        match &self.result {
            ModeJson::Rr(_) | ModeJson::Crr(_) => {
                let _ = writeln!(
                    o,
                    "  client CPU:  {cpu:.0} % of a CPU, {:.1} µs per transaction",
                    or_nan(self.cpu.cpu_us_per_transaction)
                );
            }
            _ => {
                let _ = writeln!(
                    o,
                    "  client CPU:  {cpu:.0} % of a CPU, {:.3} CPU-s per GB",
                    or_nan(self.cpu.cpu_s_per_gb)
                );
            }
        }
        if let Some(f) = &self.failure {
            let _ = writeln!(o, "  failed:      {f}");
        }
        o
    }
}

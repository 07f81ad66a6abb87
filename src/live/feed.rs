//! The feed: the runner's threads publish [`Event`]s without waiting; one writer thread appends
//! them to the run's store in batches (`store::EventLog`).
//!
//! Once a trial is stored (its `trial_end` written), the writer packs its `second` rows into one
//! row (`EventLog::pack_seconds`), and at the end gives the pages they took back.
//!
//! Publishing is a `try_send` on a bounded channel: a writer that cannot keep up (a disk that
//! stalls) never holds the runner back. What does not fit is dropped and counted, and the writer
//! says so in the log (a `skipped` event) as soon as it can. Serializing happens on the writer's
//! thread, not the publisher's.

use super::event::{Event, HostNow};
use crate::store::EventLog;
use crate::util::redact::Redactor;
use crate::util::time::unix_now;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Events waiting for the writer at most (an hour of a 1 Hz run's events and more).
const CAPACITY: usize = 8192;

/// An event boxed: the queue holds a pointer a slot, not the largest event's size.
enum Msg {
    Event(f64, Box<Event>),
    Close,
}

/// The monitor's latest sample of this machine, kept in memory (not in the log: a live view in
/// this process reads it; the log's `second` events carry its key figures, [`HostNow`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatestSample {
    pub trial: usize,
    pub phase: String,
    /// Seconds since the trial started.
    pub t_s: f64,
    pub values: Vec<(String, f64)>,
}

/// What publishes events: cheap to clone, never blocks. [`Publisher::off`] publishes nothing.
#[derive(Clone)]
pub struct Publisher {
    inner: Option<(SyncSender<Msg>, Arc<AtomicU64>)>,
    latest: Arc<Mutex<Option<LatestSample>>>,
    /// Set by a view (`p` in the terminal view): the runner waits before the next trial.
    hold: Arc<AtomicBool>,
}

impl Publisher {
    /// A publisher that drops everything (no feed).
    pub fn off() -> Publisher {
        Publisher {
            inner: None,
            latest: Arc::default(),
            hold: Arc::default(),
        }
    }

    /// Keep `s` as the monitor's latest sample (in memory only).
    pub fn sample(&self, s: LatestSample) {
        if self.inner.is_some() {
            if let Ok(mut l) = self.latest.lock() {
                *l = Some(s);
            }
        }
    }

    /// The monitor's latest sample, if one was taken.
    pub fn latest_sample(&self) -> Option<LatestSample> {
        self.latest.lock().ok().and_then(|l| l.clone())
    }

    /// The latest sample's key figures (none before the first).
    pub fn host_now(&self) -> Option<HostNow> {
        let l = self.latest.lock().ok()?;
        l.as_ref().map(|s| HostNow::of(&s.values))
    }

    /// Publish `e` now; dropped (and counted) when the writer is behind.
    pub fn publish(&self, e: Event) {
        if let Some((tx, skipped)) = &self.inner {
            match tx.try_send(Msg::Event(unix_now(), Box::new(e))) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    skipped.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Disconnected(_)) => {}
            }
        }
    }

    /// The flag that holds the next trial while set (the terminal view's `p`).
    pub fn hold_flag(&self) -> Arc<AtomicBool> {
        self.hold.clone()
    }

    /// Before a trial: wait while the run is held (checked every 100 ms; `cancel` ends the wait).
    /// Whether it waited.
    pub fn wait_while_held(&self, cancel: &crate::util::Cancel) -> bool {
        let mut waited = false;
        while self.hold.load(Ordering::SeqCst) && !cancel.is_cancelled() {
            waited = true;
            cancel.sleep(std::time::Duration::from_millis(100));
        }
        waited
    }

    /// Before each trial: wait while a view holds the run (`p`); whether to go on (not once
    /// `cancel` is set).
    pub fn ready_for_a_trial(&self, cancel: &crate::util::Cancel) -> bool {
        self.wait_while_held(cancel);
        !cancel.is_cancelled()
    }

    /// Whether events go anywhere.
    pub fn is_on(&self) -> bool {
        self.inner.is_some()
    }
}

/// The feed of one run: its writer thread and the publisher that sends to it.
pub struct Feed {
    publisher: Publisher,
    tx: Option<SyncSender<Msg>>,
    writer: Option<JoinHandle<Option<String>>>,
}

impl Feed {
    /// Start the writer of run directory `dir`'s event log; every event's text goes through
    /// `redactor` (the plan's secrets) and the store's redaction of credential headers.
    pub fn start(dir: &Path, redactor: Redactor) -> anyhow::Result<Feed> {
        let log = EventLog::open(dir)?;
        let (tx, rx) = sync_channel(CAPACITY);
        let skipped = Arc::new(AtomicU64::new(0));
        let counter = skipped.clone();
        let writer = std::thread::Builder::new()
            .name("perflab-feed".into())
            .spawn(move || write_loop(log, &rx, &counter, &redactor))?;
        Ok(Feed {
            publisher: Publisher {
                inner: Some((tx.clone(), skipped)),
                latest: Arc::default(),
                hold: Arc::default(),
            },
            tx: Some(tx),
            writer: Some(writer),
        })
    }

    /// A feed that publishes nothing (the run's store could not be opened for it).
    pub fn off() -> Feed {
        Feed {
            publisher: Publisher::off(),
            tx: None,
            writer: None,
        }
    }

    pub fn publisher(&self) -> &Publisher {
        &self.publisher
    }

    /// Write what is queued and stop the writer; returns the error that stopped it early, if any
    /// (the log is then short of the events after it; the run itself goes on).
    pub fn close(&mut self) -> Option<String> {
        self.publisher.inner = None;
        if let Some(tx) = self.tx.take() {
            // Blocking here is fine: the run is over, and the writer drains what is queued.
            let _ = tx.send(Msg::Close);
        }
        self.writer
            .take()
            .and_then(|w| w.join().unwrap_or(Some("the feed's writer panicked".into())))
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// The writer: wait for an event, take what else is queued (up to `CAPACITY`), append it all in
/// one transaction.
fn write_loop(mut log: EventLog, rx: &Receiver<Msg>, skipped: &AtomicU64, redactor: &Redactor) -> Option<String> {
    let mut batch: Vec<(f64, Event)> = Vec::new();
    loop {
        let mut closing = match rx.recv() {
            Ok(Msg::Event(t, e)) => {
                batch.push((t, *e));
                false
            }
            Ok(Msg::Close) | Err(_) => true,
        };
        // At most a queue's worth per transaction: a writer that drains as fast as events come
        // would otherwise gather them in memory without bound while its write waits.
        while !closing && batch.len() < CAPACITY {
            match rx.try_recv() {
                Ok(Msg::Event(t, e)) => batch.push((t, *e)),
                Ok(Msg::Close) => closing = true,
                Err(_) => break,
            }
        }
        let n = skipped.swap(0, Ordering::Relaxed);
        if n > 0 {
            batch.push((unix_now(), Event::Skipped { count: n }));
        }
        if let Err(e) = write_batch(&mut log, &batch, redactor) {
            return Some(format!("the live event log stopped: {e:#}"));
        }
        // A stored trial's seconds, packed into one row: its end is in the log now. A pack that
        // fails leaves them as they were (both forms read alike).
        for (_, e) in &batch {
            if let Event::TrialEnd { trial, .. } = e {
                let _ = log.pack_seconds(*trial);
            }
        }
        batch.clear();
        if closing {
            // The packed rows' old pages back to the file system: the store's size is the run's.
            let _ = log.shrink();
            return None;
        }
    }
}

fn write_batch(log: &mut EventLog, batch: &[(f64, Event)], redactor: &Redactor) -> anyhow::Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let rows: Vec<(f64, Option<usize>, &str, String)> = batch
        .iter()
        .map(|(t, e)| Ok((*t, e.trial(), e.kind(), redact(redactor, e.stored_body()?))))
        .collect::<anyhow::Result<_>>()?;
    log.append(&rows)?;
    Ok(())
}

/// The plan's secrets and credential headers out of an event's text (as the store does for
/// every text it keeps).
fn redact(redactor: &Redactor, body: String) -> String {
    let body = if redactor.is_empty() { body } else { redactor.apply(&body) };
    crate::store::redact(&body)
}

#[cfg(test)]
mod tests {
    use super::Publisher;
    use crate::util::Cancel;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    #[test]
    fn a_held_run_waits_until_released_or_cancelled() {
        let p = Publisher::off();
        let cancel = Cancel::new();
        assert!(!p.wait_while_held(&cancel), "not held: no wait");
        let hold = p.hold_flag();
        hold.store(true, Ordering::SeqCst);
        let release = std::thread::spawn({
            let hold = hold.clone();
            move || {
                std::thread::sleep(Duration::from_millis(150));
                hold.store(false, Ordering::SeqCst);
            }
        });
        assert!(p.wait_while_held(&cancel), "held: waits");
        assert!(!hold.load(Ordering::SeqCst), "until released");
        release.join().unwrap();
        hold.store(true, Ordering::SeqCst);
        cancel.cancel();
        assert!(!p.wait_while_held(&cancel), "Ctrl-C: no wait, though held");
    }
}

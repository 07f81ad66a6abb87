//! The agent's clock: the wall clock, shifted by the testing aids of docs/agent.md (a fixed skew,
//! or a skew read from a file at every reading, so that a test can change it while the agent
//! runs), and the testing aid that holds back every `clock` answer.

use crate::remote::protocol;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// [`protocol::CLOCK_SKEW_ENV`], seconds.
    skew_s: f64,
    /// [`protocol::CLOCK_SKEW_FILE_ENV`]: when set, its number of milliseconds (read at every
    /// reading of the clock) replaces `skew_s`; a file missing or not a number gives `skew_s`.
    file: Option<PathBuf>,
    /// [`protocol::CLOCK_DELAY_ENV`]: how long a `clock` answer is held back after `t2`.
    delay: Duration,
}

fn ms(v: &str) -> Option<f64> {
    v.trim().parse::<f64>().ok().filter(|m| m.is_finite())
}

impl Clock {
    pub fn from_env() -> Clock {
        let var = |k: &str| std::env::var(k).ok();
        Clock {
            skew_s: var(protocol::CLOCK_SKEW_ENV).and_then(|v| ms(&v)).unwrap_or(0.0) / 1000.0,
            file: var(protocol::CLOCK_SKEW_FILE_ENV).filter(|p| !p.is_empty()).map(PathBuf::from),
            delay: var(protocol::CLOCK_DELAY_ENV)
                .and_then(|v| ms(&v))
                .and_then(|m| Duration::try_from_secs_f64(m / 1000.0).ok())
                .unwrap_or_default(),
        }
    }

    /// How far this clock is from the wall clock now, seconds (0 without a testing aid).
    pub fn skew(&self) -> f64 {
        match &self.file {
            Some(p) => std::fs::read_to_string(p)
                .ok()
                .and_then(|v| ms(&v))
                .map_or(self.skew_s, |m| m / 1000.0),
            None => self.skew_s,
        }
    }

    pub fn now(&self) -> f64 {
        crate::util::time::unix_now() + self.skew()
    }

    /// Hold a `clock` answer back (the testing aid's delay; nothing without it).
    pub fn hold_answer(&self) {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skew_file_is_read_at_every_reading() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("skew_ms");
        let c = Clock {
            skew_s: 0.5,
            file: Some(f.clone()),
            delay: Duration::ZERO,
        };
        assert_eq!(c.skew(), 0.5, "no file yet: the fixed skew");
        std::fs::write(&f, "1250\n").expect("write");
        assert_eq!(c.skew(), 1.25);
        std::fs::write(&f, "-40").expect("write");
        assert_eq!(c.skew(), -0.04);
        std::fs::write(&f, "soon").expect("write");
        assert_eq!(c.skew(), 0.5, "not a number: the fixed skew");
    }
}
